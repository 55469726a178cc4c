package io.embednorm.engine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The row-wise normalizations, with their names and defaults (docs/SEMANTICS.md, Ops). The three
 * p-norm normalizations are also SQL's {@code lp_normalize(x, p)}: {@link #lpNormalize(double)}.
 */
public enum Op {
  /** y = x / sqrt(mean(x²) + eps) · w. */
  RMS_NORM("rms_norm", 1e-6, 1),
  /** y = (x − μ) / sqrt(σ² + eps) · γ + β, σ² biased. */
  LAYER_NORM("layer_norm", 1e-5, 2),
  /** y = exp(x − max) / Σ exp(x − max). */
  SOFTMAX("softmax", Double.NaN, 0),
  /** y = x − max − log Σ exp(x − max). */
  LOG_SOFTMAX("log_softmax", Double.NaN, 0),
  /** y = x / max(‖x‖₂, eps). */
  L2_NORMALIZE("l2_normalize", 1e-12, 0),
  /** y = x / max(‖x‖₁, eps), ‖x‖₁ = Σ|x|. */
  L1_NORMALIZE("l1_normalize", 1e-12, 0),
  /** y = x / max(‖x‖∞, eps), ‖x‖∞ = max |x|. */
  LINF_NORMALIZE("linf_normalize", 1e-12, 0);

  private final String sqlName;
  private final double defaultEpsilon;
  private final int affineParameters;

  Op(String sqlName, double defaultEpsilon, int affineParameters) {
    this.sqlName = sqlName;
    this.defaultEpsilon = defaultEpsilon;
    this.affineParameters = affineParameters;
  }

  /** The name used in SQL, on the command line and in messages, e.g. {@code rms_norm}. */
  public String sqlName() {
    return sqlName;
  }

  /** Whether the op takes an epsilon at all (softmax and log-softmax do not). */
  public boolean takesEpsilon() {
    return !Double.isNaN(defaultEpsilon);
  }

  /** The default epsilon; NaN for ops without one. */
  public double defaultEpsilon() {
    return defaultEpsilon;
  }

  /** Whether the op accepts a per-column weight (RMSNorm's w, LayerNorm's γ). */
  public boolean takesWeight() {
    return affineParameters >= 1;
  }

  /** Whether the op accepts a per-column bias (LayerNorm's β). */
  public boolean takesBias() {
    return affineParameters >= 2;
  }

  /** Parses a SQL name such as {@code rms_norm} (case-insensitive). */
  public static Op fromName(String name) {
    String wanted = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    for (Op op : values()) {
      if (op.sqlName.equals(wanted)) {
        return op;
      }
    }
    throw new EmbedNormException(
        "Cannot parse op '"
            + name
            + "': expected one of "
            + Arrays.stream(values()).map(Op::sqlName).collect(Collectors.joining(", ")));
  }

  /**
   * The normalization by the p-norm for p = 1, 2 or +∞: {@link #L1_NORMALIZE}, {@link
   * #L2_NORMALIZE} or {@link #LINF_NORMALIZE}, as SQL's {@code lp_normalize(x, p)}.
   *
   * @throws EmbedNormException for any other p
   */
  public static Op lpNormalize(double p) {
    if (p == 1) {
      return L1_NORMALIZE;
    }
    if (p == 2) {
      return L2_NORMALIZE;
    }
    if (p == Double.POSITIVE_INFINITY) {
      return LINF_NORMALIZE;
    }
    throw new EmbedNormException(
        "Cannot configure lp_normalize: p must be 1, 2 or infinity, got " + p);
  }

  /** The p of a p-norm normalization (1, 2 or +∞); NaN for the other ops. */
  public double normOrder() {
    return switch (this) {
      case L1_NORMALIZE -> 1;
      case L2_NORMALIZE -> 2;
      case LINF_NORMALIZE -> Double.POSITIVE_INFINITY;
      default -> Double.NaN;
    };
  }

  @Override
  public String toString() {
    return sqlName;
  }
}
