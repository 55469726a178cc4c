package io.embednorm.engine.cpu;

import java.util.Arrays;

/**
 * Per-thread arrays that hold one row while it is converted and normalized, so that the hot path
 * allocates nothing per row. Rows wider than {@link #RETAINED_ELEMENTS} get arrays of their own
 * that are not kept, so that one huge row does not pin its memory to a pooled thread for good.
 */
final class RowScratch {
  static final int RETAINED_ELEMENTS = 1 << 18;

  /** How many arrays of per-row scalars {@link #rowScalars} holds. */
  static final int ROW_SCALAR_ARRAYS = 6;

  private static final ThreadLocal<RowScratch> CURRENT = ThreadLocal.withInitial(RowScratch::new);

  private float[] floats = new float[0];
  private double[] doubles = new double[0];
  private short[] shorts = new short[0];
  private double[] fallbackValues = new double[0];
  private double[] fallbackWeight = new double[0];
  private double[] fallbackBias = new double[0];
  private final float[][] rowScalars = new float[ROW_SCALAR_ARRAYS][FloatRowKernels.GROUP_ROWS];
  private final double[][] rowDoubles = new double[2][FloatRowKernels.GROUP_ROWS];
  private final float[][] logarithmParts = new float[2][FloatRowKernels.GROUP_ROWS];
  private float[] lanes = new float[64 * 8];
  private float[] squareLanes = new float[64 * 8];
  private float[] blockSums = new float[64];
  private float[] exponentials = new float[0];
  private float[] ones = new float[0];
  private float[] negativeZeros = new float[0];
  private final float[] exponentArguments = new float[FloatExponential.PIECE];
  private final float[] exponentMantissas = new float[FloatExponential.PIECE];
  private final SumTree sumTree = new SumTree();

  private RowScratch() {}

  /** This thread's scratch. */
  static RowScratch current() {
    return CURRENT.get();
  }

  /** A float array of at least {@code length} elements for the engine's rows. */
  float[] floats(int length) {
    if (floats.length >= length) {
      return floats;
    }
    float[] array = new float[length];
    if (length <= RETAINED_ELEMENTS) {
      floats = array;
    }
    return array;
  }

  /** A double array of at least {@code length} elements for the engine's rows. */
  double[] doubles(int length) {
    if (doubles.length >= length) {
      return doubles;
    }
    double[] array = new double[length];
    if (length <= RETAINED_ELEMENTS) {
      doubles = array;
    }
    return array;
  }

  /**
   * At least {@code length} elements of 1, to be read only: LayerNorm's γ where it has none but has
   * β. x · 1 is x for every float, so the SIMD passes' loops with γ and β give the bits of skipping
   * it, and serve β alone.
   */
  float[] ones(int length) {
    float[] array = filled(ones, length, 1f);
    if (length <= RETAINED_ELEMENTS) {
      ones = array;
    }
    return array;
  }

  /**
   * At least {@code length} elements of −0, to be read only: LayerNorm's β where it has none but
   * has γ (x + −0 is x for every float, +0 included).
   */
  float[] negativeZeros(int length) {
    float[] array = filled(negativeZeros, length, -0f);
    if (length <= RETAINED_ELEMENTS) {
      negativeZeros = array;
    }
    return array;
  }

  /**
   * {@code kept} if it holds at least {@code length} elements, else a new array of {@code value}.
   */
  private static float[] filled(float[] kept, int length, float value) {
    if (kept.length >= length) {
      return kept;
    }
    float[] array = new float[length];
    Arrays.fill(array, value);
    return array;
  }

  /** A short array of at least {@code length} elements for float16 and bfloat16 rows. */
  short[] shorts(int length) {
    if (shorts.length >= length) {
      return shorts;
    }
    short[] array = new short[length];
    if (length <= RETAINED_ELEMENTS) {
      shorts = array;
    }
    return array;
  }

  /**
   * One of {@link #ROW_SCALAR_ARRAYS} arrays of {@link FloatRowKernels#GROUP_ROWS} per-row scalars
   * (sums, scales, centers) that the row kernels keep between the passes over a group of rows.
   */
  float[] rowScalars(int index) {
    return rowScalars[index];
  }

  /**
   * One of two arrays of {@link FloatRowKernels#GROUP_ROWS} (a multiple of four) doubles, for the
   * SIMD passes' per-row arithmetic in float64.
   */
  double[] rowDoubles(int index) {
    return rowDoubles[index];
  }

  /**
   * One of two arrays of {@link FloatRowKernels#GROUP_ROWS} floats: the SIMD logarithms' reduced
   * arguments and exponents, between their two loops.
   */
  float[] logarithmParts(int index) {
    return logarithmParts[index];
  }

  /**
   * At least {@code length} floats for the exponentials of a group of rows (or one row), which
   * log_softmax's passes store before summing them (its output may be its input, so not there).
   */
  float[] exponentials(int length) {
    if (exponentials.length >= length) {
      return exponentials;
    }
    float[] array = new float[length];
    if (length <= RETAINED_ELEMENTS) {
      exponentials = array;
    }
    return array;
  }

  /**
   * {@link FloatExponential#PIECE} floats: scratch of {@link FloatExponential#exponentialsAndSums}.
   */
  float[] exponentArguments() {
    return exponentArguments;
  }

  /**
   * {@link FloatExponential#PIECE} floats: scratch of {@link FloatExponential#exponentialsAndSums}.
   */
  float[] exponentMantissas() {
    return exponentMantissas;
  }

  /**
   * At least {@code length} floats for the SIMD passes' partial sums: eight lanes for every block
   * of every row of a group.
   */
  float[] lanes(int length) {
    if (lanes.length >= length) {
      return lanes;
    }
    float[] array = new float[length];
    if (length <= RETAINED_ELEMENTS) {
      lanes = array;
    }
    return array;
  }

  /** At least {@code length} floats: one sum for every block of every row of a group. */
  float[] blockSums(int length) {
    if (blockSums.length >= length) {
      return blockSums;
    }
    float[] array = new float[length];
    if (length <= RETAINED_ELEMENTS) {
      blockSums = array;
    }
    return array;
  }

  /** As {@link #lanes}, a second array: the squares of a pass that sums values and squares. */
  float[] squareLanes(int length) {
    if (squareLanes.length >= length) {
      return squareLanes;
    }
    float[] array = new float[length];
    if (length <= RETAINED_ELEMENTS) {
      squareLanes = array;
    }
    return array;
  }

  /** The blocks of FloatSums' reduction of rows of {@code width} elements. */
  SumTree sumTree(int width) {
    return sumTree.forWidth(width);
  }

  /** The row of a float32 row recomputed in float64. */
  double[] fallbackValues(int length) {
    if (fallbackValues.length >= length) {
      return fallbackValues;
    }
    double[] array = new double[length];
    if (length <= RETAINED_ELEMENTS) {
      fallbackValues = array;
    }
    return array;
  }

  /** The widened float32 weight of a row recomputed in float64. */
  double[] fallbackWeight(int length) {
    if (fallbackWeight.length >= length) {
      return fallbackWeight;
    }
    double[] array = new double[length];
    if (length <= RETAINED_ELEMENTS) {
      fallbackWeight = array;
    }
    return array;
  }

  /** The widened float32 bias of a row recomputed in float64. */
  double[] fallbackBias(int length) {
    if (fallbackBias.length >= length) {
      return fallbackBias;
    }
    double[] array = new double[length];
    if (length <= RETAINED_ELEMENTS) {
      fallbackBias = array;
    }
    return array;
  }
}
