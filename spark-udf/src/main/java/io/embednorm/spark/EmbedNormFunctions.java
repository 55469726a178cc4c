package io.embednorm.spark;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.spark.catalyst.EmbedNormExpression;
import io.embednorm.spark.catalyst.LpNormalizeExpression;
import io.embednorm.spark.catalyst.VectorNormExpression;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.DataTypes;

/**
 * The SQL functions for the Java and Scala DataFrame API, e.g. {@code
 * df.select(EmbedNormFunctions.rmsNorm(col("embedding")))}.
 *
 * <p>Each call builds the Catalyst expression directly, so it works without {@link
 * EmbedNormExtensions} installed; it needs a classic (not Spark Connect) session. Semantics, edge
 * cases and defaults are those of the SQL functions (docs/SEMANTICS.md, SQL functions): the input
 * is {@code array<float>} or {@code array<double>}, the result has the same element type, weight
 * and bias are rounded to it.
 */
public final class EmbedNormFunctions {
  private EmbedNormFunctions() {}

  /** {@code rms_norm(x)}: x / sqrt(mean(x²) + 1e-6). */
  public static Column rmsNorm(Column input) {
    return call(Op.RMS_NORM, input);
  }

  /** {@code rms_norm(x, eps)}: x / sqrt(mean(x²) + eps). */
  public static Column rmsNorm(Column input, double epsilon) {
    return call(Op.RMS_NORM, input, epsilon);
  }

  /** {@code rms_norm(x, eps, weight)}: x / sqrt(mean(x²) + eps) · weight. */
  public static Column rmsNorm(Column input, double epsilon, double[] weight) {
    return call(Op.RMS_NORM, input, epsilon, weight);
  }

  /** {@code layer_norm(x)}: (x − mean) / sqrt(variance + 1e-5). */
  public static Column layerNorm(Column input) {
    return call(Op.LAYER_NORM, input);
  }

  /** {@code layer_norm(x, eps)}: (x − mean) / sqrt(variance + eps). */
  public static Column layerNorm(Column input, double epsilon) {
    return call(Op.LAYER_NORM, input, epsilon);
  }

  /** {@code layer_norm(x, eps, gamma)}: (x − mean) / sqrt(variance + eps) · gamma. */
  public static Column layerNorm(Column input, double epsilon, double[] gamma) {
    return call(Op.LAYER_NORM, input, epsilon, gamma);
  }

  /** {@code layer_norm(x, eps, gamma, beta)}: (x − mean) / sqrt(variance + eps) · gamma + beta. */
  public static Column layerNorm(Column input, double epsilon, double[] gamma, double[] beta) {
    return call(Op.LAYER_NORM, input, epsilon, gamma, beta);
  }

  /** {@code softmax(x)}: exp(x − max) / Σ exp(x − max). */
  public static Column softmax(Column input) {
    return call(Op.SOFTMAX, input);
  }

  /** {@code log_softmax(x)}: x − max − log Σ exp(x − max). */
  public static Column logSoftmax(Column input) {
    return call(Op.LOG_SOFTMAX, input);
  }

  /** {@code l2_normalize(x)}: x / max(‖x‖₂, 1e-12). */
  public static Column l2Normalize(Column input) {
    return call(Op.L2_NORMALIZE, input);
  }

  /** {@code l2_normalize(x, eps)}: x / max(‖x‖₂, eps). */
  public static Column l2Normalize(Column input, double epsilon) {
    return call(Op.L2_NORMALIZE, input, epsilon);
  }

  /**
   * {@code lp_normalize(x, p)}: x / max(‖x‖_p, 1e-12) for p = 1, 2 or {@code
   * Double.POSITIVE_INFINITY}.
   *
   * @throws io.embednorm.engine.EmbedNormException for another p
   */
  public static Column lpNormalize(Column input, double p) {
    return lpNormalize(input, p, Op.lpNormalize(p).defaultEpsilon());
  }

  /** {@code lp_normalize(x, p, eps)}: x / max(‖x‖_p, eps). */
  public static Column lpNormalize(Column input, double p, double epsilon) {
    Op.lpNormalize(p);
    return ExpressionUtils.column(
        LpNormalizeExpression.create(
            List.of(ExpressionUtils.expression(input), literal(p), literal(epsilon))));
  }

  /** {@code vector_norm(x)}: ‖x‖₂ of each row, a float for {@code array<float>}. */
  public static Column vectorNorm(Column input) {
    return vectorNorm(input, 2);
  }

  /** {@code vector_norm(x, p)}: ‖x‖_p of each row for p = 1, 2 or infinity. */
  public static Column vectorNorm(Column input, double p) {
    Op.lpNormalize(p);
    return ExpressionUtils.column(
        VectorNormExpression.create(List.of(ExpressionUtils.expression(input), literal(p))));
  }

  /**
   * The op of {@code normalization} with its eps, weight and bias: for jobs whose op is chosen at
   * run time. A bias without a weight passes a weight of ones.
   */
  public static Column normalize(Column input, Normalization normalization) {
    Op op = normalization.op();
    List<Object> constants = new ArrayList<>();
    if (op.takesEpsilon()) {
      constants.add(normalization.epsilon());
    }
    double[] weight = normalization.weight();
    if (weight == null && normalization.hasBias()) {
      weight = new double[normalization.bias().length];
      java.util.Arrays.fill(weight, 1.0);
    }
    if (weight != null) {
      constants.add(weight);
    }
    if (normalization.hasBias()) {
      constants.add(normalization.bias());
    }
    return call(op, input, constants.toArray());
  }

  private static Column call(Op op, Column input, Object... constants) {
    List<Expression> arguments = new ArrayList<>();
    arguments.add(ExpressionUtils.expression(input));
    for (Object constant : constants) {
      arguments.add(literal(constant));
    }
    return ExpressionUtils.column(EmbedNormExpression.create(op, arguments));
  }

  private static Expression literal(Object constant) {
    if (constant instanceof double[]) {
      return Literal.create(
          UnsafeArrayData.fromPrimitiveArray((double[]) constant),
          DataTypes.createArrayType(DataTypes.DoubleType, false));
    }
    return Literal.create(constant, DataTypes.DoubleType);
  }
}
