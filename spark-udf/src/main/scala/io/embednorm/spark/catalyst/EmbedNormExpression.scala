package io.embednorm.spark.catalyst

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.embednorm.engine.{EmbedNormException, Normalization, Op}
import io.embednorm.spark.internal.{DevicePolicy, FunctionSignature, RowNormalizer}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.{DataTypeMismatch, TypeCheckFailure, TypeCheckSuccess}
import org.apache.spark.sql.catalyst.expressions.{Expression, ImplicitCastInputTypes}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.catalyst.util.{toPrettySQL, ArrayData}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/**
 * One of the five row-wise normalizations (`rms_norm`, `layer_norm`, `softmax`, `log_softmax`,
 * `l2_normalize`) applied to an array column.
 *
 * The first child is the input array (`array<float>` or `array<double>`; other numeric arrays are
 * implicitly cast to `array<double>`); the optional others are constants: `eps`, then the weight
 * (RMSNorm's weight, LayerNorm's gamma) and bias (LayerNorm's beta), cast to arrays of the input's
 * element type. A null constant fails analysis. The result has the input's element type; it is null
 * for a null array or an array with a null element.
 *
 * Deliberately not `RuntimeReplaceable` and never foldable, so that it stays in physical plans,
 * where the columnar GPU rule can find and replace it; its CPU path is `eval` and `doGenCode`, both
 * calling [[io.embednorm.spark.internal.RowNormalizer]].
 *
 * `placementNote` says where the call runs and why, for `EXPLAIN` output: the columnar rule sets it
 * (with `spark.embednorm.explain`) on calls it leaves on the CPU row path, so that the reason shows
 * next to the call, e.g. `rms_norm(x#1) [CPU row path: ...]`, while the call stays in its
 * `ProjectExec` and keeps whole-stage code generation. It changes the string form only: the
 * canonical form drops it, so annotated and plain calls are semantically equal (exchange and
 * subquery reuse, subexpression elimination) and evaluate identically.
 */
case class EmbedNormExpression(
    op: Op,
    children: Seq[Expression],
    placementNote: Option[String])
    extends Expression
    with ImplicitCastInputTypes {

  /** A call without a placement note, as the analyzer builds it. */
  def this(op: Op, children: Seq[Expression]) = this(op, children, None)

  override def prettyName: String = op.sqlName

  override protected def stringArgs: Iterator[Any] = children.iterator

  override def toString: String =
    super.toString + placementNote.map(note => s" [$note]").getOrElse("")

  /** This call with `note` as its placement note, replacing any earlier one. */
  def withPlacementNote(note: String): EmbedNormExpression = copy(placementNote = Some(note))

  override lazy val canonicalized: Expression =
    copy(children = children.map(_.canonicalized), placementNote = None)

  override def nullable: Boolean = true

  override def foldable: Boolean = false

  /** `FloatType` for `array<float>` input, otherwise `DoubleType`. */
  def elementType: DataType = children.headOption.map(_.dataType) match {
    case Some(ArrayType(FloatType, _)) => FloatType
    case _ => DoubleType
  }

  override def dataType: DataType = ArrayType(elementType, containsNull = false)

  /**
   * `array<float>` input stays as it is; any other input is cast to `array<double>` where Spark
   * allows it implicitly (numeric arrays, also under ANSI mode). Concrete types rather than a
   * `TypeCollection`, which is `private[sql]` in Spark 4.
   */
  override def inputTypes: Seq[DataType] = children.indices.map { position =>
    if (position == FunctionSignature.EPSILON) DoubleType else ArrayType(elementType)
  }

  override def checkInputDataTypes(): TypeCheckResult = {
    if (children.isEmpty || children.length > FunctionSignature.maximumArguments(op)) {
      TypeCheckFailure(FunctionSignature.wrongArgumentCountMessage(op, children.length))
    } else {
      super.checkInputDataTypes() match {
        case TypeCheckSuccess => checkConstants()
        case failure => failure
      }
    }
  }

  private def checkConstants(): TypeCheckResult = {
    val nonConstant = children.indices.drop(1).find(position => !children(position).foldable)
    nonConstant match {
      case Some(position) =>
        DataTypeMismatch(
          errorSubClass = "NON_FOLDABLE_INPUT",
          messageParameters = Map(
            "inputName" -> s"`${FunctionSignature.parameterName(op, position)}`",
            "inputType" -> s"\"${inputTypes(position).sql}\"",
            "inputExpr" -> s"\"${toPrettySQL(children(position))}\""))
      case None =>
        normalizationOrFailure match {
          case Left(message) => TypeCheckFailure(message)
          case Right(_) => TypeCheckSuccess
        }
    }
  }

  /** The op with its constant parameters, built once per expression instance. */
  @transient private lazy val normalizationOrFailure: Either[String, Normalization] =
    try {
      Right(buildNormalization())
    } catch {
      case exception: EmbedNormException => Left(exception.getMessage)
      case NonFatal(exception) =>
        Left(s"Cannot configure ${op.sqlName}: ${exception.getMessage}")
    }

  /** The op with its constant parameters; valid once analysis has succeeded. */
  def normalization: Normalization = normalizationOrFailure match {
    case Right(normalization) => normalization
    case Left(message) => throw new EmbedNormException(message)
  }

  private def buildNormalization(): Normalization = {
    var result = FunctionSignature.namedNormalization(op)
    if (children.length > FunctionSignature.EPSILON) {
      result = result.withEpsilon(constantEpsilon())
    }
    if (children.length > FunctionSignature.WEIGHT) {
      result = result.withWeight(constantArray(FunctionSignature.WEIGHT))
    }
    if (children.length > FunctionSignature.BIAS) {
      result = result.withBias(constantArray(FunctionSignature.BIAS))
    }
    result
  }

  private def constantEpsilon(): Double = children(FunctionSignature.EPSILON).eval() match {
    case null => throw nullConstant(FunctionSignature.EPSILON)
    case value: Number => value.doubleValue()
    case other => throw new EmbedNormException(s"Cannot configure ${op.sqlName}: eps is $other")
  }

  private def constantArray(position: Int): Array[Double] = {
    val child = children(position)
    val values = child.eval().asInstanceOf[ArrayData]
    if (values == null) {
      throw nullConstant(position)
    }
    val nullIndex = (0 until values.numElements()).find(values.isNullAt)
    nullIndex.foreach { index =>
      throw new EmbedNormException(
        s"Cannot configure ${op.sqlName}: ${FunctionSignature.parameterName(op, position)} " +
          s"has a null element at index $index")
    }
    child.dataType match {
      case ArrayType(FloatType, _) => values.toFloatArray().map(_.toDouble)
      case _ => values.toDoubleArray()
    }
  }

  private def nullConstant(position: Int): EmbedNormException = {
    val name = FunctionSignature.parameterName(op, position)
    new EmbedNormException(
      s"Cannot configure ${op.sqlName}: $name must not be null; leave it out for the default")
  }

  /** Whether rows are `array<float>`; valid once analysis has succeeded. */
  @transient private lazy val floatRows: Boolean = elementType == FloatType

  /**
   * Applies `spark.embednorm.device` where the expression is compiled or first evaluated: the
   * check rule of the extension does so at analysis, but DataFrame functions also work in sessions
   * without it.
   */
  @transient private var deviceChecked = false

  private def checkDevice(): Unit = if (!deviceChecked) {
    DevicePolicy.check(SQLConf.get, op.sqlName)
    deviceChecked = true
  }

  override def eval(input: InternalRow): Any = {
    checkDevice()
    val row = children.head.eval(input).asInstanceOf[ArrayData]
    if (row == null) {
      null
    } else if (floatRows) {
      RowNormalizer.normalizeFloats(normalization, row)
    } else {
      RowNormalizer.normalizeDoubles(normalization, row)
    }
  }

  override protected def doGenCode(context: CodegenContext, result: ExprCode): ExprCode = {
    checkDevice()
    val normalizationReference =
      context.addReferenceObj("normalization", normalization, classOf[Normalization].getName)
    val input = children.head.genCode(context)
    val method = if (floatRows) "normalizeFloats" else "normalizeDoubles"
    val call = s"${classOf[RowNormalizer].getName}.$method($normalizationReference, ${input.value})"
    result.copy(code = code"""
      ${input.code}
      ${CodeGenerator.javaType(dataType)} ${result.value} = ${input.isNull} ? null : $call;
      boolean ${result.isNull} = ${result.value} == null;
      """)
  }

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): EmbedNormExpression = copy(children = newChildren)
}

object EmbedNormExpression {

  /** Builds the expression from Java, e.g. for the DataFrame functions. */
  def create(op: Op, arguments: java.util.List[Expression]): EmbedNormExpression =
    new EmbedNormExpression(op, arguments.asScala.toSeq)
}
