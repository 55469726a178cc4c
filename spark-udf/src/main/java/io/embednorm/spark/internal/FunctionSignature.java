package io.embednorm.spark.internal;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The SQL argument list of each op (docs/SEMANTICS.md, SQL functions): {@code x}, then {@code eps}
 * for ops that take one, then the weight (RMSNorm's {@code weight}, LayerNorm's {@code gamma}) and
 * bias ({@code beta}). Every argument after {@code x} is optional and must be a constant.
 */
public final class FunctionSignature {
  /** Position of the input array. */
  public static final int INPUT = 0;

  /** Position of epsilon, for ops that take one. */
  public static final int EPSILON = 1;

  /** Position of the weight (RMSNorm's weight, LayerNorm's gamma), for ops that take one. */
  public static final int WEIGHT = 2;

  /** Position of the bias (LayerNorm's beta), for ops that take one. */
  public static final int BIAS = 3;

  private static final String BIAS_NAME = "beta";

  private FunctionSignature() {}

  /** The argument names in order, e.g. {@code [x, eps, gamma, beta]} for {@code layer_norm}. */
  public static List<String> parameterNames(Op op) {
    List<String> names = new ArrayList<>();
    names.add("x");
    if (op.takesEpsilon()) {
      names.add("eps");
    }
    if (op.takesWeight()) {
      names.add(weightName(op));
    }
    if (op.takesBias()) {
      names.add(BIAS_NAME);
    }
    return Collections.unmodifiableList(names);
  }

  /**
   * The op without parameters yet, whose messages call the weight and bias as SQL does, e.g. {@code
   * layer_norm: gamma has 5 elements but the row has 768}.
   */
  public static Normalization namedNormalization(Op op) {
    return Normalization.of(op).withParameterNames(weightName(op), BIAS_NAME);
  }

  private static String weightName(Op op) {
    return op == Op.LAYER_NORM ? "gamma" : "weight";
  }

  /** The most arguments the function accepts; the least is always 1. */
  public static int maximumArguments(Op op) {
    return parameterNames(op).size();
  }

  /** The argument name at {@code position}, or {@code argument N} beyond the last one. */
  public static String parameterName(Op op, int position) {
    List<String> names = parameterNames(op);
    return position < names.size() ? names.get(position) : "argument " + (position + 1);
  }

  /** The accepted forms in one line, e.g. {@code rms_norm(x [, eps [, weight]])}. */
  public static String form(Op op) {
    List<String> names = parameterNames(op);
    StringBuilder form = new StringBuilder(op.sqlName()).append('(').append(names.get(0));
    for (int i = 1; i < names.size(); i++) {
      form.append(" [, ").append(names.get(i));
    }
    form.append("]".repeat(names.size() - 1));
    return form.append(')').toString();
  }

  /**
   * The analysis message for a call with the wrong number of arguments, e.g. {@code rms_norm takes
   * 1 to 3 arguments, as in rms_norm(x [, eps [, weight]]), but got 4}.
   */
  public static String wrongArgumentCountMessage(Op op, int actual) {
    int maximum = maximumArguments(op);
    String expected = maximum == 1 ? "exactly 1 argument" : "1 to " + maximum + " arguments";
    return op.sqlName() + " takes " + expected + ", as in " + form(op) + ", but got " + actual;
  }
}
