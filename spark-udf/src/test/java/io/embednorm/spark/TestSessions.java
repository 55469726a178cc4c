package io.embednorm.spark;

import org.apache.spark.sql.SparkSession;

/** Local Spark sessions for the tests: one per test class, small and quiet. */
final class TestSessions {
  private TestSessions() {}

  /**
   * A {@code local[2]} session, with or without {@link EmbedNormExtensions}.
   *
   * <p>{@code ConvertToLocalRelation} is excluded: otherwise the optimizer evaluates projections
   * over in-memory test data on the driver (interpreted, while planning), and neither the generated
   * code nor the physical plan would ever see the expression.
   */
  static SparkSession create(boolean withExtensions) {
    SparkSession.Builder builder =
        SparkSession.builder()
            .master("local[2]")
            .appName("embednorm-spark-udf-test")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config(
                "spark.sql.optimizer.excludedRules",
                "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation");
    if (withExtensions) {
      builder.config("spark.sql.extensions", EmbedNormExtensions.class.getName());
    }
    return builder.getOrCreate();
  }
}
