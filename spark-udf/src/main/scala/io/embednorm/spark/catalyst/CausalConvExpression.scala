package io.embednorm.spark.catalyst

import io.embednorm.engine.ConvolutionKernel
import io.embednorm.spark.internal.CausalConvolutions
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckFailure
import org.apache.spark.sql.catalyst.expressions.{Expression, ImplicitCastInputTypes, Literal}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._

/**
 * SQL's `causal_conv(sequence, w [, eps])` (docs/SEMANTICS.md, Causal convolution): the RWKV
 * causal depthwise convolution of each sequence (`array<array<float>>`, steps × channels) with the
 * kernel w (`array<array<float>>`, channels × kernel steps, a constant or a column), eps 0 by
 * default; an `array<array<float>>` of the sequence's shape. A constant kernel is read once.
 * `eval` is the CPU row path ([[CausalConvolutions]]); the columnar operator takes a projected call
 * over a column with a constant kernel and eps and runs it a batch at a time
 * ([[io.embednorm.spark.execution.ColumnarProjection]]).
 *
 * `placementNote` is as [[EmbedNormExpression]]'s: the reason a call stays on the row path, in the
 * string form only.
 */
case class CausalConvExpression(children: Seq[Expression], placementNote: Option[String])
    extends Expression
    with ImplicitCastInputTypes
    with CodegenFallback {

  /** A call without a placement note, as the analyzer builds it. */
  def this(children: Seq[Expression]) = this(children, None)

  override def prettyName: String = CausalConvolutions.NAME

  override protected def stringArgs: Iterator[Any] = children.iterator

  override def toString: String =
    super.toString + placementNote.map(note => s" [$note]").getOrElse("")

  /** This call with `note` as its placement note, replacing any earlier one. */
  def withPlacementNote(note: String): CausalConvExpression = copy(placementNote = Some(note))

  override lazy val canonicalized: Expression =
    copy(children = children.map(_.canonicalized), placementNote = None)

  override def nullable: Boolean = true

  override def foldable: Boolean = false

  private val steps = ArrayType(ArrayType(FloatType))

  override def dataType: DataType = CausalConvolutions.RESULT_TYPE

  override def inputTypes: Seq[DataType] =
    children.indices.map(i => if (i < 2) steps else FloatType)

  /** The sequences. */
  def sequence: Expression = children.head

  /** The kernel w. */
  def kernel: Expression = children(1)

  /** eps; the literal 0 when left out. */
  def eps: Expression = if (children.length > 2) children(2) else Literal(0f)

  override def checkInputDataTypes(): TypeCheckResult = {
    if (children.length < 2 || children.length > 3) {
      TypeCheckFailure(
        s"${CausalConvolutions.NAME} takes 2 or 3 arguments, as in " +
          s"${CausalConvolutions.NAME}(sequence, w [, eps]), but got ${children.length}")
    } else {
      super.checkInputDataTypes()
    }
  }

  // a constant kernel, read once per expression instance (each task deserializes its own)
  @transient private lazy val constantKernel: Option[ConvolutionKernel] =
    if (children(1).foldable) {
      Some(CausalConvolutions.kernel(children(1).eval().asInstanceOf[ArrayData]))
    } else {
      None
    }

  override def eval(input: InternalRow): Any = {
    val sequence = children.head.eval(input).asInstanceOf[ArrayData]
    val epsValue = eps.eval(input)
    if (sequence == null || epsValue == null) {
      null
    } else {
      val kernel = constantKernel.getOrElse(
        CausalConvolutions.kernel(children(1).eval(input).asInstanceOf[ArrayData]))
      CausalConvolutions.convolve(sequence, kernel, epsValue.asInstanceOf[Float])
    }
  }

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): CausalConvExpression = copy(children = newChildren)
}
