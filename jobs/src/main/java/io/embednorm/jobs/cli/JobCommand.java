package io.embednorm.jobs.cli;

import io.embednorm.jobs.JobOptions;
import io.embednorm.jobs.JobReport;
import io.embednorm.jobs.JobSettings;
import io.embednorm.jobs.NormalizeJob;
import io.embednorm.jobs.Summary;
import io.embednorm.jobs.internal.LocalSpark;
import io.embednorm.jobs.internal.SparkProgress;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code embednorm job}: the spark-submit job (NormalizeEmbeddingsJob) run on local[*]. */
@Command(
    name = "job",
    mixinStandardHelpOptions = true,
    versionProvider = VersionLines.class,
    description = "Runs the spark-submit normalize job locally on local[*].")
final class JobCommand implements Callable<Integer> {
  @Mixin JobOptions options;

  @Override
  public Integer call() {
    JobSettings settings = options.toSettings();
    SparkSession spark = LocalSpark.start("embednorm job");
    SparkProgress progress = SparkProgress.start(spark, "embednorm job");
    try {
      JobReport report = NormalizeJob.run(spark, settings);
      System.out.println(Summary.of(settings, report));
    } finally {
      progress.close();
      spark.stop();
    }
    return 0;
  }
}
