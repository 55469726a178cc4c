package io.embednorm.jobs.cli;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.jobs.internal.LocalSpark;
import io.embednorm.jobs.internal.OutputFolders;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import scala.Console;
import scala.Function0;

/** {@code embednorm sql "QUERY"}: Spark SQL on local[*] with embednorm's functions registered. */
@Command(
    name = "sql",
    mixinStandardHelpOptions = true,
    versionProvider = VersionLines.class,
    description =
        "Runs a Spark SQL query on local[*] with embednorm's functions; prints the result.")
final class SqlCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "QUERY", description = "The SQL query.")
  String query;

  @Option(
      names = "--output",
      description =
          "Also write the result to this folder; an existing one is replaced only if it holds"
              + " nothing but a previous Spark output (part-*, _SUCCESS, .crc files, _temporary,"
              + " key=value folders) and none of the query's input.")
  String output;

  @Option(
      names = "--format",
      defaultValue = "parquet",
      description = "Format of --output: parquet, json or csv (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(
      names = "--max-rows",
      defaultValue = "20",
      description = "Rows to print (default: ${DEFAULT-VALUE}).")
  int maxRows;

  @Override
  public Integer call() {
    String outputFormat = format.toLowerCase(Locale.ROOT);
    if (output != null && !outputFormat.matches("parquet|json|csv")) {
      throw new EmbedNormException(
          "Cannot write query result: unknown format '" + format + "'; use parquet, json or csv");
    }
    SparkSession spark = LocalSpark.start("embednorm sql");
    try {
      Dataset<Row> result = spark.sql(query);
      if (output != null) {
        OutputFolders.check(spark, output, Arrays.asList(result.inputFiles()), SaveMode.Overwrite);
      }
      if (isOneTextColumn(result)) {
        printLines(result);
      } else {
        // show prints to Scala's Console.out, which keeps the System.out of its first use.
        Console.withOut(
            System.out,
            (Function0<Object>)
                () -> {
                  result.show(maxRows, false);
                  return null;
                });
      }
      if (output != null) {
        Dataset<Row> writable = outputFormat.equals("csv") ? arraysAsText(result) : result;
        writable.write().mode(SaveMode.Overwrite).format(outputFormat).save(output);
        System.out.println("embednorm sql: wrote " + outputFormat + " to " + output);
      }
    } finally {
      spark.stop();
    }
    return 0;
  }

  /**
   * One string column (DESCRIBE FUNCTION, EXPLAIN, SHOW ...) prints as plain lines: a table would
   * escape the text's line breaks as {@code \n} and pad every row to the longest.
   */
  private static boolean isOneTextColumn(Dataset<Row> result) {
    StructField[] fields = result.schema().fields();
    return fields.length == 1 && fields[0].dataType() instanceof StringType;
  }

  private void printLines(Dataset<Row> result) {
    List<Row> rows = result.takeAsList(maxRows + 1);
    for (Row row : rows.subList(0, Math.min(maxRows, rows.size()))) {
      System.out.println(row.isNullAt(0) ? "NULL" : row.getString(0));
    }
    if (rows.size() > maxRows) {
      System.out.println("(only the first " + maxRows + " rows; --max-rows prints more)");
    }
  }

  /** CSV holds no arrays: write them as their text, e.g. {@code [0.6, 0.8]}. */
  private static Dataset<Row> arraysAsText(Dataset<Row> result) {
    StructField[] fields = result.schema().fields();
    Column[] columns = new Column[fields.length];
    for (int i = 0; i < fields.length; i++) {
      Column column = result.col("`" + fields[i].name().replace("`", "``") + "`");
      columns[i] =
          fields[i].dataType() instanceof ArrayType
              ? column.cast("string").as(fields[i].name())
              : column;
    }
    return result.select(columns);
  }
}
