package io.embednorm.arrow;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.InternalSwitches;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The engine for normalizing one Arrow file. Under {@code auto}, a file smaller than {@code
 * embednorm.auto.gpuMinFileBytes} (by default every file) runs on the CPU engine without starting
 * or probing the GPU: the CPU's mapped path measured faster than the GPU's (docs/PERFORMANCE.md,
 * "User paths"). The reason says so, for the summary line, also on a host without a GPU.
 */
final class FileDevices {
  private FileDevices() {}

  /**
   * Starts selecting the engine for {@code input} under {@code device}: where that starts the CUDA
   * driver (a good part of a second), on a thread of its own, so that the caller reads the file
   * meanwhile; otherwise at once. The caller takes the selection with {@link Start#await()} and
   * closes it.
   */
  static Start start(Path input, DeviceChoice device) {
    if (device == DeviceChoice.CPU || (device == DeviceChoice.AUTO && staysOnCpu(input))) {
      return new Start(CompletableFuture.completedFuture(select(input, device)));
    }
    CompletableFuture<EngineSelection> selecting = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                selecting.complete(select(input, device));
              } catch (RuntimeException | Error failure) {
                selecting.completeExceptionally(failure);
              }
            },
            "embednorm-gpu-start");
    thread.setDaemon(true);
    thread.start();
    return new Start(selecting);
  }

  /** An engine selection under way; {@link #await()} once. */
  static final class Start {
    private final CompletableFuture<EngineSelection> selecting;

    private Start(CompletableFuture<EngineSelection> selecting) {
      this.selecting = selecting;
    }

    /**
     * The selection, once made; the caller closes it. Throws what selecting threw. When the wait is
     * interrupted, the selection is closed as soon as it is made.
     */
    EngineSelection await() {
      try {
        return selecting.get();
      } catch (ExecutionException failed) {
        if (failed.getCause() instanceof RuntimeException runtime) {
          throw runtime;
        }
        if (failed.getCause() instanceof Error error) {
          throw error;
        }
        throw new EmbedNormException("Cannot select a device: " + failed.getCause(), failed);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        selecting.thenAccept(EngineSelection::close);
        throw new EmbedNormException("Cannot select a device: interrupted while the GPU started");
      }
    }
  }

  /** Whether {@code auto} keeps {@code input} on the CPU without probing the GPU. */
  private static boolean staysOnCpu(Path input) {
    long bytes = size(input);
    return bytes >= 0 && bytes < InternalSwitches.AUTO_GPU_MIN_FILE_BYTES.value();
  }

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
