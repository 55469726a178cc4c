package io.embednorm.jobs.internal;

import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.CollectionAccumulator;

/**
 * Sent to the tasks: what {@link ArrowIpcFileFormat} writes. {@code column} (may be null: none) is
 * written as a fixed-size list of {@code width} elements, or when {@code width} is 0 of the width
 * of each task's first non-null row; each file's width is added to {@code widths} (may be null).
 */
final class ArrowIpcWriterFactory extends OutputWriterFactory {
  private static final long serialVersionUID = 1L;

  private final String column;
  private final int width;
  private final String timeZone;
  private final CollectionAccumulator<ArrowOutput.FileWidth> widths;

  ArrowIpcWriterFactory(
      String column,
      int width,
      String timeZone,
      CollectionAccumulator<ArrowOutput.FileWidth> widths) {
    this.column = column;
    this.width = width;
    this.timeZone = timeZone;
    this.widths = widths;
  }

  @Override
  public String getFileExtension(TaskAttemptContext context) {
    return ".arrow";
  }

  @Override
  public OutputWriter newInstance(String path, StructType schema, TaskAttemptContext context) {
    return new ArrowIpcOutputWriter(
        path, schema, column, width, timeZone, context.getConfiguration(), widths);
  }
}
