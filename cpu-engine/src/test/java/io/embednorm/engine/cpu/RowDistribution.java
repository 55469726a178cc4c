package io.embednorm.engine.cpu;

import java.util.Random;

/** Value distributions for random rows: ordinary, badly conditioned, and at the range ends. */
public enum RowDistribution {
  NORMAL {
    @Override
    public double next(Random random) {
      return random.nextGaussian();
    }
  },
  /** Mean 1e6, spread ±0.5: naive E[x²] − E[x]² loses everything here in float32. */
  LARGE_MEAN {
    @Override
    public double next(Random random) {
      return 1e6 + random.nextDouble() - 0.5;
    }
  },
  /** Squares overflow float32. */
  HUGE {
    @Override
    public double next(Random random) {
      return random.nextGaussian() * 1e30;
    }
  },
  /** Squares underflow float32. */
  TINY {
    @Override
    public double next(Random random) {
      return random.nextGaussian() * 1e-30;
    }
  },
  /** Both signs, magnitudes from 1e-4 to 1e4. */
  MIXED_MAGNITUDES {
    @Override
    public double next(Random random) {
      double magnitude = Math.pow(10, random.nextDouble() * 8 - 4);
      return random.nextBoolean() ? magnitude : -magnitude;
    }
  },
  /**
   * Normal values but the first eight, which sit 100 above: LayerNorm's shift (their mean) is then
   * far from the row's mean, and the row takes the second pass of LayerNormStatistics.
   */
  FAR_FIRST_ELEMENTS {
    @Override
    public double next(Random random) {
      return random.nextGaussian();
    }

    @Override
    public float[] floats(Random random, int width) {
      float[] values = super.floats(random, width);
      for (int i = 0; i < Math.min(8, width); i++) {
        values[i] += 100f;
      }
      return values;
    }

    @Override
    public double[] doubles(Random random, int width) {
      double[] values = super.doubles(random, width);
      for (int i = 0; i < Math.min(8, width); i++) {
        values[i] += 100;
      }
      return values;
    }
  };

  public abstract double next(Random random);

  public float[] floats(Random random, int width) {
    float[] values = new float[width];
    for (int i = 0; i < width; i++) {
      values[i] = (float) next(random);
    }
    return values;
  }

  public double[] doubles(Random random, int width) {
    double[] values = new double[width];
    for (int i = 0; i < width; i++) {
      values[i] = next(random);
    }
    return values;
  }
}
