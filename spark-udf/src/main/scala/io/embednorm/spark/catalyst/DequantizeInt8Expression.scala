package io.embednorm.spark.catalyst

import io.embednorm.spark.internal.RowEncodings
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult.{TypeCheckFailure, TypeCheckSuccess}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types._

/**
 * `dequantize_int8(s)`: `q * scale` in float32 for each byte q of `s.values`, an `array<float>`;
 * `s` is a `struct<values: binary, scale: float>` as `quantize_int8` gives (fields by position). A
 * null struct, values or scale gives null.
 */
case class DequantizeInt8Expression(children: Seq[Expression])
    extends Expression
    with CodegenFallback {

  override def prettyName: String = DequantizeInt8Expression.NAME

  override def nullable: Boolean = true

  override def dataType: DataType = ArrayType(FloatType, containsNull = false)

  override def checkInputDataTypes(): TypeCheckResult = children match {
    case Seq(child) => child.dataType match {
      case StructType(Array(StructField(_, BinaryType, _, _), StructField(_, FloatType, _, _))) =>
        TypeCheckSuccess
      case other =>
        TypeCheckFailure(s"$prettyName takes a struct<values: binary, scale: float>, as " +
          s"quantize_int8 gives, but got ${other.sql}")
    }
    case _ =>
      TypeCheckFailure(s"$prettyName takes 1 argument, as in $prettyName(s), but got " +
        children.length)
  }

  override def eval(input: InternalRow): Any =
    RowEncodings.dequantizeInt8(children.head.eval(input).asInstanceOf[InternalRow])

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): DequantizeInt8Expression = copy(children = newChildren)
}

object DequantizeInt8Expression {
  val NAME = "dequantize_int8"
}
