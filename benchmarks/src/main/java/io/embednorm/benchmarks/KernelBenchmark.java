package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

import io.embednorm.engine.BFloat16;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Float16;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.cuda.CudaAvailability;
import io.embednorm.engine.cuda.CudaContext;
import io.embednorm.engine.cuda.CudaEngine;
import io.embednorm.engine.cuda.KernelLaunches;
import io.embednorm.engine.cuda.LaunchPlan;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * Times each op's kernel against a device-to-device copy of the same bytes, in one run, on the GPU
 * host: about 1 GiB of input per width, device events, warm-up, median of many repeats. Effective
 * bandwidth counts the input read once and the output written once.
 *
 * <p>Each line also times {@link CopyKernel}, a copy kernel that moves bytes as ours do at best
 * (16-byte loads and stores, four loads in flight per thread), over the same bytes: {@code kcopy}
 * is its GB/s on a grid of one pass over the buffer, {@code %copy} that as a share of the driver's
 * copy, and {@code %res} the share on a grid of only the blocks the device holds at once (each
 * looping). They tell what any kernel reaching memory this way can get on the device.
 *
 * <pre>
 * java -cp ... io.embednorm.benchmarks.KernelBenchmark [--types f32,bf16,f16]
 *     [--widths 32,64,...] [--gib 1] [--repeats 30] [--ops rms_norm,...] [--rounds 1]
 * </pre>
 *
 * <p>With {@code --rounds R} each width times the copy and every op R times in turn, and each op's
 * figure is the median over the rounds of its GB/s and of its share of the copy timed in the same
 * round: single runs on a shared GPU host move by a point or two from one to the next, and
 * alternating keeps a slow spell from landing on one side of a ratio.
 */
public final class KernelBenchmark {
  private static final int[] WIDTHS = {
    32, 64, 128, 256, 300, 512, 768, 769, 1024, 2048, 4096, 8192, 16384, 32768
  };

  private KernelBenchmark() {}

  public static void main(String[] args) {
    List<ElementType> types = List.of(ElementType.FLOAT32, ElementType.BFLOAT16);
    int[] widths = WIDTHS;
    List<Op> ops = List.of(Op.values());
    double gib = 1;
    int repeats = 30;
    int rounds = 1;
    for (int i = 0; i + 1 < args.length; i += 2) {
      String value = args[i + 1];
      switch (args[i]) {
        case "--types" ->
            types = Arrays.stream(value.split(",")).map(KernelBenchmark::type).toList();
        case "--widths" ->
            widths = Arrays.stream(value.split(",")).mapToInt(Integer::parseInt).toArray();
        case "--ops" -> ops = Arrays.stream(value.split(",")).map(Op::fromName).toList();
        case "--gib" -> gib = Double.parseDouble(value);
        case "--repeats" -> repeats = Integer.parseInt(value);
        case "--rounds" -> rounds = Integer.parseInt(value);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (rounds < 1 || repeats < 1) {
      throw new IllegalArgumentException(
          "Cannot benchmark: --rounds and --repeats must be at least 1, got "
              + rounds
              + " and "
              + repeats);
    }
    String unavailable = CudaEngine.unavailableReason();
    if (unavailable == null && !CopyKernel.isBundled()) {
      unavailable = "this jar was built without the copy kernel (-Dembednorm.cpuOnly)";
    }
    if (unavailable != null) {
      System.err.println("KernelBenchmark: no usable GPU: " + unavailable);
      System.exit(2);
    }
    KernelLaunches kernels = KernelLaunches.open(0);
    CudaContext context = kernels.context();
    CopyKernel copy = new CopyKernel(context);
    System.out.printf(
        Locale.ROOT,
        "# %s, sm_%d, %d SMs, memory peak %.0f GB/s; %.2f GiB of input per width; median of %d;"
            + " %d round(s); GB/s = (read + write) / time%n",
        CudaAvailability.get().deviceName(),
        context.computeCapability(),
        context.multiprocessors(),
        context.memoryBandwidth() / 1e9,
        gib,
        repeats,
        rounds);
    StringBuilder header =
        new StringBuilder(
            String.format(
                "%-5s %6s %9s %8s %6s %6s %5s",
                "type", "width", "rows", "copy", "kcopy", "%copy", "%res"));
    for (Op op : ops) {
      header.append(String.format(" %20s", op.sqlName()));
    }
    List<String> table = new ArrayList<>();
    table.add(header.toString());
    for (ElementType type : types) {
      for (int width : widths) {
        table.add(measure(kernels, copy, type, width, ops, gib, repeats, rounds));
        System.out.println(table.get(table.size() - 1));
      }
    }
    System.out.println();
    System.out.println("GB/s (% of the copy) for each op:");
    table.forEach(System.out::println);
  }

  private static String measure(
      KernelLaunches kernels,
      CopyKernel copyKernel,
      ElementType type,
      int width,
      List<Op> ops,
      double gib,
      int repeats,
      int rounds) {
    try (Workload workload = new Workload(kernels, type, width, gib, repeats)) {
      double kernelCopy = workload.copyKernelGbs(copyKernel, repeats, false);
      double residentCopy = workload.copyKernelGbs(copyKernel, repeats, true);
      boolean vectorizable = (long) width * type.byteWidth() % 16 == 0;
      List<LaunchPlan> plans = new ArrayList<>();
      for (Op op : ops) {
        plans.add(kernels.plan(op, type, width, workload.rows, vectorizable));
      }
      double[] copies = new double[rounds];
      double[][] rates = new double[ops.size()][rounds];
      double[][] shares = new double[ops.size()][rounds];
      for (int round = 0; round < rounds; round++) {
        copies[round] = rounds == 1 ? workload.copyGbs : workload.driverCopyGbs(repeats);
        for (int i = 0; i < ops.size(); i++) {
          rates[i][round] = workload.gbs(plans.get(i), Normalization.of(ops.get(i)), repeats);
          shares[i][round] = rates[i][round] / copies[round];
        }
      }
      double copy = medianOf(copies);
      StringBuilder row =
          new StringBuilder(
              String.format(
                  Locale.ROOT,
                  "%-5s %6d %9d %8.0f %6.0f %5.1f%% %4.1f%%",
                  typeName(type),
                  width,
                  workload.rows,
                  copy,
                  kernelCopy,
                  100 * kernelCopy / copy,
                  100 * residentCopy / copy));
      for (int i = 0; i < ops.size(); i++) {
        row.append(
            String.format(
                Locale.ROOT, " %13.0f (%3.0f%%)", medianOf(rates[i]), 100 * medianOf(shares[i])));
      }
      LaunchPlan plan = plans.get(plans.size() - 1);
      row.append("  ")
          .append(plan.kernel())
          .append(" group ")
          .append(plan.group())
          .append(" block ")
          .append(plan.block())
          .append(" grid ")
          .append(plan.grid());
      return row.toString();
    }
  }

  /** The median of {@code values} (the mean of the middle two for an even count). */
  private static double medianOf(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int middle = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }

  /**
   * One width's rows on the device: about {@code gib} GiB of random input, an output of the same
   * size, a stream, and the bandwidth of a device-to-device copy of those bytes. Closing frees all.
   */
  private static final class Workload implements AutoCloseable {
    private final KernelLaunches kernels;
    private final int width;
    private final long rows;
    private final long bytes;
    private final CUstream stream = new CUstream();
    private final KernelLaunches.DeviceMemory input;
    private final KernelLaunches.DeviceMemory output;
    private final double copyGbs;

    Workload(KernelLaunches kernels, ElementType type, int width, double gib, int repeats) {
      this.kernels = kernels;
      this.width = width;
      this.rows = Math.max(1, (long) (gib * (1L << 30) / ((long) width * type.byteWidth())));
      this.bytes = rows * width * type.byteWidth();
      cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
      this.input = KernelLaunches.allocate(kernels.context(), bytes, "benchmark input");
      this.output = KernelLaunches.allocate(kernels.context(), bytes, "benchmark output");
      fillRandom(input, bytes, type);
      this.copyGbs = driverCopyGbs(repeats);
    }

    /** Effective GB/s of the driver's device-to-device copy of the input into the output. */
    double driverCopyGbs(int repeats) {
      return gigabytesPerSecond(
          EventTimes.median(
              stream,
              repeats,
              () -> cuMemcpyDtoDAsync(output.pointer(), input.pointer(), bytes, stream)));
    }

    /** Effective GB/s of the copy kernel copying the input into the output. */
    double copyKernelGbs(CopyKernel copy, int repeats, boolean resident) {
      int grid = copy.grid(bytes, resident);
      return gigabytesPerSecond(
          EventTimes.median(
              stream,
              repeats,
              () -> copy.launch(grid, input.pointer(), output.pointer(), bytes, stream)));
    }

    /** Effective GB/s of {@code plan} normalizing the input into the output. */
    double gbs(LaunchPlan plan, Normalization normalization, int repeats) {
      return gigabytesPerSecond(
          EventTimes.median(
              stream,
              repeats,
              () ->
                  kernels.launch(
                      plan,
                      normalization,
                      stream,
                      input.pointer(),
                      output.pointer(),
                      rows,
                      width)));
    }

    /** Bytes read once and written once, over the time. */
    private double gigabytesPerSecond(double milliseconds) {
      return 2.0 * bytes / milliseconds / 1e6;
    }

    @Override
    public void close() {
      input.close();
      output.close();
      cuStreamDestroy(stream);
    }
  }

  /** Gaussian values in the element type: a 16 MiB random block copied over the whole buffer. */
  private static void fillRandom(KernelLaunches.DeviceMemory buffer, long bytes, ElementType type) {
    int blockBytes = (int) Math.min(bytes, 16 << 20);
    ByteBuffer block = ByteBuffer.allocateDirect(blockBytes).order(ByteOrder.LITTLE_ENDIAN);
    SplittableRandom random = new SplittableRandom(42);
    for (int at = 0; at + type.byteWidth() <= blockBytes; at += type.byteWidth()) {
      float value = (float) random.nextGaussian();
      switch (type) {
        case FLOAT64 -> block.putDouble(at, value);
        case FLOAT32 -> block.putFloat(at, value);
        case FLOAT16 -> block.putShort(at, Float16.fromFloat(value));
        case BFLOAT16 -> block.putShort(at, BFloat16.fromFloat(value));
      }
    }
    for (long at = 0; at < bytes; at += blockBytes) {
      long length = Math.min(blockBytes, bytes - at);
      cuMemcpyHtoD(buffer.pointer().withByteOffset(at), Pointer.to(block), length);
    }
  }

  private static ElementType type(String name) {
    return switch (name.trim()) {
      case "f32", "float32" -> ElementType.FLOAT32;
      case "bf16", "bfloat16" -> ElementType.BFLOAT16;
      case "f16", "float16" -> ElementType.FLOAT16;
      case "f64", "float64" -> ElementType.FLOAT64;
      default -> throw new IllegalArgumentException("unknown type " + name);
    };
  }

  /** The suffix of the type's kernels, as the table prints it. */
  private static String typeName(ElementType type) {
    return switch (type) {
      case FLOAT16 -> "f16";
      case BFLOAT16 -> "bf16";
      case FLOAT32 -> "f32";
      case FLOAT64 -> "f64";
    };
  }
}
