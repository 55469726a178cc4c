package io.embednorm.jobs.internal;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.size;

import java.util.List;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The job's Arrow IPC output ({@code --format arrow}): {@link ArrowIpcFileFormat} with the
 * embedding column as a fixed-size list of the width of the input's first non-null row, found
 * before the write by a query that stops at that row. Without such a row (no rows, or all null) the
 * column is written as {@code List<element>}, all entries null.
 */
public final class ArrowOutput {
  /** The name {@code --format} takes. */
  public static final String FORMAT = "arrow";

  private ArrowOutput() {}

  /** Whether {@code format} names this output. */
  public static boolean isNamed(String format) {
    return FORMAT.equalsIgnoreCase(format);
  }

  /**
   * {@code writer} set to write Arrow IPC files with {@code outputColumn} as a fixed-size list, of
   * the width of {@code inputColumn}'s first non-null row in {@code input}.
   */
  public static DataFrameWriter<Row> configure(
      DataFrameWriter<Row> writer, Dataset<Row> input, String inputColumn, String outputColumn) {
    return writer
        .format(ArrowIpcFileFormat.class.getName())
        .option(ArrowIpcFileFormat.COLUMN, outputColumn)
        .option(ArrowIpcFileFormat.WIDTH, width(input, inputColumn));
  }

  /** The number of elements of the first non-null array of {@code column}; 0 when none. */
  static int width(Dataset<Row> input, String column) {
    String quoted = "`" + column.replace("`", "``") + "`";
    List<Row> first =
        input.where(col(quoted).isNotNull()).select(size(col(quoted))).limit(1).collectAsList();
    return first.isEmpty() ? 0 : first.get(0).getInt(0);
  }
}
