package io.embednorm.spark.execution

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.embednorm.engine.{ConvolutionKernel, Normalization}
import io.embednorm.spark.catalyst.{CausalConvExpression, EmbedNormExpression, EncodeExpression, VectorNormExpression}
import io.embednorm.spark.internal.{CausalConvolutions, ColumnChain, ColumnConvolution}
import io.embednorm.spark.internal.SparkArrays.ElementWidth
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Cast, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.util.{toPrettySQL, ArrayData}
import org.apache.spark.sql.types.{ArrayType, DataType, DoubleType, FloatType}

/** One output column of the columnar operator. */
sealed trait OutputColumn extends Serializable

/** A column of the child's batches, passed through as it is (the same column vector). */
case class PassThrough(childOrdinal: Int) extends OutputColumn

/** The result of `chain`, the `chainIndex`-th chain of the operator. */
case class Normalized(chainIndex: Int, chain: ColumnChain) extends OutputColumn

/** The result of `convolution`, the `convolutionIndex`-th `causal_conv` of the operator. */
case class Convolved(convolutionIndex: Int, convolution: ColumnConvolution) extends OutputColumn

/**
 * Decides whether a projection can run in the columnar operator, and if not, why. It can when
 * every projected expression is an attribute of the child (or an alias of one), an embednorm
 * function applied, possibly nested (`l2_normalize(rms_norm(x))`), to an attribute of
 * `array<float>` or `array<double>` (constant arguments are guaranteed by analysis), or
 * `causal_conv` of an `array<array<float>>` attribute with a constant kernel and eps.
 */
object ColumnarProjection {

  /** Whether `expression` uses an embednorm function anywhere. */
  def usesEmbedNorm(expression: Expression): Boolean =
    expression.exists {
      case _: EmbedNormExpression | _: CausalConvExpression => true
      case _ => false
    }

  /** The output columns in order, or the reason the projection stays on the row path. */
  def plan(projectList: Seq[NamedExpression], childOutput: Seq[Attribute])
      : Either[String, Seq[OutputColumn]] = {
    var chains = 0
    var convolutions = 0
    val columns = projectList.map { projected =>
      val expression = projected match {
        case Alias(child, _) => child
        case other => other
      }
      expression match {
        case attribute: Attribute =>
          ordinal(attribute, childOutput).map(PassThrough(_))
        case function: EmbedNormExpression =>
          chain(function, childOutput).map { found =>
            chains += 1
            Normalized(chains - 1, found)
          }
        case encode: EncodeExpression =>
          encodedChain(encode, childOutput).map { found =>
            chains += 1
            Normalized(chains - 1, found)
          }
        case call: CausalConvExpression =>
          convolution(call, childOutput).map { found =>
            convolutions += 1
            Convolved(convolutions - 1, found)
          }
        case norm: VectorNormExpression =>
          Left(s"${toPrettySQL(norm)} gives one number a row, which the columnar operator does " +
            "not produce")
        case other if usesEmbedNorm(other) =>
          Left(s"${toPrettySQL(other)} applies another function to an embednorm result, which the " +
            "columnar operator does not evaluate")
        case other =>
          Left(s"${toPrettySQL(other)} is neither a column nor an embednorm function")
      }
    }
    columns.collectFirst { case Left(reason) => reason } match {
      case Some(reason) => Left(reason)
      case None if chains + convolutions == 0 =>
        Left("it projects no embednorm function directly")
      case None => Right(columns.collect { case Right(column) => column })
    }
  }

  /** `quantize_int8(l2_normalize(x))` and the like: the call's chain, encoded in its last pass. */
  private def encodedChain(encode: EncodeExpression, childOutput: Seq[Attribute])
      : Either[String, ColumnChain] = encode.children.head match {
    case inner: EmbedNormExpression =>
      chain(inner, childOutput).flatMap { found =>
        if (found.width() == ElementWidth.FLOAT) Right(found.encoded(encode.encoding))
        else Left(s"${encode.prettyName} takes float32 rows, but ${found.inputName()} is " +
          "array<double>")
      }
    case other =>
      Left(s"the input of ${encode.prettyName} is ${describeInput(other)}, not an embednorm " +
        "call on an array<float> column (alone, an encoding runs on the row path)")
  }

  private def chain(outer: EmbedNormExpression, childOutput: Seq[Attribute])
      : Either[String, ColumnChain] = {
    var steps = List(outer.normalization)
    var input = outer.children.head
    while (input.isInstanceOf[EmbedNormExpression]) {
      val inner = input.asInstanceOf[EmbedNormExpression]
      steps = inner.normalization :: steps
      input = inner.children.head
    }
    input match {
      case attribute: Attribute =>
        val width = attribute.dataType match {
          case ArrayType(FloatType, _) => Some(ElementWidth.FLOAT)
          case ArrayType(DoubleType, _) => Some(ElementWidth.DOUBLE)
          case _ => None
        }
        width match {
          case Some(elementWidth) =>
            ordinal(attribute, childOutput).map { position =>
              new ColumnChain(position, attribute.name, elementWidth, steps.asJava)
            }
          case None =>
            Left(s"the input of ${outer.prettyName}, ${attribute.name}, is " +
              s"${attribute.dataType.sql}, not array<float> or array<double>")
        }
      case other =>
        Left(s"the input of ${outer.prettyName} is ${describeInput(other)}, not a column " +
          "(the columnar operator takes array<float> or array<double> columns)")
    }
  }

  /**
   * `causal_conv(x, w [, eps])` over an `array<array<float>>` column `x` with a constant kernel and
   * eps. A kernel or eps that is null (every result null) or that the row path refuses stays on
   * the row path, which gives those results and errors as it does.
   */
  private def convolution(call: CausalConvExpression, childOutput: Seq[Attribute])
      : Either[String, ColumnConvolution] = {
    val name = call.prettyName
    call.sequence match {
      case attribute: Attribute if !isSequences(attribute.dataType) =>
        Left(s"the input of $name, ${attribute.name}, is ${attribute.dataType.sql}, not " +
          "array<array<float>>")
      case attribute: Attribute =>
        if (!call.kernel.foldable) {
          Left(s"the kernel of $name, ${describeInput(call.kernel)}, is not a constant (the " +
            "columnar operator takes a constant kernel)")
        } else if (!call.eps.foldable) {
          Left(s"eps of $name, ${describeInput(call.eps)}, is not a constant (the columnar " +
            "operator takes a constant eps)")
        } else {
          constants(call).flatMap { case (kernel, eps) =>
            ordinal(attribute, childOutput).map { position =>
              ColumnConvolution.of(position, attribute.name, kernel, eps)
            }
          }
        }
      case other =>
        Left(s"the input of $name is ${describeInput(other)}, not a column (the columnar " +
          "operator takes array<array<float>> columns)")
    }
  }

  private def isSequences(dataType: DataType): Boolean =
    dataType match {
      case ArrayType(ArrayType(FloatType, _), _) => true
      case _ => false
    }

  /** The constant kernel and eps of `call`, or why the operator leaves it to the row path. */
  private def constants(call: CausalConvExpression)
      : Either[String, (ConvolutionKernel, Float)] = {
    val name = call.prettyName
    try {
      val kernel = CausalConvolutions.kernel(call.kernel.eval().asInstanceOf[ArrayData])
      val eps = call.eps.eval()
      if (kernel == null || eps == null) {
        Left(s"the kernel or eps of $name is null or holds a null, which makes every result null")
      } else {
        Right((kernel, eps.asInstanceOf[Float]))
      }
    } catch {
      case NonFatal(refused) => Left(s"the kernel of $name is refused: ${refused.getMessage}")
    }
  }

  /** Spark's pretty SQL leaves casts out; an implicit cast is the reason here, so say it. */
  private def describeInput(input: Expression): String = input match {
    case cast: Cast => s"${toPrettySQL(cast.child)} cast to ${cast.dataType.sql}"
    case other => toPrettySQL(other)
  }

  private def ordinal(attribute: Attribute, childOutput: Seq[Attribute]): Either[String, Int] = {
    val position = childOutput.indexWhere(_.exprId == attribute.exprId)
    if (position < 0) Left(s"${attribute.name} is not a column of the projection's input")
    else Right(position)
  }

  /** The functions of each chain and where they run, for explain output. */
  def describe(columns: Seq[OutputColumn], placement: String): String = {
    val chains = columns.collect {
      case Normalized(_, chain) => s"${chain.functions()} over ${chain.inputName()}"
      case Convolved(_, convolution) => convolution.describe()
    }
    chains.mkString("embednorm runs ", "; ", s" $placement")
  }

  /** The placement note of a call left on the CPU row path, e.g. `CPU row path: <reason>`. */
  def rowPathNote(reason: String): String = s"CPU row path: $reason"

  private[execution] def steps(chain: ColumnChain): Seq[Normalization] = chain.steps().asScala.toSeq
}
