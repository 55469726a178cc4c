package io.embednorm.engine.cpu;

import io.embednorm.engine.ArrayKernels;
import io.embednorm.engine.Normalization;

/** {@link ArrayKernels} over {@link CpuKernels}; found by ServiceLoader. */
public final class CpuArrayKernels implements ArrayKernels {

  @Override
  public void normalize(Normalization normalization, float[] values, int offset, int width) {
    CpuKernels.normalizeRow(normalization, values, offset, values, offset, width);
  }

  @Override
  public void normalize(Normalization normalization, double[] values, int offset, int width) {
    CpuKernels.normalizeRow(normalization, values, offset, values, offset, width);
  }

  @Override
  public String implementation() {
    return CpuKernels.implementation();
  }
}
