package io.embednorm.jobs.internal;

import io.embednorm.arrow.internal.OutputFileCheck;
import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Collection;
import java.util.Locale;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * Which folders the Spark commands ({@code job}, {@code sql --output}, {@code generate}, {@code
 * demo}) and the spark-submit job may write, checked before Spark deletes or writes anything.
 * Refused, with "Cannot write output '&lt;path&gt;': &lt;why&gt;": an output that is, is inside or
 * holds an input (real paths, so links count); an output that is a file, a device, a FIFO or a
 * symbolic link; an existing output under {@link SaveMode#ErrorIfExists}; and, under {@link
 * SaveMode#Overwrite}, a folder that is not a previous Spark output. A previous Spark output holds
 * only files named {@code part-*}, {@code _SUCCESS}, {@code _committed_*} or {@code _started_*},
 * their {@code .<name>.crc} checksums, a {@code _temporary} folder (what an interrupted write
 * leaves) and partition folders {@code key=value} of the same; an empty folder counts too. Paths on
 * other file systems than the local one (HDFS, S3, ...) are left to Spark's save mode.
 */
public final class OutputFolders {
  private static final Pattern PARTITION = Pattern.compile("[^=.][^=]*=.*");

  private OutputFolders() {}

  /**
   * Checks that {@code output} may be written with {@code mode}, given the {@code inputs} read
   * (paths, globs or file URIs; non-local ones are skipped).
   *
   * @throws EmbedNormException "Cannot write output '&lt;output&gt;': &lt;why&gt;"
   */
  public static void check(
      SparkSession spark, String output, Collection<String> inputs, SaveMode mode) {
    Path folder = localPath(spark, output);
    if (folder == null) {
      return;
    }
    try {
      for (String input : inputs) {
        Path source = localPath(spark, input);
        if (source != null) {
          checkApart(output, folder, input, withoutGlob(source));
        }
      }
      checkExisting(output, folder, mode);
    } catch (IOException failure) {
      throw refused(output, "cannot look at it: " + failure.getMessage());
    }
  }

  /**
   * Spark's save mode for {@code name}, read as {@code DataFrameWriter.mode(String)} reads it, so
   * that the check and the write use one mode.
   *
   * @throws EmbedNormException for a name Spark does not know
   */
  public static SaveMode saveMode(String name) {
    switch (name.toLowerCase(Locale.ROOT)) {
      case "overwrite":
        return SaveMode.Overwrite;
      case "append":
        return SaveMode.Append;
      case "ignore":
        return SaveMode.Ignore;
      case "error":
      case "errorifexists":
      case "default":
        return SaveMode.ErrorIfExists;
      default:
        throw new EmbedNormException(
            "Cannot write output: unknown save mode '"
                + name
                + "'; use errorifexists, overwrite, append or ignore");
    }
  }

  private static void checkApart(String output, Path folder, String input, Path source)
      throws IOException {
    Path outputReal = realPath(folder);
    Path inputReal = realPath(source);
    boolean sameFile =
        Files.exists(folder) && Files.exists(source) && Files.isSameFile(folder, source);
    if (sameFile || outputReal.equals(inputReal)) {
      throw refused(output, "it is the input '" + input + "'; write to a new path instead");
    }
    if (outputReal.startsWith(inputReal)) {
      throw refused(output, "it is inside the input '" + input + "'; write to a new path instead");
    }
    if (inputReal.startsWith(outputReal)) {
      throw refused(output, "it holds the input '" + input + "'; write to a new path instead");
    }
  }

  private static void checkExisting(String output, Path folder, SaveMode mode) throws IOException {
    if (!Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    if (Files.isSymbolicLink(folder)) {
      throw refused(output, "it is a symbolic link; name the folder itself");
    }
    String kind = OutputFileCheck.kindOtherThanRegularFile(folder);
    if (kind == null) {
      throw refused(output, "it is a file, not a folder of Spark output");
    }
    if (!kind.equals("a directory")) {
      throw refused(output, "it is " + kind + ", not a folder");
    }
    if (mode == SaveMode.ErrorIfExists) {
      String state =
          Files.exists(folder.resolve("_SUCCESS"))
              ? "it exists"
              : "it exists without _SUCCESS (an interrupted run?)";
      throw refused(output, state + "; pass --mode overwrite to replace a previous output");
    }
    if (mode == SaveMode.Overwrite) {
      Path foreign = foreignEntry(folder);
      if (foreign != null) {
        throw refused(
            output,
            "it holds '"
                + folder.relativize(foreign)
                + "', which is not Spark output, and only a previous output is replaced (part-*,"
                + " _SUCCESS, .crc files, _temporary, key=value folders)");
      }
    }
  }

  /** The first entry under {@code folder} that a Spark output does not hold, or null. */
  private static Path foreignEntry(Path folder) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(folder)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        BasicFileAttributes attributes =
            Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (attributes.isRegularFile() && (isSparkFile(name) || isChecksum(name))) {
          continue;
        }
        if (attributes.isDirectory() && name.equals("_temporary")) {
          continue;
        }
        if (attributes.isDirectory() && PARTITION.matcher(name).matches()) {
          Path inner = foreignEntry(entry);
          if (inner == null) {
            continue;
          }
          return inner;
        }
        return entry;
      }
    }
    return null;
  }

  private static boolean isSparkFile(String name) {
    return name.startsWith("part-")
        || name.equals("_SUCCESS")
        || name.startsWith("_committed_")
        || name.startsWith("_started_");
  }

  private static boolean isChecksum(String name) {
    return name.length() > 5
        && name.startsWith(".")
        && name.endsWith(".crc")
        && isSparkFile(name.substring(1, name.length() - 4));
  }

  /**
   * The local path {@code path} names, or null when it is on another file system: a path without a
   * scheme is on Spark's default file system.
   */
  private static Path localPath(SparkSession spark, String path) {
    URI uri = new org.apache.hadoop.fs.Path(path).toUri();
    String scheme = uri.getScheme();
    if (scheme == null) {
      scheme = FileSystem.getDefaultUri(spark.sparkContext().hadoopConfiguration()).getScheme();
    }
    if (!"file".equals(scheme) || uri.getPath() == null || uri.getPath().isEmpty()) {
      return null;
    }
    return Path.of(uri.getPath()).toAbsolutePath().normalize();
  }

  /** {@code path} up to its first part holding a glob character. */
  private static Path withoutGlob(Path path) {
    Path kept = path.getRoot();
    for (Path part : path) {
      if (part.toString().matches(".*[*?\\[\\]{}].*")) {
        break;
      }
      kept = kept == null ? part : kept.resolve(part);
    }
    return kept == null ? path : kept;
  }

  /** The real path of {@code path}, or of its nearest existing parent joined with the rest. */
  private static Path realPath(Path path) throws IOException {
    Path existing = path;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return path;
    }
    return existing.toRealPath().resolve(existing.relativize(path));
  }

  private static EmbedNormException refused(String output, String why) {
    return new EmbedNormException("Cannot write output '" + output + "': " + why);
  }
}
