package io.embednorm.jobs.internal;

import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Row;

/**
 * The job's Arrow IPC output ({@code --format arrow}): {@link ArrowIpcFileFormat} with the
 * embedding column as a fixed-size list of the width of each task's first non-null row, found as
 * the task writes (no query before the write). A task whose first record batch has no non-null
 * embedding writes the column as {@code List<element>}; a task without rows writes no file.
 */
public final class ArrowOutput {
  /** The name {@code --format} takes. */
  public static final String FORMAT = "arrow";

  private ArrowOutput() {}

  /** Whether {@code format} names this output. */
  public static boolean isNamed(String format) {
    return FORMAT.equalsIgnoreCase(format);
  }

  /** {@code writer} set to write Arrow IPC files with {@code column} as a fixed-size list. */
  public static DataFrameWriter<Row> configure(DataFrameWriter<Row> writer, String column) {
    return writer
        .format(ArrowIpcFileFormat.class.getName())
        .option(ArrowIpcFileFormat.COLUMN, column);
  }
}
