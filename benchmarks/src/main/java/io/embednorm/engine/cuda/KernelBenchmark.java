package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;

import io.embednorm.engine.BFloat16;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Float16;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * Times each op's kernel against a device-to-device copy of the same bytes, in one run, on the GPU
 * host: about 1 GiB of input per width, device events, warm-up, median of many repeats. Effective
 * bandwidth counts the input read once and the output written once.
 *
 * <p>Each line also times {@code embednorm_copy_u8x16}, a copy kernel that moves bytes as ours do
 * at best (16-byte loads and stores, four loads in flight per thread), over the same bytes: {@code
 * kcopy} is its GB/s on a grid of one pass over the buffer, {@code %copy} that as a share of the
 * driver's copy, and {@code %res} the share on a grid of only the blocks the device holds at once
 * (each looping). They tell what any kernel reaching memory this way can get on the device.
 *
 * <pre>
 * java -cp ... io.embednorm.engine.cuda.KernelBenchmark [--types f32,bf16,f16]
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
    boolean alternatives = false;
    List<String> options = new ArrayList<>(Arrays.asList(args));
    if (options.remove("--alternatives")) {
      alternatives = true;
    }
    args = options.toArray(new String[0]);
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
    if (alternatives && rounds > 1) {
      throw new IllegalArgumentException(
          "Cannot benchmark: --alternatives times each plan once; leave out --rounds");
    }
    String unavailable = CudaEngine.unavailableReason();
    if (unavailable != null) {
      System.err.println("KernelBenchmark: no usable GPU: " + unavailable);
      System.exit(2);
    }
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
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
    if (alternatives) {
      for (ElementType type : types) {
        for (int width : widths) {
          for (Op op : ops) {
            System.out.println(compareAlternatives(context, module, type, width, op, gib, repeats));
          }
        }
      }
      return;
    }
    for (ElementType type : types) {
      for (int width : widths) {
        table.add(measure(context, module, type, width, ops, gib, repeats, rounds));
        System.out.println(table.get(table.size() - 1));
      }
    }
    System.out.println();
    System.out.println("GB/s (% of the copy) for each op:");
    table.forEach(System.out::println);
  }

  private static String measure(
      CudaContext context,
      KernelModule module,
      ElementType type,
      int width,
      List<Op> ops,
      double gib,
      int repeats,
      int rounds) {
    try (Workload workload = new Workload(type, width, gib, repeats)) {
      double kernelCopy = workload.copyKernelGbs(context, module, repeats, false);
      double residentCopy = workload.copyKernelGbs(context, module, repeats, true);
      boolean vectorizable = width % LaunchPlan.vectorWidth(type) == 0;
      List<LaunchPlan> plans = new ArrayList<>();
      for (Op op : ops) {
        plans.add(
            LaunchPlan.planContiguous(
                op, type, width, workload.rows, vectorizable, context, module));
      }
      double[] copies = new double[rounds];
      double[][] rates = new double[ops.size()][rounds];
      double[][] shares = new double[ops.size()][rounds];
      for (int round = 0; round < rounds; round++) {
        copies[round] = rounds == 1 ? workload.copyGbs : workload.driverCopyGbs(repeats);
        for (int i = 0; i < ops.size(); i++) {
          rates[i][round] =
              workload.gbs(plans.get(i), module, Normalization.of(ops.get(i)), repeats);
          shares[i][round] = rates[i][round] / copies[round];
        }
      }
      double copy = medianOf(copies);
      StringBuilder row =
          new StringBuilder(
              String.format(
                  Locale.ROOT,
                  "%-5s %6d %9d %8.0f %6.0f %5.1f%% %4.1f%%",
                  LaunchPlan.typeName(type),
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

  /** Times every plan that can run this width and names the fastest, next to the planner's. */
  private static String compareAlternatives(
      CudaContext context,
      KernelModule module,
      ElementType type,
      int width,
      Op op,
      double gib,
      int repeats) {
    try (Workload workload = new Workload(type, width, gib, repeats)) {
      long rows = workload.rows;
      boolean vectorizable = width % LaunchPlan.vectorWidth(type) == 0;
      int pack = LaunchPlan.vectorWidth(type);
      String stem = LaunchPlan.kernelStem(op, type);
      List<LaunchPlan> plans = new ArrayList<>();
      plans.add(LaunchPlan.planContiguous(op, type, width, rows, vectorizable, context, module));
      if (!vectorizable && LaunchPlan.tileFits(type, width)) {
        plans.add(LaunchPlan.plan(op, type, width, rows, false, context, module));
        String planned = LaunchPlan.tileKernel(op, type, width);
        for (int tileBytes : new int[] {24 << 10, 32 << 10, 40 << 10, 48 << 10}) {
          plans.add(LaunchPlan.tile(planned, type, width, rows, tileBytes));
        }
      }
      for (int block : new int[] {64, 128, 256, 512, 1024}) {
        if ((long) block * pack > 8L * width && block > 64) {
          continue;
        }
        int cacheBytes = (width + pack) * (type == ElementType.FLOAT64 ? 8 : 4);
        String cached = "embednorm_block_" + stem + "_p" + pack + "_cached";
        if (cacheBytes <= module.dynamicSharedMemoryLimit(cached)) {
          int active = LaunchPlan.occupancy(module, cached, block, cacheBytes);
          if (active > 0) {
            plans.add(
                new LaunchPlan(
                    cached,
                    "block-cached",
                    LaunchPlan.grid(rows, active, context),
                    block,
                    cacheBytes,
                    1,
                    pack));
          }
        }
        String uncached = "embednorm_block_" + stem + "_p" + pack + "_uncached";
        int active = Math.max(1, LaunchPlan.occupancy(module, uncached, block, 0));
        plans.add(
            new LaunchPlan(
                uncached,
                "block-uncached",
                LaunchPlan.grid(rows, active, context),
                block,
                0,
                1,
                pack));
      }
      if (vectorizable
          && type != ElementType.FLOAT64
          && context.computeCapability() >= 90
          && width > 32 * LaunchPlan.maxWarpPacks(type, pack) * pack) {
        for (int cluster = 1; cluster <= LaunchPlan.MAX_CLUSTER; cluster *= 2) {
          for (int block = 32; block <= LaunchPlan.MAX_CLUSTER_BLOCK; block *= 2) {
            long capacity = (long) block * cluster * LaunchPlan.clusterElementsPerThread(type);
            if (capacity >= width && capacity < 2L * width + 32L * cluster * 16) {
              plans.add(LaunchPlan.cluster(op, type, rows, block, cluster, context, module));
            }
            if (cluster <= 2
                && (block <= LaunchPlan.CLUSTER_BLOCK || cluster == 1)
                && 2 * capacity >= width
                && 2 * capacity < 2L * width + 32L * cluster * 16) {
              plans.add(LaunchPlan.cluster(op, type, rows, block, cluster, 128, context, module));
            }
          }
        }
      }
      Normalization normalization = Normalization.of(op);
      double copy = workload.copyGbs;
      double planned = workload.gbs(plans.get(0), module, normalization, repeats);
      double best = planned;
      LaunchPlan fastest = plans.get(0);
      StringBuilder all = new StringBuilder();
      for (LaunchPlan plan : plans.subList(1, plans.size())) {
        double gbs = workload.gbs(plan, module, normalization, repeats);
        all.append(
            String.format(
                Locale.ROOT,
                "%n      %-14s block %4d group %2d grid %8d %3.0f%%",
                label(plan),
                plan.block(),
                plan.group(),
                plan.grid(),
                100 * gbs / copy));
        if (gbs > best) {
          best = gbs;
          fastest = plan;
        }
      }
      return String.format(
          Locale.ROOT,
          "%-5s %6d %-13s copy %5.0f  planned %5.0f (%3.0f%%) %-14s best %5.0f (%3.0f%%) %s%s",
          LaunchPlan.typeName(type),
          width,
          op.sqlName(),
          copy,
          planned,
          100 * planned / copy,
          label(plans.get(0)),
          best,
          100 * best / copy,
          label(fastest) + " block " + fastest.block() + " group " + fastest.group(),
          all);
    }
  }

  /**
   * One width's rows on the device: about {@code gib} GiB of random input, an output of the same
   * size, a stream, and the bandwidth of a device-to-device copy of those bytes. Closing frees all.
   */
  private static final class Workload implements AutoCloseable {
    private final int width;
    private final long rows;
    private final long bytes;
    private final CUstream stream = new CUstream();
    private final DeviceBuffer input;
    private final DeviceBuffer output;
    private final double copyGbs;

    Workload(ElementType type, int width, double gib, int repeats) {
      this.width = width;
      this.rows = Math.max(1, (long) (gib * (1L << 30) / ((long) width * type.byteWidth())));
      this.bytes = rows * width * type.byteWidth();
      cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
      this.input = new DeviceBuffer(bytes, "benchmark input");
      this.output = new DeviceBuffer(bytes, "benchmark output");
      fillRandom(input, bytes, type);
      this.copyGbs = driverCopyGbs(repeats);
    }

    /** Effective GB/s of the driver's device-to-device copy of the input into the output. */
    double driverCopyGbs(int repeats) {
      return gigabytesPerSecond(
          median(
              stream,
              repeats,
              () -> cuMemcpyDtoDAsync(output.pointer(), input.pointer(), bytes, stream)));
    }

    /** Effective GB/s of {@link #launchCopy} copying the input into the output. */
    double copyKernelGbs(CudaContext context, KernelModule module, int repeats, boolean resident) {
      int grid = copyGrid(context, module, bytes, resident);
      return gigabytesPerSecond(
          median(
              stream,
              repeats,
              () -> launchCopy(module, grid, input.pointer(), output.pointer(), bytes, stream)));
    }

    /** Effective GB/s of {@code plan} normalizing the input into the output. */
    double gbs(LaunchPlan plan, KernelModule module, Normalization normalization, int repeats) {
      return gigabytesPerSecond(
          median(
              stream,
              repeats,
              () ->
                  CudaLauncher.launch(
                      plan,
                      module,
                      stream,
                      normalization,
                      input.pointer(),
                      output.pointer(),
                      new CUdeviceptr(),
                      rows,
                      width,
                      new CUdeviceptr(),
                      new CUdeviceptr())));
    }

    /** Bytes read once and written once, over the time. */
    private double gigabytesPerSecond(double milliseconds) {
      return 2.0 * bytes / milliseconds / 1e6;
    }

    @Override
    public void close() {
      input.close();
      output.close();
      jcuda.driver.JCudaDriver.cuStreamDestroy(stream);
    }
  }

  /** The copy-ceiling kernel (embednorm_kernels.cu): 16-byte loads and stores, any byte count. */
  static final String COPY_KERNEL = "embednorm_copy_u8x16";

  /** Loads in flight per thread of {@link #COPY_KERNEL} (kCopyLoads there). */
  private static final int COPY_LOADS = 4;

  /**
   * Blocks of 256 threads for {@link #launchCopy}: one pass (each thread copies {@link #COPY_LOADS}
   * packs of 16 bytes once), or only as many as the device holds at once ({@code resident}), each
   * thread looping over the buffer.
   */
  static int copyGrid(CudaContext context, KernelModule module, long bytes, boolean resident) {
    long onePass = Math.max(1, ceilDiv(bytes / 16, 256L * COPY_LOADS));
    return resident
        ? LaunchPlan.grid(onePass, LaunchPlan.occupancy(module, COPY_KERNEL, 256, 0), context)
        : (int) Math.min(onePass, Integer.MAX_VALUE);
  }

  private static long ceilDiv(long value, long divisor) {
    return (value + divisor - 1) / divisor;
  }

  /** Enqueues a copy of {@code bytes} (16-byte aligned buffers) by {@link #COPY_KERNEL}. */
  static void launchCopy(
      KernelModule module,
      int grid,
      CUdeviceptr input,
      CUdeviceptr output,
      long bytes,
      CUstream stream) {
    Pointer parameters =
        Pointer.to(Pointer.to(input), Pointer.to(output), Pointer.to(new long[] {bytes}));
    cuLaunchKernel(
        module.function(COPY_KERNEL), grid, 1, 1, 256, 1, 1, 0, stream, parameters, null);
  }

  /** The median time in milliseconds of {@code work} on {@code stream}, after warm-up. */
  private static double median(CUstream stream, int repeats, Runnable work) {
    CUevent start = new CUevent();
    CUevent end = new CUevent();
    cuEventCreate(start, CUevent_flags.CU_EVENT_DEFAULT);
    cuEventCreate(end, CUevent_flags.CU_EVENT_DEFAULT);
    try {
      for (int i = 0; i < 5; i++) {
        work.run();
      }
      double[] times = new double[repeats];
      float[] elapsed = new float[1];
      for (int i = 0; i < repeats; i++) {
        cuEventRecord(start, stream);
        work.run();
        cuEventRecord(end, stream);
        cuEventSynchronize(end);
        cuEventElapsedTime(elapsed, start, end);
        times[i] = elapsed[0];
      }
      Arrays.sort(times);
      return times[repeats / 2];
    } finally {
      cuEventDestroy(start);
      cuEventDestroy(end);
    }
  }

  /** Gaussian values in the element type: a 16 MiB random block copied over the whole buffer. */
  private static void fillRandom(DeviceBuffer buffer, long bytes, ElementType type) {
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

  /** A plan's path, with {@code -b128} for the cluster kernels of 128 bytes a thread. */
  private static String label(LaunchPlan plan) {
    return plan.kernel().endsWith("_b128") ? plan.path() + "-b128" : plan.path();
  }
}
