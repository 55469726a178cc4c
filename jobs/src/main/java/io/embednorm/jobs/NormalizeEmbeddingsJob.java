package io.embednorm.jobs;

import io.embednorm.jobs.cli.ErrorReporter;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The spark-submit entry point: {@code spark-submit --class
 * io.embednorm.jobs.NormalizeEmbeddingsJob embednorm-jobs-*-spark-submit.jar --input IN --output
 * OUT --op rms_norm}. Takes the session that spark-submit configured (master, resources, {@code
 * spark.embednorm.*}).
 */
@Command(
    name = "NormalizeEmbeddingsJob",
    mixinStandardHelpOptions = true,
    description =
        "Normalizes an array<float|double> column of a dataset with one of embednorm's ops.")
public final class NormalizeEmbeddingsJob implements Callable<Integer> {
  @Mixin JobOptions options;

  public static void main(String[] args) {
    System.exit(ErrorReporter.commandLine(new NormalizeEmbeddingsJob()).execute(args));
  }

  @Override
  public Integer call() {
    JobSettings settings = options.toSettings();
    SparkSession spark = SparkSession.builder().appName("embednorm normalize").getOrCreate();
    JobReport report = NormalizeJob.run(spark, settings);
    System.out.println(Summary.of(settings, report));
    return 0;
  }
}
