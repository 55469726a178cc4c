package io.embednorm.jobs;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.jobs.internal.ArrowOutput;
import io.embednorm.jobs.internal.InputFiles;
import io.embednorm.jobs.internal.OutputFolders;
import io.embednorm.spark.EmbedNormConfig;
import io.embednorm.spark.EmbedNormFunctions;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Observation;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;

/**
 * The normalize job on a given SparkSession: one pass that reads, normalizes one array column and
 * writes, counting rows on the way (no second pass).
 */
public final class NormalizeJob {
  private NormalizeJob() {}

  /**
   * Runs the job; the session stays open (the caller owns it). The input and column are checked
   * first, then the output ({@link OutputFolders}): it must not be, be inside or hold the input,
   * and {@code overwrite} replaces only a previous Spark output.
   */
  public static JobReport run(SparkSession spark, JobSettings settings) {
    Dataset<Row> input = read(spark, settings);
    checkColumn(input, settings.column());
    SaveMode mode = OutputFolders.saveMode(settings.saveMode());
    OutputFolders.check(spark, settings.output(), List.of(settings.input()), mode);
    String device = describeDevice(settings);
    // --device decides for this job's queries; without it (auto), the session's setting stands.
    if (settings.device() != DeviceChoice.AUTO
        || spark.conf().getOption(EmbedNormConfig.DEVICE.name()).isEmpty()) {
      spark
          .conf()
          .set(EmbedNormConfig.DEVICE.name(), settings.device().name().toLowerCase(Locale.ROOT));
    }
    Dataset<Row> output =
        input.withColumn(
            settings.outputColumn(),
            EmbedNormFunctions.normalize(col(quoted(settings.column())), settings.normalization()));
    Observation observation = new Observation("embednorm");
    Dataset<Row> observed = output.observe(observation, count(lit(1)).as("rows"));
    long start = System.nanoTime();
    DataFrameWriter<Row> writer = observed.write().mode(mode);
    if (ArrowOutput.isNamed(settings.outputFormat())) {
      ArrowOutput.save(spark, writer, settings.outputColumn(), settings.output());
    } else {
      writer.format(settings.outputFormat()).save(settings.output());
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long rows = ((Number) metrics(observation).get("rows")).longValue();
    return new JobReport(rows, settings.output(), seconds, device);
  }

  /**
   * The input, checked to exist before Spark plans (Spark's own error for a missing path is a long
   * stack trace), in the format --input-format gives or its file names tell.
   */
  private static Dataset<Row> read(SparkSession spark, JobSettings settings) {
    Configuration hadoop = spark.sparkContext().hadoopConfiguration();
    String format = settings.inputFormat();
    if (format == null) {
      format = InputFiles.detectFormat(settings.input(), hadoop);
    } else {
      InputFiles.requireExists(settings.input(), hadoop);
    }
    return spark.read().format(format).load(settings.input());
  }

  private static Map<String, Object> metrics(Observation observation) {
    try {
      return observation.getAsJava();
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new EmbedNormException("Cannot count the rows written: interrupted", interrupted);
    }
  }

  /**
   * Resolves the device choice now, so that {@code gpu} without a GPU fails before any work, and
   * says where the rows are normalized: in batches by embednorm's columnar operator, on the chosen
   * engine.
   */
  static String describeDevice(JobSettings settings) {
    try (EngineSelection selection = Engines.select(settings.device())) {
      return selection.device().name().toLowerCase(Locale.ROOT)
          + ", columnar batches ("
          + selection.reason()
          + ")";
    }
  }

  private static void checkColumn(Dataset<Row> input, String column) {
    StructField field =
        Arrays.stream(input.schema().fields())
            .filter(candidate -> candidate.name().equals(column))
            .findFirst()
            .orElseThrow(
                () ->
                    new EmbedNormException(
                        "Cannot normalize column '"
                            + column
                            + "': no such column; the input has columns "
                            + String.join(", ", input.columns())));
    DataType type = field.dataType();
    if (!(type instanceof ArrayType array) || !(array.elementType() instanceof NumericType)) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + column
              + "': its type is "
              + type.simpleString()
              + "; expected an array of float or double");
    }
  }

  private static String quoted(String column) {
    return "`" + column.replace("`", "``") + "`";
  }
}
