package io.embednorm.spark.catalyst

import scala.util.control.NonFatal

import io.embednorm.engine.{EmbedNormException, Op}
import io.embednorm.spark.internal.VectorNorms
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.{DataTypeMismatch, TypeCheckFailure, TypeCheckSuccess}
import org.apache.spark.sql.catalyst.expressions.{Expression, ImplicitCastInputTypes, RuntimeReplaceable}
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.types._

/**
 * SQL's `lp_normalize(x, p [, eps])`: `l1_normalize`, `l2_normalize` or `linf_normalize` of `x`
 * for p = 1, 2 or infinity (docs/SEMANTICS.md, Ops). p is a constant number, or text such as
 * `'inf'`; `float('inf')` and `double('Infinity')` give infinity too. Analysis checks the
 * arguments and names the call `lp_normalize(...)` (column names, analyzed plans); the optimizer
 * then replaces it by its [[EmbedNormExpression]], which physical plans, the columnar operator and
 * `EXPLAIN` show as `l1_normalize(x)`.
 */
case class LpNormalizeExpression(children: Seq[Expression])
    extends RuntimeReplaceable
    with ImplicitCastInputTypes {

  override def prettyName: String = LpNormalizeExpression.NAME

  private def elementType: DataType = children.headOption.map(_.dataType) match {
    case Some(ArrayType(FloatType, _)) => FloatType
    case _ => DoubleType
  }

  /** x as `EmbedNormExpression` takes it; p as a number or as text; eps as a double. */
  override def inputTypes: Seq[DataType] = children.indices.map {
    case 0 => ArrayType(elementType)
    case 1 if children(1).dataType == StringType => StringType
    case _ => DoubleType
  }

  override def checkInputDataTypes(): TypeCheckResult = {
    if (children.length < 2 || children.length > 3) {
      TypeCheckFailure(
        s"${LpNormalizeExpression.NAME} takes 2 or 3 arguments, as in " +
          s"${LpNormalizeExpression.NAME}(x, p [, eps]), but got ${children.length}")
    } else {
      super.checkInputDataTypes() match {
        case TypeCheckSuccess if !children(1).foldable =>
          DataTypeMismatch(
            errorSubClass = "NON_FOLDABLE_INPUT",
            messageParameters = Map(
              "inputName" -> "`p`",
              "inputType" -> s"\"${inputTypes(1).simpleString}\"",
              "inputExpr" -> s"\"${toPrettySQL(children(1))}\""))
        case TypeCheckSuccess =>
          opOrFailure match {
            case Left(message) => TypeCheckFailure(message)
            case Right(_) => replacement.checkInputDataTypes()
          }
        case failure => failure
      }
    }
  }

  /** The p-norm op of the constant p, or why p is refused. */
  @transient private lazy val opOrFailure: Either[String, Op] =
    try {
      children(1).eval() match {
        case null =>
          Left(s"Cannot configure ${LpNormalizeExpression.NAME}: p must not be null")
        case p => Right(Op.lpNormalize(VectorNorms.order(LpNormalizeExpression.NAME, p)))
      }
    } catch {
      case exception: EmbedNormException => Left(exception.getMessage)
      case NonFatal(exception) =>
        Left(s"Cannot configure ${LpNormalizeExpression.NAME}: ${exception.getMessage}")
    }

  /** The op's call on x and eps; `l2_normalize` while p is not yet known to be valid. */
  override lazy val replacement: Expression =
    new EmbedNormExpression(opOrFailure.getOrElse(Op.L2_NORMALIZE), children.head +: children.drop(2))

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): LpNormalizeExpression = copy(children = newChildren)
}

object LpNormalizeExpression {
  val NAME = "lp_normalize"

  /** Builds the expression from Java, e.g. for the DataFrame functions. */
  def create(arguments: java.util.List[Expression]): LpNormalizeExpression = {
    import scala.jdk.CollectionConverters._
    LpNormalizeExpression(arguments.asScala.toSeq)
  }
}
