package io.embednorm.arrow.internal;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Which paths an output file may be written to: an absent path, or a regular file (through a
 * symbolic link, the file it names), which is replaced. Devices, FIFOs, sockets, directories and
 * links to them or to nothing are refused, as is the input file itself (the same file by any name,
 * hard links included), each with "Cannot write output '&lt;path&gt;': &lt;why&gt;".
 */
public final class OutputFileCheck {
  private static final int TYPE_BITS = 0170000;

  private OutputFileCheck() {}

  /**
   * The path to write for {@code output}: its absolute form, or the real path of the regular file
   * it names.
   *
   * @throws EmbedNormException when {@code output} names something other than a regular file
   */
  public static Path target(Path output) {
    Path absolute = output.toAbsolutePath().normalize();
    try {
      if (!Files.exists(absolute)) {
        if (Files.isSymbolicLink(absolute)) {
          throw refused(
              output,
              "it is a symbolic link to '"
                  + Files.readSymbolicLink(absolute)
                  + "', which does not exist");
        }
        return absolute;
      }
      Path real = absolute.toRealPath();
      String kind = kindOtherThanRegularFile(real);
      if (kind != null) {
        String through = Files.isSymbolicLink(absolute) ? " (through a symbolic link)" : "";
        throw refused(output, "it is " + kind + through + ", not a regular file");
      }
      return real;
    } catch (IOException failure) {
      throw refused(output, "cannot look at it: " + failure.getMessage());
    }
  }

  /**
   * Checks {@code output} as {@link #target(Path)} does, and refuses the {@code input} file by any
   * name (a symbolic or hard link, {@code ..} in the path).
   *
   * @throws EmbedNormException "Cannot write output '&lt;output&gt;': &lt;why&gt;"
   */
  public static void requireNotInput(Path input, Path output) {
    Path written = target(output);
    if (!Files.exists(input) || !Files.exists(written)) {
      return;
    }
    try {
      if (Files.isSameFile(input, written)) {
        throw refused(
            output,
            "it is the input file '"
                + input
                + "' (by another name or a hard link); write to a new path instead");
      }
    } catch (IOException failure) {
      throw refused(output, "cannot compare it with the input: " + failure.getMessage());
    }
  }

  /**
   * What {@code path} is when it exists but is no regular file, e.g. "a character device", "a
   * FIFO", "a directory"; null for a regular file. Follows symbolic links.
   */
  public static String kindOtherThanRegularFile(Path path) throws IOException {
    BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
    if (attributes.isRegularFile()) {
      return null;
    }
    if (attributes.isDirectory()) {
      return "a directory";
    }
    int type;
    try {
      type = (Integer) Files.getAttribute(path, "unix:mode") & TYPE_BITS;
    } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
      return "a special file";
    }
    switch (type) {
      case 0020000:
        return "a character device";
      case 0060000:
        return "a block device";
      case 0010000:
        return "a FIFO (named pipe)";
      case 0140000:
        return "a socket";
      default:
        return "a special file";
    }
  }

  /** "Cannot write output '&lt;output&gt;': &lt;why&gt;". */
  public static EmbedNormException refused(Path output, String why) {
    return new EmbedNormException("Cannot write output '" + output + "': " + why);
  }
}
