package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.spark.sql.SparkSession;

/**
 * The SparkSession of the command line: {@code local[*]} with embednorm's functions registered, and
 * the settings of {@code conf/spark-defaults.conf} when bin/embednorm passes its folder in the
 * system property {@code embednorm.conf.dir}. A failed task shows as the command's one line only.
 */
public final class LocalSpark {
  /** The system property bin/embednorm sets to the project's conf/ folder. */
  public static final String CONF_DIR_PROPERTY = "embednorm.conf.dir";

  private LocalSpark() {}

  /**
   * Starts (or returns the running) local session; the caller stops it. Spark's log lines about
   * failures the command reports anyway are dropped from then on unless {@code EMBEDNORM_DEBUG} is
   * set (see {@link FailureLogs}).
   */
  public static SparkSession start(String appName) {
    FailureLogs.hide();
    SparkSession.Builder builder =
        SparkSession.builder()
            .appName(appName)
            .master("local[*]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.extensions", "io.embednorm.spark.EmbedNormExtensions");
    defaults().forEach((key, value) -> builder.config((String) key, (String) value));
    return builder.getOrCreate();
  }

  /** The properties of conf/spark-defaults.conf, or none when no conf folder is known. */
  static Properties defaults() {
    Properties properties = new Properties();
    String folder = System.getProperty(CONF_DIR_PROPERTY);
    if (folder == null) {
      return properties;
    }
    Path file = Path.of(folder, "spark-defaults.conf");
    if (!Files.isRegularFile(file)) {
      return properties;
    }
    // spark-defaults.conf separates key and value by whitespace, which Properties accepts too.
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot read Spark settings '" + file + "': " + failure.getMessage(), failure);
    }
    return properties;
  }
}
