package io.embednorm.jobs.internal;

import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.filter.RegexFilter;

/**
 * Keeps Spark's own reports of a failure that the command reports anyway out of the command line's
 * stderr. A missing input path is logged by the file source with its stack trace ("Assume no
 * metadata directory") before Spark fails the query with PATH_NOT_FOUND. On {@code local[*]} the
 * driver is the executor: the failure that Spark logs, with a stack trace, from the executor
 * ("Exception in task"), the scheduler ("Lost task", "aborting job"), the writers ("Aborting job",
 * "Task attempt ... aborted") and Hadoop's committer, cleaning up after them ("Could not delete"),
 * is the very exception the command receives and prints as its one line. Only those messages are
 * dropped; every other line of these loggers (e.g. a task of very large size) still shows.
 */
final class FailureLogs {
  /** The loggers that report such a failure, each by its own message. */
  private static final List<String> LOGGERS =
      List.of(
          "org.apache.spark.executor.Executor",
          "org.apache.spark.scheduler.TaskSetManager",
          "org.apache.spark.sql.execution.datasources.FileFormatWriter",
          "org.apache.spark.internal.io.SparkHadoopWriter",
          "org.apache.spark.util.Utils",
          "org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter",
          "org.apache.spark.sql.execution.streaming.sinks.FileStreamSink",
          "org.apache.spark.sql.execution.streaming.FileStreamSink");

  private static final String FAILURE_MESSAGES =
      "(Exception in task |Lost task |Task \\S+ in stage \\S+ failed \\d+ times; aborting job"
          + "|Aborting job |Aborting task|Job \\S+ aborted|Job: \\S+, Task: .* aborted"
          + "|Could not delete |Assume no metadata directory).*";

  private FailureLogs() {}

  /**
   * Drops those messages from now on in this JVM, unless {@code EMBEDNORM_DEBUG} is set or log4j is
   * not Spark's logging backend here.
   */
  static void hide() {
    if (System.getenv("EMBEDNORM_DEBUG") != null
        || !(LogManager.getContext(false) instanceof LoggerContext context)) {
      return;
    }
    Configuration configuration = context.getConfiguration();
    for (String name : LOGGERS) {
      LoggerConfig logger = configuration.getLoggerConfig(name);
      if (!logger.getName().equals(name)) {
        // Inherited so far: a config of its own, at the level it had, to carry the filter.
        Configurator.setLevel(name, logger.getLevel());
        logger = configuration.getLoggerConfig(name);
      }
      if (logger.getFilter() == null) {
        logger.addFilter(failureFilter());
      }
    }
    context.updateLoggers();
  }

  private static Filter failureFilter() {
    try {
      return RegexFilter.createFilter(
          FAILURE_MESSAGES,
          new String[] {"DOTALL"},
          false,
          Filter.Result.DENY,
          Filter.Result.NEUTRAL);
    } catch (IllegalAccessException impossible) {
      throw new IllegalStateException(impossible);
    }
  }
}
