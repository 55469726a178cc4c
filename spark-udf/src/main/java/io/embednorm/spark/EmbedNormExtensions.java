package io.embednorm.spark;

import io.embednorm.engine.Op;
import io.embednorm.spark.catalyst.DeviceCheckRule;
import io.embednorm.spark.catalyst.EmbedNormExpression;
import io.embednorm.spark.execution.EmbedNormColumnarRule;
import io.embednorm.spark.internal.FunctionDocumentation;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
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
      Function1<Seq<Expression>, Expression> builder =
          arguments -> new EmbedNormExpression(op, arguments);
      extensions.injectFunction(
          new Tuple3<>(
              FunctionIdentifier.apply(op.sqlName()), FunctionDocumentation.describe(op), builder));
    }
    extensions.injectCheckRule(session -> new DeviceCheckRule(session));
    extensions.injectColumnar(session -> new EmbedNormColumnarRule(session));
    return BoxedUnit.UNIT;
  }
}
