package io.embednorm.jobs.internal;

import static org.apache.spark.sql.functions.expr;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Checks that normalized rows have the property their op promises (mean square 1 for RMSNorm, unit
 * norm for L2, probabilities summing to 1 for softmax, ...), using Spark's built-in functions only,
 * so that the check is independent of embednorm's code.
 */
public final class OutputCheck {
  /** The largest deviation accepted: far above float32 rounding, far below any real bug. */
  public static final double TOLERANCE = 1e-3;

  private OutputCheck() {}

  /** The outcome: rows checked, the largest deviation found, and what was measured. */
  public record Result(long rows, double maxDeviation, String property) {
    public boolean passed() {
      return maxDeviation <= TOLERANCE;
    }
  }

  /**
   * Measures the op's property on every non-empty row of {@code column}; a weight or bias changes
   * what is expected, so they are not supported here.
   */
  public static Result run(Dataset<Row> data, String column, Normalization normalization) {
    String y = "`" + column.replace("`", "``") + "`";
    String sum = "aggregate(" + y + ", 0D, (a, v) -> a + %s)";
    String squares = String.format(sum, "double(v) * double(v)");
    String deviation;
    String property;
    Op op = normalization.op();
    switch (op) {
      case RMS_NORM:
        deviation = "abs(" + squares + " / size(" + y + ") - 1)";
        property = "mean(y^2) = 1";
        break;
      case LAYER_NORM:
        String mean = String.format(sum, "double(v)") + " / size(" + y + ")";
        deviation = "greatest(abs(" + mean + "), abs(" + squares + " / size(" + y + ") - 1))";
        property = "mean(y) = 0 and mean(y^2) = 1";
        break;
      case SOFTMAX:
        deviation = "abs(" + String.format(sum, "double(v)") + " - 1)";
        property = "sum(y) = 1";
        break;
      case LOG_SOFTMAX:
        deviation = "abs(" + String.format(sum, "exp(double(v))") + " - 1)";
        property = "sum(exp(y)) = 1";
        break;
      case L1_NORMALIZE:
        deviation = "abs(" + String.format(sum, "abs(double(v))") + " - 1)";
        property = "sum(|y|) = 1";
        break;
      case LINF_NORMALIZE:
        deviation = "abs(aggregate(" + y + ", 0D, (a, v) -> greatest(a, abs(double(v)))) - 1)";
        property = "max(|y|) = 1";
        break;
      case L2_NORMALIZE:
      default:
        deviation = "abs(sqrt(" + squares + ") - 1)";
        property = "||y|| = 1";
        break;
    }
    Row result =
        data.where(expr(y + " IS NOT NULL AND size(" + y + ") > 1"))
            .selectExpr("count(*)", "max(" + deviation + ")")
            .first();
    long rows = result.getLong(0);
    double maxDeviation = result.isNullAt(1) ? 0 : result.getDouble(1);
    return new Result(rows, maxDeviation, property);
  }
}
