package io.embednorm.spark.execution

import scala.jdk.CollectionConverters._

import io.embednorm.engine.Normalization
import io.embednorm.spark.catalyst.{EmbedNormExpression, EncodeExpression, VectorNormExpression}
import io.embednorm.spark.internal.ColumnChain
import io.embednorm.spark.internal.SparkArrays.ElementWidth
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Cast, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.types.{ArrayType, DoubleType, FloatType}

/** One output column of the columnar operator. */
sealed trait OutputColumn extends Serializable

/** A column of the child's batches, passed through as it is (the same column vector). */
case class PassThrough(childOrdinal: Int) extends OutputColumn

/** The result of `chain`, the `chainIndex`-th chain of the operator. */
case class Normalized(chainIndex: Int, chain: ColumnChain) extends OutputColumn

/**
 * Decides whether a projection can run in the columnar operator, and if not, why. It can when
 * every projected expression is an attribute of the child (or an alias of one), or an embednorm
 * function applied, possibly nested (`l2_normalize(rms_norm(x))`), to an attribute of
 * `array<float>` or `array<double>`. Constant arguments are guaranteed by analysis.
 */
object ColumnarProjection {

  /** Whether `expression` uses an embednorm function anywhere. */
  def usesEmbedNorm(expression: Expression): Boolean =
    expression.exists(_.isInstanceOf[EmbedNormExpression])

  /** The output columns in order, or the reason the projection stays on the row path. */
  def plan(projectList: Seq[NamedExpression], childOutput: Seq[Attribute])
      : Either[String, Seq[OutputColumn]] = {
    var chains = 0
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
      case None if chains == 0 => Left("it projects no embednorm function directly")
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
    val chains = columns.collect { case Normalized(_, chain) =>
      s"${chain.functions()} over ${chain.inputName()}"
    }
    chains.mkString("embednorm runs ", "; ", s" $placement")
  }

  /** The placement note of a call left on the CPU row path, e.g. `CPU row path: <reason>`. */
  def rowPathNote(reason: String): String = s"CPU row path: $reason"

  private[execution] def steps(chain: ColumnChain): Seq[Normalization] = chain.steps().asScala.toSeq
}
