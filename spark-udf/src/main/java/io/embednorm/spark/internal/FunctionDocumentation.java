package io.embednorm.spark.internal;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Op;
import io.embednorm.spark.catalyst.CausalConvExpression;
import io.embednorm.spark.catalyst.DequantizeInt8Expression;
import io.embednorm.spark.catalyst.EmbedNormExpression;
import io.embednorm.spark.catalyst.EncodeExpression;
import io.embednorm.spark.catalyst.LpNormalizeExpression;
import io.embednorm.spark.catalyst.VectorNormExpression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;

/**
 * The {@link ExpressionInfo} of each SQL function, shown by {@code DESCRIBE FUNCTION EXTENDED}.
 *
 * <p>Texts follow Spark's format: {@code _FUNC_} stands for the name; arguments start with {@code
 * "\n Arguments:\n"} and examples with {@code "\n Examples:\n"}, each ending in {@code "\n "}; the
 * group and source must be among the values Spark's constructor accepts.
 */
public final class FunctionDocumentation {
  /** The release that introduced the functions. */
  public static final String SINCE = "0.1.0";

  /** One of Spark's function groups ({@code ExpressionInfo.validGroups}). */
  private static final String GROUP = "array_funcs";

  /**
   * One of Spark's sources ({@code ExpressionInfo.validSources}): the functions are registered as
   * session system functions, so they are documented as built in.
   */
  private static final String SOURCE = "built-in";

  private static final String INPUT_ARGUMENT =
      "      * x - an array<float> or array<double> (other numeric arrays are cast to"
          + " array<double>); the result has its element type. A null array, or one with a null"
          + " element, gives null; an empty array gives an empty array.\n";

  private FunctionDocumentation() {}

  /** The documentation of {@code op}'s SQL function. */
  public static ExpressionInfo describe(Op op) {
    return info(EmbedNormExpression.class, op.sqlName(), usage(op), arguments(op), examples(op));
  }

  /** The documentation of {@code lp_normalize(x, p [, eps])}. */
  public static ExpressionInfo describeLpNormalize() {
    String arguments =
        "\n    Arguments:\n"
            + INPUT_ARGUMENT
            + "      * p - the norm: 1, 2 or infinity (float('inf'), 'inf'), a constant.\n"
            + "      * eps - a finite constant >= 0; default 1.0E-12. A row of zeros stays zeros;"
            + " with eps 0 it is NaN.\n  ";
    StringBuilder examples = new StringBuilder("\n    Examples:\n");
    example(examples, "_FUNC_(array(3.0f, -4.0f), 1)", "[0.42857143,-0.5714286]");
    example(examples, "_FUNC_(array(3.0f, -4.0f), 2)", "[0.6,-0.8]");
    example(examples, "_FUNC_(array(3.0f, -4.0f), float('inf'))", "[0.75,-1.0]");
    examples.append("  ");
    return info(
        LpNormalizeExpression.class,
        LpNormalizeExpression.NAME(),
        "_FUNC_(x, p [, eps]) - Divides each array by its p-norm, p = 1, 2 or infinity: x /"
            + " max(norm_p(x), eps), as PyTorch's normalize; l1_normalize, l2_normalize or"
            + " linf_normalize by p.",
        arguments,
        examples.toString());
  }

  /** The documentation of {@code vector_norm(x [, p])}. */
  public static ExpressionInfo describeVectorNorm() {
    String arguments =
        "\n    Arguments:\n"
            + "      * x - an array<float> or array<double> (other numeric arrays are cast to"
            + " array<double>). A null array, or one with a null element, gives null; an empty"
            + " array gives 0.\n"
            + "      * p - the norm: 1, 2 (the default) or infinity (float('inf'), 'inf'); a"
            + " constant or a column (a null p gives null).\n  ";
    StringBuilder examples = new StringBuilder("\n    Examples:\n");
    example(examples, "_FUNC_(array(3.0f, -4.0f))", "5.0");
    example(examples, "_FUNC_(array(3.0f, -4.0f), 1)", "7.0");
    example(examples, "_FUNC_(array(3.0D, -4.0D), float('inf'))", "4.0");
    examples.append("  ");
    return info(
        VectorNormExpression.class,
        VectorNormExpression.NAME(),
        "_FUNC_(x [, p]) - Returns the p-norm of each array, p = 1, 2 or infinity: sum(abs(x)),"
            + " sqrt(sum(x^2)) or max(abs(x)), computed in double; a float for array<float>, a"
            + " double otherwise.",
        arguments,
        examples.toString());
  }

  public static ExpressionInfo describeCausalConv() {
    String arguments =
        "\n    Arguments:\n"
            + "      * sequence - an array<array<float>>: T steps of C channels each (k[t][c], the"
            + " token-embedding layout). A null sequence, step or element gives null; an empty"
            + " sequence gives an empty one; a step of another width than C fails the query.\n"
            + "      * w - the kernel, an array<array<float>>: C channels of T_w >= T weights each"
            + " (w[c][j], the RWKV article's layout); the weight for lag L = t - u is"
            + " w[c][T_w - 1 - L]. A constant (over a column, with a constant eps, the call then"
            + " runs in the columnar operator on spark.embednorm.device, a batch at a time) or a"
            + " column (the CPU row path, row by row).\n"
            + "      * eps - a float added to every output (default 0).\n  ";
    StringBuilder examples = new StringBuilder("\n    Examples:\n");
    example(
        examples,
        "_FUNC_(array(array(1.0f), array(2.0f)), array(array(10.0f, 1.0f)))",
        "[[1.0], [12.0]]");
    examples.append("  ");
    return info(
        CausalConvExpression.class,
        CausalConvolutions.NAME,
        "_FUNC_(sequence, w [, eps]) - Returns the causal depthwise convolution of each sequence"
            + " (RWKV): out[t][c] = eps + sum over u <= t of w[c][T_w - 1 - (t - u)] * k[u][c],"
            + " summed in float32.",
        arguments,
        examples.toString());
  }

  /** The text of an encoding function ({@code quantize_int8}, {@code to_float16}, ...). */
  public static ExpressionInfo describeEncoding(Encoding encoding) {
    String name = EncodeExpression.sqlName(encoding);
    String arguments =
        "\n    Arguments:\n"
            + "      * x - an array<float> (other numeric arrays are cast to it), or an embednorm"
            + " call on one, as in "
            + name
            + "(l2_normalize(x)): the columnar operator then runs both in one pass. A null array,"
            + " or one with a null element, gives null; an empty array gives empty bytes.\n  ";
    String usage;
    String example;
    switch (encoding) {
      case INT8:
        usage =
            "_FUNC_(x) - Returns struct<values: binary, scale: float>: scale = max(abs(x)) / 127"
                + " and one signed byte a element, round-half-even(x / scale), both in float32. A"
                + " row of zeros gives scale 0; a row with NaN or infinity scale NaN; its bytes"
                + " are then 0.";
        example = "_FUNC_(array(1.0f, -0.5f)).scale";
        break;
      case BINARY:
        usage =
            "_FUNC_(x) - Returns binary: one bit a element, 1 where x >= 0 (-0.0 too; NaN gives"
                + " 0), bit i % 8 of byte i / 8 for element i, unused bits 0.";
        example = "length(_FUNC_(array(1.0f, -2.0f, 3.0f)))";
        break;
      default:
        usage =
            "_FUNC_(x) - Returns binary: each element rounded to "
                + encoding.optionName()
                + " (to nearest, ties to even), 2 bytes little-endian, the bytes of an Arrow "
                + encoding.optionName()
                + " buffer.";
        example = "length(_FUNC_(array(1.0f, -2.0f, 3.0f)))";
        break;
    }
    StringBuilder examples = new StringBuilder("\n    Examples:\n");
    example(
        examples,
        example,
        encoding == Encoding.INT8 ? "0.007874016" : encoding == Encoding.BINARY ? "1" : "6");
    examples.append("  ");
    return info(EncodeExpression.class, name, usage, arguments, examples.toString());
  }

  /** The text of {@code dequantize_int8}. */
  public static ExpressionInfo describeDequantizeInt8() {
    StringBuilder examples = new StringBuilder("\n    Examples:\n");
    example(examples, "_FUNC_(quantize_int8(array(1.0f, -0.5f)))", "[1.0,-0.503937]");
    examples.append("  ");
    return info(
        DequantizeInt8Expression.class,
        DequantizeInt8Expression.NAME(),
        "_FUNC_(s) - Returns array<float>: q * scale in float32 for each signed byte q of"
            + " s.values, for s a struct<values: binary, scale: float> as quantize_int8 gives.",
        "\n    Arguments:\n"
            + "      * s - a struct<values: binary, scale: float>; a null s, values or scale gives"
            + " null.\n  ",
        examples.toString());
  }

  private static String usage(Op op) {
    String form = FunctionSignature.form(op).replace(op.sqlName() + "(", "_FUNC_(");
    return form + " - " + summary(op);
  }

  private static String summary(Op op) {
    switch (op) {
      case RMS_NORM:
        return "Normalizes each array by its root mean square: x / sqrt(mean(x^2) + eps) * weight,"
            + " as PyTorch's rms_norm.";
      case LAYER_NORM:
        return "Normalizes each array to zero mean and unit variance: (x - mean) / sqrt(var + eps)"
            + " * gamma + beta, with the biased variance, as PyTorch's layer_norm.";
      case SOFTMAX:
        return "Returns exp(x - max) / sum(exp(x - max)) of each array, as PyTorch's softmax.";
      case LOG_SOFTMAX:
        return "Returns x - max - log(sum(exp(x - max))) of each array, as PyTorch's"
            + " log_softmax.";
      case L2_NORMALIZE:
        return "Divides each array by its Euclidean norm: x / max(norm2(x), eps), as PyTorch's"
            + " normalize.";
      case L1_NORMALIZE:
        return "Divides each array by its l1 norm: x / max(sum(abs(x)), eps), as PyTorch's"
            + " normalize with p = 1; lp_normalize(x, 1).";
      case LINF_NORMALIZE:
        return "Divides each array by its largest magnitude: x / max(max(abs(x)), eps), as"
            + " PyTorch's normalize with p = inf; lp_normalize(x, float('inf')).";
      default:
        throw new IllegalArgumentException("No documentation for " + op);
    }
  }

  private static String arguments(Op op) {
    StringBuilder text = new StringBuilder("\n    Arguments:\n").append(INPUT_ARGUMENT);
    if (op.takesEpsilon()) {
      text.append("      * eps - a finite constant >= 0 added for numerical stability; default ")
          .append(op.defaultEpsilon())
          .append(".\n");
    }
    if (op.takesWeight()) {
      text.append("      * ")
          .append(FunctionSignature.parameterName(op, FunctionSignature.WEIGHT))
          .append(
              " - a constant array with one finite scale per element of x; default all ones. Its"
                  + " length must equal each row's.\n");
    }
    if (op.takesBias()) {
      text.append(
          "      * beta - a constant array with one finite shift per element of x; default all"
              + " zeros. Its length must equal each row's.\n");
    }
    return text.append("  ").toString();
  }

  private static String examples(Op op) {
    StringBuilder text = new StringBuilder("\n    Examples:\n");
    switch (op) {
      case RMS_NORM:
        example(text, "_FUNC_(array(3.0f, 4.0f))", "[0.8485281,1.1313708]");
        example(
            text, "_FUNC_(array(3.0f, 4.0f), 1e-6, array(2.0f, 0.5f))", "[1.6970562,0.5656854]");
        break;
      case LAYER_NORM:
        example(text, "_FUNC_(array(1.0f, 2.0f))", "[-0.99998,0.99998]");
        example(
            text,
            "_FUNC_(array(1.0f, 2.0f), 1e-5, array(2.0f, 2.0f), array(1.0f, 1.0f))",
            "[-0.99996,2.99996]");
        break;
      case SOFTMAX:
        example(text, "_FUNC_(array(1.0f, 2.0f, 3.0f))", "[0.09003057,0.24472848,0.66524094]");
        break;
      case LOG_SOFTMAX:
        example(text, "_FUNC_(array(0.0f, 0.0f))", "[-0.6931472,-0.6931472]");
        break;
      case L2_NORMALIZE:
        example(text, "_FUNC_(array(3.0f, 4.0f))", "[0.6,0.8]");
        break;
      case L1_NORMALIZE:
        example(text, "_FUNC_(array(3.0f, -4.0f))", "[0.42857143,-0.5714286]");
        break;
      case LINF_NORMALIZE:
        example(text, "_FUNC_(array(3.0f, -4.0f))", "[0.75,-1.0]");
        break;
      default:
        throw new IllegalArgumentException("No examples for " + op);
    }
    return text.append("  ").toString();
  }

  private static void example(StringBuilder text, String call, String result) {
    text.append("      > SELECT ").append(call).append(";\n       ").append(result).append('\n');
  }

  /** The function's text with this project's group, version and source. */
  private static ExpressionInfo info(
      Class<?> expression, String name, String usage, String arguments, String examples) {
    return new ExpressionInfo(
        expression.getName(), null, name, usage, arguments, examples, "", GROUP, SINCE, "", SOURCE);
  }
}
