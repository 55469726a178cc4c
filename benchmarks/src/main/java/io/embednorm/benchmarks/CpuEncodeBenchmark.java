package io.embednorm.benchmarks;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Normalize-then-encode on the CPU engine (the figures beside {@link EncodeBenchmark}'s GPU ones):
 * per width, op and encoding, the median of {@code --repeats} calls over about {@code --mib} MiB of
 * float32 rows on {@code --threads} threads (default: every processor), as GB/s of float32 read
 * plus encoded bytes written, and as a share of a bulk copy moving as many bytes (half read, half
 * written) between direct buffers on as many threads, timed right before. The unfused op (float32
 * out) comes first in each width as {@code float32}. Arguments: {@code --widths 128,768,4096 --ops
 * l2_normalize,rms_norm --encodings float16,... --mib 256 --threads N --repeats 10}.
 */
public final class CpuEncodeBenchmark {
  private CpuEncodeBenchmark() {}

  public static void main(String[] args) throws Exception {
    EncodeOptions options = EncodeOptions.parse(args, Set.of("--mib", "--threads", "--repeats"));
    int mebibytes = (int) options.number("--mib", 256);
    int threads = (int) options.number("--threads", Runtime.getRuntime().availableProcessors());
    int repeats = (int) options.number("--repeats", 10);
    run(options.widths(), options.ops(), options.encodings(), mebibytes, threads, repeats);
  }

  private static void run(
      int[] widths,
      List<Op> ops,
      List<Encoding> encodings,
      int mebibytes,
      int threads,
      int repeats) {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (NormalizationEngine engine = Engines.cpu(threads)) {
      System.out.printf(
          Locale.ROOT,
          "# CPU engine: %s; %d threads; %d MiB of float32 input per width; median of %d;"
              + " GB/s = (float32 read + written) / time; %%copy = copy time / call time%n",
          engine.description(),
          threads,
          mebibytes,
          repeats);
      System.out.printf(
          Locale.ROOT,
          "%-13s %-9s %6s %9s %8s %8s %7s%n",
          "op",
          "encoding",
          "width",
          "rows",
          "GB/s",
          "copyGB/s",
          "%copy");
      for (int width : widths) {
        int rows = Math.max(1, (int) (((long) mebibytes << 20) / (4L * width)));
        long inputBytes = 4L * rows * width;
        ByteBuffer input = randomFloats(inputBytes);
        ByteBuffer output = ByteBuffer.allocateDirect((int) inputBytes);
        ByteBuffer scales = ByteBuffer.allocateDirect(4 * rows);
        ByteBuffer copyTarget = ByteBuffer.allocateDirect((int) inputBytes);
        for (Op op : ops) {
          Normalization normalization = Normalization.of(op);
          RowBatch batch = RowBatch.fixedWidth(ElementType.FLOAT32, rows, width, input, output);
          List<Encoding> columns = new ArrayList<>();
          columns.add(null); // the unfused op
          columns.addAll(encodings);
          for (Encoding encoding : columns) {
            long written =
                encoding == null
                    ? inputBytes
                    : (long) rows * encoding.rowBytes(width)
                        + (encoding.hasScales() ? 4L * rows : 0);
            long moved = inputBytes + written;
            double copySeconds =
                median(repeats, () -> copy(pool, threads, input, copyTarget, (int) (moved / 2)));
            Runnable call =
                encoding == null
                    ? () -> engine.normalize(normalization, batch)
                    : () ->
                        engine.normalizeEncoded(
                            normalization,
                            batch,
                            encoding.hasScales()
                                ? EncodedRows.withScales(encoding, output, scales)
                                : EncodedRows.of(encoding, output));
            double callSeconds = median(repeats, call::run);
            System.out.printf(
                Locale.ROOT,
                "%-13s %-9s %6d %9d %8.1f %8.1f %6.1f%%%n",
                op.sqlName(),
                encoding == null ? "float32" : encoding.optionName(),
                width,
                rows,
                moved / callSeconds / 1e9,
                moved / copySeconds / 1e9,
                100 * copySeconds / callSeconds);
          }
        }
      }
    } finally {
      pool.shutdown();
    }
  }

  private static ByteBuffer randomFloats(long bytes) {
    ByteBuffer buffer = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
    Random random = new Random(1);
    for (int i = 0; i < bytes / 4; i++) {
      buffer.putFloat(4 * i, (float) random.nextGaussian());
    }
    return buffer;
  }

  /** Copies the first {@code bytes} of {@code from} into {@code to}, split over the threads. */
  private static void copy(
      ExecutorService pool, int threads, ByteBuffer from, ByteBuffer to, int bytes) {
    int share = (bytes / threads + 63) & ~63;
    List<Future<?>> parts = new ArrayList<>();
    for (int start = 0; start < bytes; start += share) {
      int offset = start;
      int length = Math.min(share, bytes - start);
      parts.add(pool.submit(() -> to.put(offset, from, offset, length)));
    }
    try {
      for (Future<?> part : parts) {
        part.get();
      }
    } catch (Exception failure) {
      throw new IllegalStateException("Cannot copy for the yardstick: " + failure, failure);
    }
  }

  /**
   * Median seconds of {@code repeats} runs after warm-up runs for at least a second (the engine
   * moves to its SIMD passes once the JIT has compiled them).
   */
  private static double median(int repeats, Runnable work) {
    long warmUpEnd = System.nanoTime() + 1_000_000_000L;
    for (int run = 0; run < 3 || System.nanoTime() < warmUpEnd; run++) {
      work.run();
    }
    double[] seconds = new double[repeats];
    for (int i = 0; i < repeats; i++) {
      long started = System.nanoTime();
      work.run();
      seconds[i] = (System.nanoTime() - started) / 1e9;
    }
    Arrays.sort(seconds);
    return seconds[repeats / 2];
  }
}
