package io.embednorm.jobs.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The job's input before Spark reads it: that it exists, and its format from its files' names
 * (docs/SEMANTICS.md, spark-submit job). Works on any file system Spark's Hadoop configuration
 * reaches.
 */
public final class InputFiles {
  /** The format when no file name tells one, as Spark's own default. */
  public static final String DEFAULT_FORMAT = "parquet";

  /** Folders below the input that are searched for data files (partition folders). */
  private static final int MAXIMUM_DEPTH = 4;

  private InputFiles() {}

  /**
   * Checks that {@code input} (a file, a folder or a glob) exists and returns its format: that of
   * its data files' extension ({@code .parquet}, {@code .orc}, {@code .json}, {@code .csv},
   * compressed or not), ignoring Spark's {@code _SUCCESS}, {@code .crc} and other hidden files;
   * parquet when no name tells.
   *
   * @throws EmbedNormException "Cannot read input 'X': no such file or directory", or when the
   *     input holds files of several formats
   */
  public static String detectFormat(String input, Configuration hadoop) {
    Set<String> formats = new TreeSet<>();
    visit(input, hadoop, formats);
    if (formats.size() > 1) {
      throw new EmbedNormException(
          "Cannot read input '"
              + input
              + "': it holds files of formats "
              + String.join(", ", formats)
              + "; pass --input-format");
    }
    return formats.isEmpty() ? DEFAULT_FORMAT : formats.iterator().next();
  }

  /**
   * Checks that {@code input} (a file, a folder or a glob) exists.
   *
   * @throws EmbedNormException "Cannot read input 'X': no such file or directory"
   */
  public static void requireExists(String input, Configuration hadoop) {
    visit(input, hadoop, null);
  }

  /** Finds the input's matches, and where {@code formats} is given, their files' formats. */
  private static void visit(String input, Configuration hadoop, Set<String> formats) {
    Path path = new Path(input);
    try {
      FileSystem fileSystem = path.getFileSystem(hadoop);
      FileStatus[] matches = fileSystem.globStatus(path);
      if (matches == null || matches.length == 0) {
        throw missing(input);
      }
      if (formats != null) {
        for (FileStatus match : matches) {
          collect(fileSystem, match, 0, formats);
        }
      }
    } catch (FileNotFoundException notFound) {
      throw missing(input);
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot read input '" + input + "': " + failure.getMessage(), failure);
    }
  }

  private static void collect(
      FileSystem fileSystem, FileStatus status, int depth, Set<String> formats) throws IOException {
    String name = status.getPath().getName();
    if (depth > 0 && (name.startsWith("_") || name.startsWith("."))) {
      return;
    }
    if (status.isFile()) {
      String format = formatOf(name);
      if (format != null) {
        formats.add(format);
      }
    } else if (depth < MAXIMUM_DEPTH) {
      for (FileStatus child : fileSystem.listStatus(status.getPath())) {
        collect(fileSystem, child, depth + 1, formats);
      }
    }
  }

  /**
   * The format a file name's extensions tell, e.g. parquet for {@code
   * part-00000-c000.snappy.parquet} and json for {@code part-00000.json.gz}; null for none.
   */
  static String formatOf(String fileName) {
    String[] parts = fileName.toLowerCase(Locale.ROOT).split("\\.");
    for (int i = parts.length - 1; i >= 1; i--) {
      switch (parts[i]) {
        case "parquet":
        case "orc":
        case "json":
        case "csv":
          return parts[i];
        case "jsonl":
        case "ndjson":
          return "json";
        case "crc":
          return null;
        default:
          // a compression suffix (gz, snappy, zst, ...): look further left
      }
    }
    return null;
  }

  private static EmbedNormException missing(String input) {
    return new EmbedNormException("Cannot read input '" + input + "': no such file or directory");
  }
}
