package io.embednorm.kernels.cpu;

import io.embednorm.kernels.BFloat16;
import io.embednorm.kernels.Device;
import io.embednorm.kernels.ElementType;
import io.embednorm.kernels.Float16;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.NormalizationEngine;
import io.embednorm.kernels.RowBatch;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import java.util.Objects;

/**
 * The CPU engine: reads each row of a {@link RowBatch} into a per-thread scratch array (a bulk
 * copy, converting float16/bfloat16 to float32), normalizes it with {@link CpuKernels}, and writes
 * it back (float16/bfloat16 rounded once). Holds no resources; {@link #close()} does nothing.
 *
 * <p>Weight and bias lengths are checked against every row before anything is written, so a batch
 * that fails leaves its output untouched.
 */
public final class CpuEngine implements NormalizationEngine {

  @Override
  public Device device() {
    return Device.CPU;
  }

  @Override
  public String description() {
    return "cpu (java scalar)";
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(batch, "batch");
    if (normalization.hasWeight() || normalization.hasBias()) {
      for (int row = 0; row < batch.rows(); row++) {
        normalization.checkWidth(batch.firstRowIndex() + row, batch.rowWidth(row));
      }
    }
    switch (batch.type()) {
      case FLOAT32 -> normalizeFloat32(normalization, batch);
      case FLOAT64 -> normalizeFloat64(normalization, batch);
      case FLOAT16, BFLOAT16 -> normalizeSixteenBit(normalization, batch);
      default -> throw new IllegalStateException("Unknown element type " + batch.type());
    }
  }

  @Override
  public void close() {}

  @Override
  public String toString() {
    return description();
  }

  private static void normalizeFloat32(Normalization normalization, RowBatch batch) {
    // clear(): element indices count from index 0 of the buffer, whatever its position.
    FloatBuffer input = batch.input().clear().asFloatBuffer();
    FloatBuffer output = batch.output().clear().asFloatBuffer();
    RowScratch scratch = RowScratch.current();
    for (int row = 0; row < batch.rows(); row++) {
      int width = batch.rowWidth(row);
      if (width == 0) {
        continue;
      }
      int start = Math.toIntExact(batch.rowStart(row));
      float[] values = scratch.floats(width);
      input.get(start, values, 0, width);
      CpuKernels.normalizeRow(normalization, values, 0, values, 0, width);
      output.put(start, values, 0, width);
    }
  }

  private static void normalizeFloat64(Normalization normalization, RowBatch batch) {
    DoubleBuffer input = batch.input().clear().asDoubleBuffer();
    DoubleBuffer output = batch.output().clear().asDoubleBuffer();
    RowScratch scratch = RowScratch.current();
    for (int row = 0; row < batch.rows(); row++) {
      int width = batch.rowWidth(row);
      if (width == 0) {
        continue;
      }
      int start = Math.toIntExact(batch.rowStart(row));
      double[] values = scratch.doubles(width);
      input.get(start, values, 0, width);
      CpuKernels.normalizeRow(normalization, values, 0, values, 0, width);
      output.put(start, values, 0, width);
    }
  }

  /** float16 and bfloat16: load narrow, compute in float32, store narrow once. */
  private static void normalizeSixteenBit(Normalization normalization, RowBatch batch) {
    boolean half = batch.type() == ElementType.FLOAT16;
    ShortBuffer input = batch.input().clear().asShortBuffer();
    ShortBuffer output = batch.output().clear().asShortBuffer();
    RowScratch scratch = RowScratch.current();
    for (int row = 0; row < batch.rows(); row++) {
      int width = batch.rowWidth(row);
      if (width == 0) {
        continue;
      }
      int start = Math.toIntExact(batch.rowStart(row));
      short[] bits = scratch.shorts(width);
      float[] values = scratch.floats(width);
      input.get(start, bits, 0, width);
      if (half) {
        Float16.toFloats(bits, 0, values, 0, width);
      } else {
        BFloat16.toFloats(bits, 0, values, 0, width);
      }
      CpuKernels.normalizeRow(normalization, values, 0, values, 0, width);
      if (half) {
        Float16.fromFloats(values, 0, bits, 0, width);
      } else {
        BFloat16.fromFloats(values, 0, bits, 0, width);
      }
      output.put(start, bits, 0, width);
    }
  }
}
