package io.embednorm.engine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The five row-wise normalizations, with their SQL names and defaults (docs/SEMANTICS.md, Ops). */
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
  L2_NORMALIZE("l2_normalize", 1e-12, 0);

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

  @Override
  public String toString() {
    return sqlName;
  }
}
