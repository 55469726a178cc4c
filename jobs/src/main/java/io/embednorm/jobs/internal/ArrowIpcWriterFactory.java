package io.embednorm.jobs.internal;

import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.types.StructType;

/**
 * Sent to the tasks: what {@link ArrowIpcFileFormat} writes. {@code column} (may be null: none) is
 * written as a fixed-size list of {@code width} elements when {@code width > 0}.
 */
final class ArrowIpcWriterFactory extends OutputWriterFactory {
  private static final long serialVersionUID = 1L;

  private final String column;
  private final int width;
  private final String timeZone;

  ArrowIpcWriterFactory(String column, int width, String timeZone) {
    this.column = column;
    this.width = width;
    this.timeZone = timeZone;
  }

  @Override
  public String getFileExtension(TaskAttemptContext context) {
    return ".arrow";
  }

  @Override
  public OutputWriter newInstance(String path, StructType schema, TaskAttemptContext context) {
    return new ArrowIpcOutputWriter(
        path, ArrowIpcLayout.of(schema, column, width, timeZone), context.getConfiguration());
  }
}
