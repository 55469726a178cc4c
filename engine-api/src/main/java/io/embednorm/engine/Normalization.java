package io.embednorm.engine;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Objects;

/**
 * One op with its parameters: epsilon, and the optional weight (RMSNorm's w, LayerNorm's γ) and
 * bias (LayerNorm's β). Immutable and serializable, so that Spark can ship it inside generated
 * code.
 *
 * <p>Weight and bias are held in float64; {@link #floatWeight()} and {@link #floatBias()} give the
 * float32 copies used for float32, float16 and bfloat16 rows (as PyTorch, whose weight has the
 * input's dtype). Every value of both must be a finite number.
 *
 * <p>Messages call weight and bias by the names the caller gives with {@link
 * #withParameterNames(String, String)} (SQL's {@code gamma} and {@code beta}, a command line's
 * option), {@code weight} and {@code bias} by default.
 */
public final class Normalization implements Serializable {
  private static final long serialVersionUID = 2L;

  private final Op op;
  private final double epsilon;
  private final double[] weight;
  private final double[] bias;
  private final String weightName;
  private final String biasName;
  private transient volatile float[] floatWeight;
  private transient volatile float[] floatBias;

  private Normalization(
      Op op, double epsilon, double[] weight, double[] bias, String weightName, String biasName) {
    this.op = Objects.requireNonNull(op, "op");
    this.epsilon = epsilon;
    this.weight = weight;
    this.bias = bias;
    this.weightName = weightName;
    this.biasName = biasName;
  }

  /** The op with its default epsilon, no weight and no bias. */
  public static Normalization of(Op op) {
    return new Normalization(op, op.defaultEpsilon(), null, null, "weight", "bias");
  }

  /**
   * A copy whose messages call the weight {@code newWeightName} and the bias {@code newBiasName},
   * e.g. {@code gamma} and {@code beta} for SQL's {@code layer_norm}. Names do not take part in
   * {@link #equals(Object)}.
   */
  public Normalization withParameterNames(String newWeightName, String newBiasName) {
    return new Normalization(
        op,
        epsilon,
        weight,
        bias,
        Objects.requireNonNull(newWeightName, "newWeightName"),
        Objects.requireNonNull(newBiasName, "newBiasName"));
  }

  /** A copy with another epsilon; it must be finite and at least 0. */
  public Normalization withEpsilon(double newEpsilon) {
    if (!op.takesEpsilon()) {
      throw new EmbedNormException("Cannot configure " + op + ": it takes no eps");
    }
    if (!(newEpsilon >= 0) || Double.isInfinite(newEpsilon)) {
      throw new EmbedNormException(
          "Cannot configure " + op + ": eps must be a finite number >= 0, got " + newEpsilon);
    }
    return new Normalization(op, newEpsilon, weight, bias, weightName, biasName);
  }

  /**
   * A copy with a weight (one finite value per column), or without one when {@code newWeight} is
   * null.
   */
  public Normalization withWeight(double[] newWeight) {
    if (newWeight != null && !op.takesWeight()) {
      throw new EmbedNormException("Cannot configure " + op + ": it takes no " + weightName);
    }
    return new Normalization(
        op, epsilon, finiteCopy(weightName, newWeight), bias, weightName, biasName);
  }

  /**
   * A copy with a bias (one finite value per column), or without one when {@code newBias} is null.
   */
  public Normalization withBias(double[] newBias) {
    if (newBias != null && !op.takesBias()) {
      throw new EmbedNormException("Cannot configure " + op + ": it takes no " + biasName);
    }
    return new Normalization(
        op, epsilon, weight, finiteCopy(biasName, newBias), weightName, biasName);
  }

  /** The name messages give the weight, {@code weight} unless set otherwise. */
  public String weightName() {
    return weightName;
  }

  /** The name messages give the bias, {@code bias} unless set otherwise. */
  public String biasName() {
    return biasName;
  }

  public Op op() {
    return op;
  }

  /** The epsilon; NaN for softmax and log-softmax. */
  public double epsilon() {
    return epsilon;
  }

  public boolean hasWeight() {
    return weight != null;
  }

  public boolean hasBias() {
    return bias != null;
  }

  /** The weight, or null; callers must not modify it. */
  public double[] weight() {
    return weight;
  }

  /** The bias, or null; callers must not modify it. */
  public double[] bias() {
    return bias;
  }

  /**
   * The weight rounded to float32, or null; callers must not modify it.
   *
   * @throws EmbedNormException when a value is beyond the float32 range
   */
  public float[] floatWeight() {
    if (weight != null && floatWeight == null) {
      floatWeight = toFloats(weightName, weight);
    }
    return floatWeight;
  }

  /**
   * The bias rounded to float32, or null; callers must not modify it.
   *
   * @throws EmbedNormException when a value is beyond the float32 range
   */
  public float[] floatBias() {
    if (bias != null && floatBias == null) {
      floatBias = toFloats(biasName, bias);
    }
    return floatBias;
  }

  /**
   * Checks that weight and bias fit a row of {@code width} elements. Empty rows always fit (an
   * empty array normalizes to an empty array).
   *
   * @param rowIndex the row's index for the message, or -1 where it is not known
   */
  public void checkWidth(long rowIndex, int width) {
    if (width == 0) {
      return;
    }
    checkLength(weightName, weight, rowIndex, width);
    checkLength(biasName, bias, rowIndex, width);
  }

  private void checkLength(String what, double[] values, long rowIndex, int width) {
    if (values != null && values.length != width) {
      String row = rowIndex >= 0 ? "row " + rowIndex : "a row";
      throw new EmbedNormException(
          "Cannot apply "
              + op
              + " to "
              + row
              + ": "
              + what
              + " has "
              + values.length
              + " elements but the row has "
              + width);
    }
  }

  /**
   * A short description for logs and explain output, e.g. {@code rms_norm(eps=1.0E-6,
   * weight[768])}.
   */
  @Override
  public String toString() {
    StringBuilder text = new StringBuilder(op.sqlName()).append('(');
    if (op.takesEpsilon()) {
      text.append("eps=").append(epsilon);
    }
    if (weight != null) {
      text.append(", weight[").append(weight.length).append(']');
    }
    if (bias != null) {
      text.append(", bias[").append(bias.length).append(']');
    }
    return text.append(')').toString();
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof Normalization)) {
      return false;
    }
    Normalization that = (Normalization) other;
    return op == that.op
        && Double.compare(epsilon, that.epsilon) == 0
        && Arrays.equals(weight, that.weight)
        && Arrays.equals(bias, that.bias);
  }

  @Override
  public int hashCode() {
    return Objects.hash(op, epsilon, Arrays.hashCode(weight), Arrays.hashCode(bias));
  }

  /**
   * A copy of {@code values}, or null; a NaN or infinite value would turn every output element it
   * touches into NaN or infinity, so it is refused here rather than found in the results.
   */
  private double[] finiteCopy(String name, double[] values) {
    if (values == null) {
      return null;
    }
    double[] copy = values.clone();
    for (int i = 0; i < copy.length; i++) {
      if (!Double.isFinite(copy[i])) {
        throw new EmbedNormException(
            "Cannot configure "
                + op
                + ": "
                + name
                + " element at index "
                + i
                + " is "
                + copy[i]
                + "; it must be a finite number");
      }
    }
    return copy;
  }

  private float[] toFloats(String name, double[] values) {
    float[] result = new float[values.length];
    for (int i = 0; i < values.length; i++) {
      result[i] = (float) values[i];
      if (Float.isInfinite(result[i])) {
        throw new EmbedNormException(
            "Cannot apply "
                + op
                + " to float32 rows: "
                + name
                + " element at index "
                + i
                + " is "
                + values[i]
                + ", beyond the float32 range");
      }
    }
    return result;
  }
}
