package io.embednorm.spark.catalyst

import io.embednorm.engine.Encoding
import io.embednorm.spark.internal.RowEncodings
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckFailure
import org.apache.spark.sql.catalyst.expressions.{Expression, ImplicitCastInputTypes}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._

/**
 * `quantize_int8(x)`, `quantize_binary(x)`, `to_float16(x)` or `to_bfloat16(x)`: the [[Encoding]]
 * of each `array<float>` (other numeric arrays are cast to it), docs/SEMANTICS.md (Encodings).
 * `quantize_int8` gives `struct<values: binary, scale: float>`, the others `binary`. A null array,
 * or one with a null element, gives null; an empty array empty bytes (int8 scale 0).
 *
 * Over an embednorm call on an `array<float>` column (`quantize_int8(l2_normalize(x))`) the
 * columnar operator runs the call and the encoding in one pass; elsewhere the row path encodes the
 * array it is given.
 */
case class EncodeExpression(encoding: Encoding, children: Seq[Expression])
    extends Expression
    with ImplicitCastInputTypes
    with CodegenFallback {

  override def prettyName: String = EncodeExpression.sqlName(encoding)

  override protected def stringArgs: Iterator[Any] = children.iterator

  override def nullable: Boolean = true

  override def inputTypes: Seq[DataType] = children.map(_ => ArrayType(FloatType))

  override def dataType: DataType = EncodeExpression.dataType(encoding)

  override def checkInputDataTypes(): TypeCheckResult =
    if (children.length != 1) {
      TypeCheckFailure(s"$prettyName takes 1 argument, as in $prettyName(x), but got " +
        children.length)
    } else {
      super.checkInputDataTypes()
    }

  override def eval(input: InternalRow): Any =
    RowEncodings.encode(encoding, children.head.eval(input).asInstanceOf[ArrayData])

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): EncodeExpression = copy(children = newChildren)
}

object EncodeExpression {

  /** The SQL name of `encoding`'s function. */
  def sqlName(encoding: Encoding): String = encoding match {
    case Encoding.INT8 => "quantize_int8"
    case Encoding.BINARY => "quantize_binary"
    case Encoding.FLOAT16 => "to_float16"
    case Encoding.BFLOAT16 => "to_bfloat16"
  }

  /** `struct<values: binary, scale: float>` for int8, `binary` for the others. */
  def dataType(encoding: Encoding): DataType =
    if (encoding == Encoding.INT8) Int8Type else BinaryType

  val Int8Type: StructType = StructType(Seq(
    StructField("values", BinaryType, nullable = false),
    StructField("scale", FloatType, nullable = false)))

  /** Builds the expression from Java. */
  def create(encoding: Encoding, arguments: java.util.List[Expression]): EncodeExpression = {
    import scala.jdk.CollectionConverters._
    EncodeExpression(encoding, arguments.asScala.toSeq)
  }
}
