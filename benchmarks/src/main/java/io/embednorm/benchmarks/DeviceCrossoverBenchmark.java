package io.embednorm.benchmarks;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.Arrays;
import java.util.Locale;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;

/**
 * Where the GPU starts to pay for one Arrow call: the median time of one {@code normalize} call on
 * ordinary Arrow memory ({@link RootAllocator}), on the CPU engine and on the GPU, for calls from
 * kibibytes to hundreds of mebibytes, and what {@code auto} does with each size, all in one run.
 * The sizes where {@code auto} takes the CPU should be those where the CPU column is the faster.
 *
 * <pre>
 * java -cp ... io.embednorm.benchmarks.DeviceCrossoverBenchmark [--width 768] [--op rms_norm]
 *     [--kib 16,64,256,1024,4096,16384,65536,262144] [--repeats 9]
 * </pre>
 */
public final class DeviceCrossoverBenchmark {
  private static final long WARM_UP_NANOS = 500_000_000L;

  private DeviceCrossoverBenchmark() {}

  public static void main(String[] arguments) {
    int width = 768;
    Op op = Op.RMS_NORM;
    long[] kibibytes = {16, 64, 256, 1024, 4096, 16384, 65536, 262144};
    int repeats = 9;
    for (int i = 0; i < arguments.length; i += 2) {
      String value = arguments[i + 1];
      switch (arguments[i]) {
        case "--width" -> width = Integer.parseInt(value);
        case "--op" -> op = Op.fromName(value);
        case "--kib" ->
            kibibytes = Arrays.stream(value.split(",")).mapToLong(Long::parseLong).toArray();
        case "--repeats" -> repeats = Integer.parseInt(value);
        default -> throw new IllegalArgumentException("unknown option " + arguments[i]);
      }
    }
    Normalization normalization = Normalization.of(op);
    try (RootAllocator allocator = new RootAllocator();
        ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
        ArrowNormalizer gpu = ArrowNormalizer.create(allocator, DeviceChoice.GPU);
        ArrowNormalizer auto = ArrowNormalizer.create(allocator, DeviceChoice.AUTO)) {
      System.out.printf(
          Locale.ROOT,
          "width %d, %s, ordinary Arrow memory, median of %d calls each%n" + "cpu: %s%ngpu: %s%n%n",
          width,
          op.sqlName(),
          repeats,
          cpu.engineDescription(),
          gpu.engineDescription());
      System.out.println("| call | rows | cpu ms | gpu ms | faster | auto ms | auto ran on |");
      System.out.println("|---|---|---|---|---|---|---|");
      for (long size : kibibytes) {
        int rows = (int) Math.max(1, size * 1024 / ((long) width * Float.BYTES));
        try (FieldVector batch = PipelineBenchmark.randomBatch(allocator, rows, width)) {
          double cpuMillis = medianMillis(cpu, batch, normalization, repeats);
          double gpuMillis = medianMillis(gpu, batch, normalization, repeats);
          double autoMillis = medianMillis(auto, batch, normalization, repeats);
          System.out.printf(
              Locale.ROOT,
              "| %s | %d | %.3f | %.3f | %s | %.3f | %s |%n",
              size >= 1024 ? (size / 1024) + " MiB" : size + " KiB",
              rows,
              cpuMillis,
              gpuMillis,
              cpuMillis <= gpuMillis ? "cpu" : "gpu",
              autoMillis,
              auto.deviceFor(batch).name().toLowerCase(Locale.ROOT));
        }
      }
    }
  }

  /**
   * The median wall time of one call, after calls that are not counted: at least three and for at
   * least half a second, so that small calls are timed compiled rather than interpreted.
   */
  private static double medianMillis(
      ArrowNormalizer normalizer, FieldVector batch, Normalization normalization, int repeats) {
    long warmUpEnds = System.nanoTime() + WARM_UP_NANOS;
    for (int warmUp = 0; warmUp < 3 || System.nanoTime() < warmUpEnds; warmUp++) {
      normalizer.normalize(batch, normalization).close();
    }
    double[] millis = new double[repeats];
    for (int repeat = 0; repeat < repeats; repeat++) {
      long started = System.nanoTime();
      normalizer.normalize(batch, normalization).close();
      millis[repeat] = (System.nanoTime() - started) / 1e6;
    }
    Arrays.sort(millis);
    return millis[repeats / 2];
  }
}
