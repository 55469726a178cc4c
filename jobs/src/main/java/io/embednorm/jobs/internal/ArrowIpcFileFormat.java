package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.mapreduce.Job;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.collection.immutable.Map;
import scala.collection.immutable.Seq;

/**
 * The job's {@code --format arrow}: a Spark file format that writes each task's rows as one Arrow
 * IPC file ({@code part-00000-<uuid>-c000.arrow}), through Spark's own commit protocol, so that
 * save modes, {@code _SUCCESS}, task retries and a failed job's clean-up are those of the Parquet
 * writer. The column named by {@link #COLUMN} is written as {@code FixedSizeList<float|double,
 * width>} from each row's element bytes in one copy, of the width {@link #WIDTH} gives or else of
 * each task's first non-null row; the other columns with Spark's own Arrow writers. A task without
 * rows writes no file. Write only: reading back is for Arrow readers (pyarrow, Polars, DuckDB,
 * Lance).
 *
 * <pre>
 * frame.write().format(ArrowIpcFileFormat.class.getName())
 *     .option(ArrowIpcFileFormat.COLUMN, "embedding").save(path);
 * </pre>
 */
public final class ArrowIpcFileFormat implements FileFormat {
  /** The option naming the array column written as a fixed-size list. */
  public static final String COLUMN = "embednorm.arrow.column";

  /**
   * The option giving the fixed-size list's width; absent or 0: the width of each task's first
   * non-null row (a task with none in its first record batch writes {@code List<element>}).
   */
  public static final String WIDTH = "embednorm.arrow.width";

  @Override
  public Option<StructType> inferSchema(
      SparkSession spark, Map<String, String> options, Seq<FileStatus> files) {
    throw new EmbedNormException(
        "Cannot read Arrow IPC files with embednorm's job format: it writes only; read them with"
            + " an Arrow reader (pyarrow.ipc.open_file, Polars, DuckDB)");
  }

  @Override
  public OutputWriterFactory prepareWrite(
      SparkSession spark, Job job, Map<String, String> options, StructType dataSchema) {
    Option<String> column = options.get(COLUMN);
    Option<String> width = options.get(WIDTH);
    String timeZone = spark.conf().get("spark.sql.session.timeZone");
    Option<String> widths = options.get(ArrowOutput.WIDTHS_OPTION);
    return new ArrowIpcWriterFactory(
        column.isDefined() ? column.get() : null,
        width.isDefined() ? Integer.parseInt(width.get()) : 0,
        timeZone,
        ArrowOutput.widths(widths.isDefined() ? widths.get() : null));
  }

  @Override
  public String toString() {
    return "Arrow IPC";
  }
}
