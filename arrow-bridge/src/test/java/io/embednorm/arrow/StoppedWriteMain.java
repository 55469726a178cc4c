package io.embednorm.arrow;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.file.Path;

/**
 * Normalizes {@code args[0]} into {@code args[1]} on the CPU and, after the first batch (the
 * temporary output written in part), prints "writing" and waits to be stopped: a write that is
 * deterministically in flight for {@link OutputFilesTest}.
 */
public final class StoppedWriteMain {
  private StoppedWriteMain() {}

  public static void main(String[] args) {
    ArrowFiles.normalizeFile(
        Path.of(args[0]),
        Path.of(args[1]),
        "embedding",
        Normalization.of(Op.RMS_NORM),
        DeviceChoice.CPU,
        rows -> {
          System.out.println("writing");
          System.out.flush();
          try {
            Thread.sleep(Long.MAX_VALUE);
          } catch (InterruptedException stopped) {
            Thread.currentThread().interrupt();
          }
        });
  }
}
