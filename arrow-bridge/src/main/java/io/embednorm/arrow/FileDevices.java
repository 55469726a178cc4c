package io.embednorm.arrow;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.InternalSwitches;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The engine for normalizing one Arrow file. Under {@code auto}, a file smaller than {@code
 * embednorm.auto.gpuMinFileBytes} (by default every file) runs on the CPU engine without starting
 * or probing the GPU: the CPU's mapped path measured faster than the GPU's (docs/PERFORMANCE.md,
 * "User paths"). The reason says so, for the summary line, also on a host without a GPU.
 */
final class FileDevices {
  private FileDevices() {}

  /** The engine for {@code input} under {@code device}; the caller closes it. */
  static EngineSelection select(Path input, DeviceChoice device) {
    // The size first: probing the GPU starts the CUDA driver, which a file kept on the CPU would
    // wait for (a good part of a second on a GPU host).
    if (device == DeviceChoice.AUTO) {
      long bytes = size(input);
      if (bytes < 0) {
        return Engines.select(device); // reading the file will say what is wrong with it
      }
      long smallest = InternalSwitches.AUTO_GPU_MIN_FILE_BYTES.value();
      if (bytes < smallest) {
        return new EngineSelection(
            Engines.cpu(),
            String.format(
                Locale.ROOT,
                "auto chose cpu: the file's %s is below the %s from which the GPU is taken"
                    + " (embednorm.auto.gpuMinFileBytes; the CPU's mapped path is the faster)",
                mebibytes(bytes),
                mebibytes(smallest)));
      }
    }
    return Engines.select(device);
  }

  /** The file's size, or -1 where it cannot be read. */
  private static long size(Path input) {
    try {
      return Files.size(input);
    } catch (IOException unreadable) {
      return -1;
    }
  }

  private static String mebibytes(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
  }
}
