package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * {@link CudaEngine#normalizeEncoded} on one batch of host rows: synchronous copies in and out (as
 * {@link CudaEngine#normalize} does for host buffers), the fused kernel between.
 */
final class EncodedBatch {
  private EncodedBatch() {}

  static void run(
      CudaEngine engine, Normalization normalization, RowBatch batch, EncodedRows target) {
    int rows = batch.rows();
    Encoding encoding = target.encoding();
    long first = batch.rowStart(0);
    int maxWidth = 0;
    boolean aligned = true;
    long[] valueStarts = batch.isRagged() ? new long[rows + 1] : null;
    for (int row = 0; row < rows; row++) {
      int width = batch.rowWidth(row);
      normalization.checkWidth(batch.firstRowIndex() + row, width);
      maxWidth = Math.max(maxWidth, width);
      aligned &= width % 4 == 0 && (batch.rowStart(row) - first) % 4 == 0;
      if (valueStarts != null) {
        valueStarts[row + 1] = valueStarts[row] + encoding.rowBytes(width);
      }
    }
    long elements = batch.elementCount();
    long inputBytes = elements * Float.BYTES;
    long valueBytes = EncodedRows.valueBytes(encoding, batch);
    engine.context().makeCurrent();
    CUstream stream = new CUstream();
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    try (DeviceBuffer input = new DeviceBuffer(inputBytes, "the input rows");
        DeviceBuffer values = new DeviceBuffer(valueBytes, "the encoded rows");
        DeviceBuffer scales =
            encoding.hasScales() ? new DeviceBuffer(4L * rows, "the int8 scales") : null;
        DeviceBuffer offsets = CudaEngine.deviceOffsets(batch, first);
        DeviceBuffer starts = valueStarts == null ? null : upload(valueStarts, "value offsets");
        DeviceBuffer weight = DeviceBuffer.parameter(normalization.weight(), ElementType.FLOAT32);
        DeviceBuffer bias = DeviceBuffer.parameter(normalization.bias(), ElementType.FLOAT32)) {
      if (inputBytes > 0) {
        ByteBuffer source = CudaEngine.slice(batch.input(), first, inputBytes, ElementType.FLOAT32);
        cuMemcpyHtoD(input.pointer(), Pointer.to(source), inputBytes);
      }
      if (engine.poisonsOutputs()) {
        cuMemsetD8(values.pointer(), (byte) 0xa5, Math.max(1, valueBytes));
        if (scales != null) {
          cuMemsetD8(scales.pointer(), (byte) 0xff, 4L * rows);
        }
      }
      EncodeKernels.of(engine.context())
          .launch(
              normalization,
              encoding,
              new EncodeKernels.Rows(
                  input.pointer(),
                  CudaEngine.pointerOrNull(offsets),
                  CudaEngine.pointerOrNull(starts),
                  rows,
                  maxWidth,
                  aligned),
              values.pointer(),
              CudaEngine.pointerOrNull(scales),
              CudaEngine.pointerOrNull(weight),
              CudaEngine.pointerOrNull(bias),
              stream);
      cuStreamSynchronize(stream);
      if (valueBytes > 0) {
        cuMemcpyDtoH(Pointer.to(prefix(target.values(), valueBytes)), values.pointer(), valueBytes);
      }
      if (scales != null) {
        cuMemcpyDtoH(Pointer.to(prefix(target.scales(), 4L * rows)), scales.pointer(), 4L * rows);
      }
    } finally {
      cuStreamDestroy(stream);
    }
  }

  private static DeviceBuffer upload(long[] values, String what) {
    DeviceBuffer buffer = new DeviceBuffer((long) values.length * Long.BYTES, what);
    cuMemcpyHtoD(buffer.pointer(), Pointer.to(values), (long) values.length * Long.BYTES);
    return buffer;
  }

  /** {@code buffer}'s first {@code bytes} bytes, from index 0, as a buffer of its own. */
  private static ByteBuffer prefix(ByteBuffer buffer, long bytes) {
    ByteBuffer view = buffer.duplicate();
    view.clear();
    view.limit(Math.toIntExact(bytes));
    return view.slice();
  }
}
