package io.embednorm.jobs.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * What {@code --version} prints: embednorm's Maven version (a resource the build fills in), the
 * Spark on the class path (read from Spark's own {@code spark-version-info.properties}, absent for
 * {@code normalize}, which runs without Spark) and the Java runtime.
 */
final class VersionLines implements IVersionProvider {
  @Override
  public String[] getVersion() {
    String spark = property("spark-version-info.properties", "version");
    return new String[] {
      "embednorm " + embednormVersion(),
      spark == null ? "Spark not on the class path (not needed by normalize)" : "Spark " + spark,
      "Java "
          + Runtime.version()
          + " ("
          + System.getProperty("java.vm.vendor")
          + ", "
          + System.getProperty("java.home")
          + ")"
    };
  }

  /** The Maven project version of this build, or "unknown" where the resource is missing. */
  static String embednormVersion() {
    String version = property("io/embednorm/jobs/embednorm-version.properties", "version");
    return version == null ? "unknown" : version;
  }

  private static String property(String resource, String key) {
    try (InputStream in = VersionLines.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        return null;
      }
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty(key);
    } catch (IOException failure) {
      throw new UncheckedIOException(failure);
    }
  }
}
