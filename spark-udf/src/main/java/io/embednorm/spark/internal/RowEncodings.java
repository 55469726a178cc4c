package io.embednorm.spark.internal;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.RowEncoder;
import java.nio.ByteBuffer;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * The row path of the encoding functions: encodes one {@code array<float>} with {@link RowEncoder}
 * ({@code quantize_int8} as a {@code (values, scale)} row), and {@code dequantize_int8}.
 */
public final class RowEncodings {
  private RowEncodings() {}

  /** The encoding of {@code row}; null for a null row or one with a null element. */
  public static Object encode(Encoding encoding, ArrayData row) {
    if (row == null) {
      return null;
    }
    int width = row.numElements();
    for (int i = 0; i < width; i++) {
      if (row.isNullAt(i)) {
        return null;
      }
    }
    byte[] bytes = new byte[(int) encoding.rowBytes(width)];
    float scale =
        RowEncoder.encode(encoding, row.toFloatArray(), 0, width, ByteBuffer.wrap(bytes), 0);
    if (encoding.hasScales()) {
      return new GenericInternalRow(new Object[] {bytes, scale});
    }
    return bytes;
  }

  /** {@code q * scale} in float32 for each byte; null where the struct, values or scale is. */
  public static ArrayData dequantizeInt8(InternalRow quantized) {
    if (quantized == null || quantized.isNullAt(0) || quantized.isNullAt(1)) {
      return null;
    }
    byte[] values = quantized.getBinary(0);
    float scale = quantized.getFloat(1);
    float[] result = new float[values.length];
    for (int i = 0; i < values.length; i++) {
      result[i] = values[i] * scale;
    }
    return UnsafeArrayData.fromPrimitiveArray(result);
  }
}
