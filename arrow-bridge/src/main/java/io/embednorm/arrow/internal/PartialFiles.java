package io.embednorm.arrow.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names of temporary output files, {@code <name>.embednorm-partial-<pid>} beside the output (a
 * suffix {@code -<n>} when one process writes the same output twice at once), and their removal
 * when the process that wrote them is gone (a {@code kill -9}, a crash, a power cut): the next
 * write of the same output removes them and says so in one line on stderr. Only processes of this
 * machine are known; a file written by a live process is never touched.
 */
final class PartialFiles {
  static final String MARK = ".embednorm-partial-";

  private PartialFiles() {}

  /** The name of the {@code attempt}-th (from 0) temporary file for {@code target}. */
  static Path name(Path target, int attempt) {
    String name =
        target.getFileName()
            + MARK
            + ProcessHandle.current().pid()
            + (attempt == 0 ? "" : "-" + attempt);
    return target.resolveSibling(name);
  }

  /** Removes temporary files of {@code target} whose process is gone, reporting each on stderr. */
  static void removeLeftovers(Path target) throws IOException {
    Pattern pattern =
        Pattern.compile(
            Pattern.quote(target.getFileName().toString() + MARK) + "(\\d{1,18})(-\\d+)?");
    String prefix = target.getFileName() + MARK;
    try (DirectoryStream<Path> siblings =
        Files.newDirectoryStream(
            target.getParent(), sibling -> sibling.getFileName().toString().startsWith(prefix))) {
      for (Path sibling : siblings) {
        Matcher matcher = pattern.matcher(sibling.getFileName().toString());
        if (matcher.matches()
            && Files.isRegularFile(sibling)
            && deleteLeftOver(sibling, Long.parseLong(matcher.group(1)))) {
          System.err.println(
              "embednorm: removed '"
                  + sibling
                  + "', a partial output left by an interrupted run (process "
                  + matcher.group(1)
                  + ")");
        }
      }
    }
  }

  /** Deletes {@code file} if the process {@code pid} that wrote it is gone; whether it did. */
  private static boolean deleteLeftOver(Path file, long pid) throws IOException {
    if (pid == ProcessHandle.current().pid()) {
      return InFlightFiles.deleteUnlessInFlight(file);
    }
    boolean gone = ProcessHandle.of(pid).map(process -> !process.isAlive()).orElse(true);
    return gone && Files.deleteIfExists(file);
  }
}
