package io.embednorm.spark;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Op;
import io.embednorm.spark.catalyst.CausalConvExpression;
import io.embednorm.spark.catalyst.DequantizeInt8Expression;
import io.embednorm.spark.catalyst.DeviceCheckRule;
import io.embednorm.spark.catalyst.EmbedNormExpression;
import io.embednorm.spark.catalyst.EncodeExpression;
import io.embednorm.spark.catalyst.LpNormalizeExpression;
import io.embednorm.spark.catalyst.VectorNormExpression;
import io.embednorm.spark.execution.EmbedNormColumnarRule;
import io.embednorm.spark.internal.CausalConvolutions;
import io.embednorm.spark.internal.FunctionDocumentation;
import io.embednorm.spark.internal.SessionFunctionIdentifiers;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.runtime.BoxedUnit;

/**
 * Registers the SQL functions ({@code rms_norm}, {@code layer_norm}, {@code softmax}, {@code
 * log_softmax}, {@code l2_normalize}, {@code l1_normalize}, {@code linf_normalize}, {@code
 * lp_normalize}, {@code vector_norm}, {@code causal_conv}, the encodings {@code quantize_int8},
 * {@code quantize_binary}, {@code to_float16}, {@code to_bfloat16} and {@code dequantize_int8})
 * with a session, except a name Spark has built in, which stays Spark's ({@code vector_norm} from
 * Spark 4.2 on):
 *
 * <pre>{@code
 * spark.sql.extensions=io.embednorm.spark.EmbedNormExtensions
 * }</pre>
 *
 * <p>The functions are session system functions: {@code SHOW FUNCTIONS} lists them, {@code DESCRIBE
 * FUNCTION EXTENDED} shows their usage and examples, and temporary views may use them.
 *
 * <p>It also installs a check rule that applies {@link EmbedNormConfig#DEVICE} at analysis ({@code
 * spark.embednorm.device=gpu} with no usable GPU fails the query, saying why), and a columnar rule
 * that runs eligible projections of the functions in the columnar operator, on the GPU or the CPU
 * engine ({@code EmbedNormColumnarRule}); other projections run on the CPU row path.
 */
public final class EmbedNormExtensions implements Function1<SparkSessionExtensions, BoxedUnit> {

  /** Spark creates the extension by reflection through this constructor. */
  public EmbedNormExtensions() {}

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    for (Function function : functions()) {
      extensions.injectFunction(
          new Tuple3<>(
              FunctionIdentifier.apply(function.name()),
              function.documentation(),
              function.builder()));
    }
    extensions.injectCheckRule(session -> new DeviceCheckRule(session));
    extensions.injectColumnar(session -> new EmbedNormColumnarRule(session));
    return BoxedUnit.UNIT;
  }

  /**
   * Registers the SQL functions in a session that already exists, one built without this extension
   * (a notebook's {@code spark}: there a late {@code spark.sql.extensions} only warns). They then
   * resolve in SQL, {@code expr} and {@code call_function} as with the extension, and run on the
   * CPU row path: the columnar operator and the {@code spark.embednorm.device} check are fixed when
   * a session is built, so {@code spark.embednorm.device=gpu} with no usable GPU fails when the
   * query runs rather than at analysis. Registering again changes nothing; other sessions are not
   * changed. The jar must be on the driver's class path already.
   */
  public static void register(SparkSession session) {
    FunctionRegistry registry =
        ((org.apache.spark.sql.classic.SparkSession) session).sessionState().functionRegistry();
    for (Function function : functions()) {
      FunctionIdentifier identifier = SessionFunctionIdentifiers.of(function.name());
      String className = function.documentation().getClassName();
      boolean registered =
          registry.lookupFunction(identifier).exists(info -> info.getClassName().equals(className));
      if (!registered) {
        registry.registerFunction(identifier, function.documentation(), function.builder());
      }
    }
  }

  /** A SQL function: its name, its {@code DESCRIBE FUNCTION} text and its builder. */
  private record Function(
      String name, ExpressionInfo documentation, Function1<Seq<Expression>, Expression> builder) {}

  /**
   * Whether this Spark has a built-in function named {@code name}. embednorm leaves a built-in in
   * place ({@code vector_norm} from Spark 4.2 on): replacing it would change what existing queries
   * answer and make Spark warn at each session start.
   */
  static boolean sparkHasBuiltin(String name) {
    return FunctionRegistry$.MODULE$.expressions().contains(name);
  }

  /**
   * One function per op, then {@code lp_normalize}, {@code vector_norm} and {@code causal_conv},
   * less those this Spark has built in ({@link #sparkHasBuiltin}).
   */
  private static List<Function> functions() {
    List<Function> functions = new ArrayList<>();
    for (Op op : Op.values()) {
      functions.add(
          new Function(
              op.sqlName(),
              FunctionDocumentation.describe(op),
              arguments -> new EmbedNormExpression(op, arguments)));
    }
    functions.add(
        new Function(
            LpNormalizeExpression.NAME(),
            FunctionDocumentation.describeLpNormalize(),
            LpNormalizeExpression::new));
    functions.add(
        new Function(
            VectorNormExpression.NAME(),
            FunctionDocumentation.describeVectorNorm(),
            VectorNormExpression::new));
    functions.add(
        new Function(
            CausalConvolutions.NAME,
            FunctionDocumentation.describeCausalConv(),
            CausalConvExpression::new));
    for (Encoding encoding : Encoding.values()) {
      functions.add(
          new Function(
              EncodeExpression.sqlName(encoding),
              FunctionDocumentation.describeEncoding(encoding),
              arguments -> new EncodeExpression(encoding, arguments)));
    }
    functions.add(
        new Function(
            DequantizeInt8Expression.NAME(),
            FunctionDocumentation.describeDequantizeInt8(),
            DequantizeInt8Expression::new));
    functions.removeIf(function -> sparkHasBuiltin(function.name()));
    return functions;
  }
}
