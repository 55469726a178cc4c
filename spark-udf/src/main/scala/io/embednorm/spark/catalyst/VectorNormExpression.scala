package io.embednorm.spark.catalyst

import scala.util.control.NonFatal

import io.embednorm.engine.EmbedNormException
import io.embednorm.spark.internal.VectorNorms
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.{TypeCheckFailure, TypeCheckSuccess}
import org.apache.spark.sql.catalyst.expressions.{Expression, ImplicitCastInputTypes, Literal}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._

/**
 * SQL's `vector_norm(x [, p])`: the l1, l2 or l_inf norm of each row, p 2 by default
 * (docs/SEMANTICS.md, Ops; [[VectorNorms]] computes it). One number a row: `float` for
 * `array<float>`, `double` otherwise (other numeric arrays are cast to `array<double>`). p may be
 * a column, as in Spark 4.2's `vector_norm`; a null p or row, or a row holding a null, gives null;
 * a constant p other than 1, 2 or infinity fails analysis, a column's fails the row. Runs on the
 * CPU row path only: the columnar operator produces arrays.
 */
case class VectorNormExpression(children: Seq[Expression])
    extends Expression
    with ImplicitCastInputTypes {

  override def prettyName: String = VectorNormExpression.NAME

  override def nullable: Boolean = true

  override def foldable: Boolean = false

  private def floatRows: Boolean = children.headOption.map(_.dataType) match {
    case Some(ArrayType(FloatType, _)) => true
    case _ => false
  }

  override def dataType: DataType = if (floatRows) FloatType else DoubleType

  override def inputTypes: Seq[DataType] = children.indices.map {
    case 0 => ArrayType(dataType)
    case _ if children(1).dataType == StringType => StringType
    case _ => DoubleType
  }

  /** p, 2 when left out. */
  private def order: Expression = if (children.length > 1) children(1) else Literal(2.0)

  override def checkInputDataTypes(): TypeCheckResult = {
    if (children.isEmpty || children.length > 2) {
      TypeCheckFailure(
        s"${VectorNormExpression.NAME} takes 1 or 2 arguments, as in " +
          s"${VectorNormExpression.NAME}(x [, p]), but got ${children.length}")
    } else {
      super.checkInputDataTypes() match {
        case TypeCheckSuccess if order.foldable => checkConstantOrder()
        case other => other
      }
    }
  }

  private def checkConstantOrder(): TypeCheckResult =
    try {
      Option(order.eval()).foreach(p => VectorNorms.order(VectorNormExpression.NAME, p))
      TypeCheckSuccess
    } catch {
      case exception: EmbedNormException => TypeCheckFailure(exception.getMessage)
      case NonFatal(exception) => TypeCheckFailure(exception.getMessage)
    }

  override def eval(input: InternalRow): Any = {
    val row = children.head.eval(input).asInstanceOf[ArrayData]
    val p = order.eval(input)
    if (row == null || p == null) {
      null
    } else if (floatRows) {
      VectorNorms.ofFloats(row, p)
    } else {
      VectorNorms.ofDoubles(row, p)
    }
  }

  override protected def doGenCode(context: CodegenContext, result: ExprCode): ExprCode = {
    val row = children.head.genCode(context)
    val p = order.genCode(context)
    val boxed = if (floatRows) "Float" else "Double"
    val method = if (floatRows) "ofFloats" else "ofDoubles"
    val norm = context.freshName("norm")
    // Janino boxes no primitive by a cast: p goes as a java.lang.Double, or as the text it is.
    val boxedOrder =
      if (order.dataType == StringType) p.value.toString else s"java.lang.Double.valueOf(${p.value})"
    val call = s"${classOf[VectorNorms].getName}.$method(${row.value}, $boxedOrder)"
    result.copy(code = code"""
      ${row.code}
      ${p.code}
      java.lang.$boxed $norm = ${row.isNull} || ${p.isNull} ? null : $call;
      boolean ${result.isNull} = $norm == null;
      ${CodeGenerator.javaType(dataType)} ${result.value} =
          ${result.isNull} ? ${CodeGenerator.defaultValue(dataType)} : $norm.${CodeGenerator.javaType(dataType)}Value();
      """)
  }

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): VectorNormExpression = copy(children = newChildren)
}

object VectorNormExpression {
  val NAME = "vector_norm"

  /** Builds the expression from Java, e.g. for the DataFrame functions. */
  def create(arguments: java.util.List[Expression]): VectorNormExpression = {
    import scala.jdk.CollectionConverters._
    VectorNormExpression(arguments.asScala.toSeq)
  }
}
