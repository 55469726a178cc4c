package io.embednorm.kernels.cpu;

import io.embednorm.kernels.Device;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.NormalizationEngine;
import io.embednorm.kernels.RowBatch;

/**
 * The CPU engine: reads each row of a {@link RowBatch} into a per-thread scratch array (a bulk
 * copy, converting float16/bfloat16 to float32), normalizes it with {@link CpuKernels}, and writes
 * it back. Holds no resources; {@link #close()} does nothing.
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
    throw new UnsupportedOperationException("TODO: implemented by the CPU kernels work");
  }

  @Override
  public void close() {}
}
