package io.embednorm.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import scala.Tuple3;
import scala.jdk.javaapi.CollectionConverters;

/** Helpers for reading query results and failures in tests. */
final class Results {
  private Results() {}

  /** Collects {@code (id, array)} rows into id → list of elements (or null). */
  static Map<Integer, List<?>> byId(Dataset<Row> result) {
    Map<Integer, List<?>> values = new HashMap<>();
    for (Row row : result.collectAsList()) {
      values.put(row.getInt(0), row.isNullAt(1) ? null : row.getList(1));
    }
    return values;
  }

  /** The Java source that whole-stage code generation produced for {@code result}'s plan. */
  static String generatedCode(Dataset<Row> result) {
    StringBuilder code = new StringBuilder();
    for (Tuple3<String, String, ?> stage :
        CollectionConverters.asJava(result.queryExecution().debug().codegenToSeq())) {
      code.append(stage._2()).append('\n');
    }
    return code.toString();
  }

  /**
   * The first node of {@code type} in {@code plan}, looking into adaptive plans (their final plan
   * once executed) and query stages; null when there is none.
   */
  static <T> T find(SparkPlan plan, Class<T> type) {
    if (type.isInstance(plan)) {
      return type.cast(plan);
    }
    List<SparkPlan> children = new ArrayList<>(CollectionConverters.asJava(plan.children()));
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      children.add(adaptive.executedPlan());
    } else if (plan instanceof QueryStageExec stage) {
      children.add(stage.plan());
    }
    for (SparkPlan child : children) {
      T found = find(child, type);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  /** The messages of {@code failure} and all its causes, one per line. */
  static String messages(Throwable failure) {
    List<String> messages = new ArrayList<>();
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      messages.add(cause.getClass().getName() + ": " + cause.getMessage());
      if (cause.getCause() == cause) {
        break;
      }
    }
    return String.join("\n", messages);
  }
}
