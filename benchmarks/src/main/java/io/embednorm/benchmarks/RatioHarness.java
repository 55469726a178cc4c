package io.embednorm.benchmarks;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.cpu.CpuEngine;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The CPU engine against a copy of the same bytes, timed in turn in one JVM: one op at one width,
 * on 1 and 2 threads, {@code rounds} rounds of (copy, op), and the median of each round's ratio.
 *
 * <p>Why beside JMH: on a shared 2-core host the copy and the engine run at speeds that drift by a
 * third within minutes, and JMH measures them in separate forks at separate times, so its
 * percentages of the copy carry that drift. Here each round's copy and op run back to back on the
 * same buffers, so the ratio holds still where the absolute figures do not. One JVM per cell
 * ({@code benchmarks/ratios.sh}) keeps one op's profile from shaping another's compilation.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -XX:PerMethodTrapLimit=1000 -Dembednorm.cpu.warmup=false -Xmx2g \
 *   -XX:MaxDirectMemorySize=2g -cp benchmarks/target/benchmarks.jar \
 *   io.embednorm.benchmarks.RatioHarness OP WIDTH [ROUNDS [THREADS,...]]
 * </pre>
 *
 * Prints one line per thread count (1 then 2 unless given, e.g. {@code 2,1}): op, width, threads,
 * copy GB/s, op GB/s (medians) and the median, lowest and highest per-round percentage of the copy.
 * GB/s counts bytes read plus bytes written.
 */
public final class RatioHarness {
  private static final int RUNS_PER_ROUND = 3;
  private static final long WARM_UP_NANOS = 3_000_000_000L;

  private RatioHarness() {}

  public static void main(String[] arguments) throws Exception {
    if (arguments.length < 2) {
      System.err.println("usage: RatioHarness OP WIDTH [ROUNDS [THREADS,...]]");
      System.exit(2);
    }
    Op op = Op.valueOf(arguments[0].toUpperCase(Locale.ROOT));
    int width = Integer.parseInt(arguments[1]);
    int rounds = arguments.length > 2 ? Integer.parseInt(arguments[2]) : 7;
    int[] threadCounts =
        arguments.length > 3
            ? Arrays.stream(arguments[3].split(",")).mapToInt(Integer::parseInt).toArray()
            : new int[] {1, 2};
    ByteBuffer input = Workload.input();
    ByteBuffer output = Workload.output();
    Normalization normalization = Normalization.of(op);
    RowBatch batch =
        RowBatch.fixedWidth(ElementType.FLOAT32, Workload.ELEMENTS / width, width, input, output);
    for (int threads : threadCounts) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try (CpuEngine engine = new CpuEngine(threads)) {
        int parts = threads;
        Runnable normalize = () -> engine.normalize(normalization, batch);
        Runnable timedCopy = () -> copy(input, output, pool, parts);
        for (long start = System.nanoTime(); System.nanoTime() - start < WARM_UP_NANOS; ) {
          normalize.run();
          timedCopy.run();
        }
        double[] copyRates = new double[rounds];
        double[] opRates = new double[rounds];
        double[] ratios = new double[rounds];
        for (int round = 0; round < rounds; round++) {
          copyRates[round] = rate(timedCopy);
          opRates[round] = rate(normalize);
          ratios[round] = 100 * opRates[round] / copyRates[round];
        }
        System.out.printf(
            Locale.ROOT,
            "%-12s %6d %2d  copy %6.2f  op %6.2f GB/s  %5.1f %% (%5.1f-%5.1f)  %s%n",
            op.name().toLowerCase(Locale.ROOT),
            width,
            threads,
            median(copyRates),
            median(opRates),
            median(ratios),
            Arrays.stream(ratios).min().orElse(0),
            Arrays.stream(ratios).max().orElse(0),
            engine.description());
      } finally {
        pool.shutdown();
      }
    }
  }

  /** GB/s (read + written) of the fastest of a few runs: the least disturbed by the host. */
  private static double rate(Runnable work) {
    long best = Long.MAX_VALUE;
    for (int run = 0; run < RUNS_PER_ROUND; run++) {
      long start = System.nanoTime();
      work.run();
      best = Math.min(best, System.nanoTime() - start);
    }
    return 2.0 * Workload.BYTES / best;
  }

  /** The copy on {@code parts} threads, each a contiguous share, as the engine splits rows. */
  private static void copy(ByteBuffer input, ByteBuffer output, ExecutorService pool, int parts) {
    if (parts == 1) {
      output.put(0, input, 0, Workload.BYTES);
      return;
    }
    int share = Workload.BYTES / parts;
    List<Future<?>> others = new ArrayList<>();
    for (int part = 1; part < parts; part++) {
      int start = part * share;
      int length = part == parts - 1 ? Workload.BYTES - start : share;
      others.add(pool.submit(() -> output.put(start, input, start, length)));
    }
    output.put(0, input, 0, share);
    try {
      for (Future<?> other : others) {
        other.get();
      }
    } catch (Exception failure) {
      throw new IllegalStateException(failure);
    }
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int middle = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }
}
