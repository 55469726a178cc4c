package io.embednorm.spark;

import io.embednorm.engine.Op;
import io.embednorm.spark.catalyst.DeviceCheckRule;
import io.embednorm.spark.catalyst.EmbedNormExpression;
import io.embednorm.spark.execution.EmbedNormColumnarRule;
import io.embednorm.spark.internal.FunctionDocumentation;
import io.embednorm.spark.internal.SessionFunctionIdentifiers;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.Function1;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.runtime.BoxedUnit;

/**
 * Registers the five SQL functions ({@code rms_norm}, {@code layer_norm}, {@code softmax}, {@code
 * log_softmax}, {@code l2_normalize}) with a session:
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
    for (Op op : Op.values()) {
      extensions.injectFunction(
          new Tuple3<>(
              FunctionIdentifier.apply(op.sqlName()),
              FunctionDocumentation.describe(op),
              builder(op)));
    }
    extensions.injectCheckRule(session -> new DeviceCheckRule(session));
    extensions.injectColumnar(session -> new EmbedNormColumnarRule(session));
    return BoxedUnit.UNIT;
  }

  /**
   * Registers the five SQL functions in a session that already exists, one built without this
   * extension (a notebook's {@code spark}: there a late {@code spark.sql.extensions} only warns).
   * They then resolve in SQL, {@code expr} and {@code call_function} as with the extension, and run
   * on the CPU row path: the columnar operator and the {@code spark.embednorm.device} check are
   * fixed when a session is built, so {@code spark.embednorm.device=gpu} with no usable GPU fails
   * when the query runs rather than at analysis. Registering again changes nothing; other sessions
   * are not changed. The jar must be on the driver's class path already.
   */
  public static void register(SparkSession session) {
    FunctionRegistry registry =
        ((org.apache.spark.sql.classic.SparkSession) session).sessionState().functionRegistry();
    for (Op op : Op.values()) {
      FunctionIdentifier identifier = SessionFunctionIdentifiers.of(op.sqlName());
      boolean registered =
          registry
              .lookupFunction(identifier)
              .exists(info -> info.getClassName().equals(EmbedNormExpression.class.getName()));
      if (!registered) {
        registry.registerFunction(identifier, FunctionDocumentation.describe(op), builder(op));
      }
    }
  }

  private static Function1<Seq<Expression>, Expression> builder(Op op) {
    return arguments -> new EmbedNormExpression(op, arguments);
  }
}
