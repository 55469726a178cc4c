package io.embednorm.kernels.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.kernels.BFloat16;
import io.embednorm.kernels.ElementType;
import io.embednorm.kernels.Float16;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.Op;
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
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * Session-4 experiment (2026-11-22), not part of the build: for each type, width and op whose plan
 * is the warp path, times the planned kernel against the same kernel built with other rows per
 * lane and register caps ({@code <kernel>_r<R>_b<B>}, from rows_variants.cu), in alternating
 * rounds, and checks that every variant writes the same bytes as the planned kernel (rows per lane
 * must not change a bit). Also times copy kernels against cuMemcpyDtoD on each workload.
 *
 * <pre>java -cp ... io.embednorm.kernels.cuda.RowsExperiment f32,bf16 32,64,... [rounds]</pre>
 */
public final class RowsExperiment {
  private static final String[] SUFFIXES = {
    "_r1_b4", "_r2_b4", "_r4_b4", "_r2_b3", "_r4_b3", "_r1_b1", "_r1_b6", "_r1_b8", "_r2_b6"
  };
  private static final String[] COPIES = {
    "embednorm_copy_u8x16",
    "embednorm_copyx_l1",
    "embednorm_copyx_l2",
    "embednorm_copyx_l8",
    "embednorm_copyx_l4_cs",
    "embednorm_copyx_l8_cs"
  };
  private static final int REPEATS = 30;

  public static void main(String[] args) {
    boolean sweep = args[0].equals("copysweep");
    List<ElementType> types =
        sweep ? List.of() : Arrays.stream(args[0].split(",")).map(RowsExperiment::type).toList();
    int[] widths =
        sweep ? new int[0] : Arrays.stream(args[1].split(",")).mapToInt(Integer::parseInt).toArray();
    int rounds = Integer.parseInt(args[args.length - 1]);
    String unavailable = CudaEngine.unavailableReason();
    if (unavailable != null) {
      System.err.println("RowsExperiment: no usable GPU: " + unavailable);
      System.exit(2);
    }
    CudaContext context = CudaContext.of(0);
    KernelModule module = KernelModule.of(context);
    System.out.printf(
        Locale.ROOT,
        "# %s, sm_%d, %d SMs; 1 GiB of input; median of %d launches per timing; %d rounds%n",
        CudaAvailability.get().deviceName(),
        context.computeCapability(),
        context.multiprocessors(),
        REPEATS,
        rounds);
    if (args[0].equals("copysweep")) {
      copySweep(context, module, rounds);
      return;
    }
    for (ElementType type : types) {
      for (int width : widths) {
        run(context, module, type, width, rounds);
      }
    }
  }

  /**
   * 1 GiB copied by the copy kernels on grids of 1, 2, 4 and 8 resident blocks of 256 per SM (each
   * thread looping) and on one pass (each thread its loads once), against cuMemcpyDtoD.
   */
  private static void copySweep(CudaContext context, KernelModule module, int rounds) {
    long bytes = 1L << 30;
    CUstream stream = new CUstream();
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    try (DeviceBuffer input = new DeviceBuffer(bytes, "input");
        DeviceBuffer output = new DeviceBuffer(bytes, "output")) {
      fillRandom(input, bytes, ElementType.FLOAT32);
      List<String> labels = new ArrayList<>();
      List<Runnable> work = new ArrayList<>();
      labels.add("memcpy");
      work.add(() -> cuMemcpyDtoDAsync(output.pointer(), input.pointer(), bytes, stream));
      int sms = context.multiprocessors();
      String[] kernels = {"embednorm_copyx_l1", "embednorm_copyx_l2", "embednorm_copy_u8x16", "embednorm_copyx_l8"};
      int[] loads = {1, 2, 4, 8};
      for (int k = 0; k < kernels.length; k++) {
        String kernel = kernels[k];
        for (int perSm : new int[] {1, 2, 4, 8}) {
          int grid = perSm * sms;
          labels.add(kernel.replace("embednorm_", "") + " resident " + perSm + "/SM");
          work.add(() -> copy(module, kernel, grid, input, output, bytes, stream));
        }
        int onePass = (int) ((bytes / 16 + 256L * loads[k] - 1) / (256L * loads[k]));
        labels.add(kernel.replace("embednorm_", "") + " one pass " + onePass);
        work.add(() -> copy(module, kernel, onePass, input, output, bytes, stream));
      }
      double[][] times = new double[work.size()][rounds];
      for (int round = 0; round < rounds; round++) {
        for (int w = 0; w < work.size(); w++) {
          times[w][round] = median(stream, work.get(w));
        }
      }
      double memcpy = median(times[0]);
      for (int w = 0; w < work.size(); w++) {
        double ms = median(times[w]);
        System.out.printf(
            Locale.ROOT,
            "copysweep %-36s %6.0f GB/s %5.1f%% of memcpy%n",
            labels.get(w),
            2.0 * bytes / ms / 1e6,
            100 * memcpy / ms);
      }
    } finally {
      jcuda.driver.JCudaDriver.cuStreamDestroy(stream);
    }
  }

  private static void run(
      CudaContext context, KernelModule module, ElementType type, int width, int rounds) {
    long rows = (1L << 30) / ((long) width * type.byteWidth());
    long bytes = rows * width * type.byteWidth();
    CUstream stream = new CUstream();
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    try (DeviceBuffer input = new DeviceBuffer(bytes, "input");
        DeviceBuffer output = new DeviceBuffer(bytes, "output")) {
      fillRandom(input, bytes, type);
      String where = String.format(Locale.ROOT, "%-4s %5d", LaunchPlan.typeName(type), width);
      // Copies: the driver's, then each copy kernel on a persistent grid (and the shipped one on
      // a grid of one pass), alternating over the rounds.
      List<String> copyLabels = new ArrayList<>();
      List<Runnable> copies = new ArrayList<>();
      copyLabels.add("memcpy");
      copies.add(() -> cuMemcpyDtoDAsync(output.pointer(), input.pointer(), bytes, stream));
      for (String kernel : COPIES) {
        int grid =
            LaunchPlan.grid(Long.MAX_VALUE, LaunchPlan.occupancy(module, kernel, 256, 0), context);
        copyLabels.add(kernel.replace("embednorm_", "") + "/" + grid);
        copies.add(() -> copy(module, kernel, grid, input, output, bytes, stream));
      }
      long onePass = Math.max(1, (bytes / 16 + 1023) / 1024);
      copyLabels.add("copy_u8x16/onepass" + onePass);
      copies.add(
          () -> copy(module, "embednorm_copy_u8x16", (int) onePass, input, output, bytes, stream));
      double[][] copyTimes = new double[copies.size()][rounds];
      for (int round = 0; round < rounds; round++) {
        for (int c = 0; c < copies.size(); c++) {
          copyTimes[c][round] = median(stream, copies.get(c));
        }
      }
      // Each copy kernel must write the input's bytes.
      byte[] expected = sample(input, bytes);
      for (int c = 1; c < copies.size(); c++) {
        cuMemsetD8(output.pointer(), (byte) 0x5A, bytes);
        copies.get(c).run();
        cuStreamSynchronize(stream);
        if (!Arrays.equals(expected, sample(output, bytes))) {
          System.out.println(where + " COPY MISMATCH " + copyLabels.get(c));
        }
      }
      double memcpy = median(copyTimes[0]);
      StringBuilder line = new StringBuilder(where + " copy");
      for (int c = 0; c < copies.size(); c++) {
        double ms = median(copyTimes[c]);
        line.append(
            String.format(
                Locale.ROOT,
                "  %s %.0f GB/s %.1f%%",
                copyLabels.get(c),
                2.0 * bytes / ms / 1e6,
                100 * memcpy / ms));
      }
      System.out.println(line);

      boolean vectorizable = width % LaunchPlan.vectorWidth(type) == 0;
      for (Op op : Op.values()) {
        LaunchPlan planned = LaunchPlan.plan(op, type, width, rows, vectorizable, context, module);
        if (!planned.path().equals("warp")) {
          continue;
        }
        List<String> labels = new ArrayList<>();
        List<LaunchPlan> plans = new ArrayList<>();
        labels.add("default");
        plans.add(planned);
        for (String suffix : SUFFIXES) {
          String kernel = planned.kernel() + suffix;
          try {
            module.function(kernel);
          } catch (RuntimeException absent) {
            continue;
          }
          int lanes = Integer.parseInt(suffix.substring(2, 3));
          long rowsPerBlock = (LaunchPlan.WARP_PATH_BLOCK / 32L) * (32 / planned.group()) * lanes;
          int grid =
              LaunchPlan.grid(
                  (rows + rowsPerBlock - 1) / rowsPerBlock,
                  LaunchPlan.occupancy(module, kernel, LaunchPlan.WARP_PATH_BLOCK, 0),
                  context);
          labels.add(suffix.substring(1));
          plans.add(
              new LaunchPlan(
                  kernel,
                  "warp",
                  grid,
                  LaunchPlan.WARP_PATH_BLOCK,
                  0,
                  planned.group(),
                  planned.pack()));
        }
        Normalization normalization = Normalization.of(op);
        double[][] times = new double[plans.size()][rounds];
        for (int round = 0; round < rounds; round++) {
          for (int v = 0; v < plans.size(); v++) {
            LaunchPlan plan = plans.get(v);
            times[v][round] =
                median(
                    stream,
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
                            new CUdeviceptr()));
          }
        }
        // Same bytes from every variant.
        byte[] reference = null;
        String mismatch = "";
        for (int v = 0; v < plans.size(); v++) {
          cuMemsetD8(output.pointer(), (byte) 0x7F, bytes);
          CudaLauncher.launch(
              plans.get(v),
              module,
              stream,
              normalization,
              input.pointer(),
              output.pointer(),
              new CUdeviceptr(),
              rows,
              width,
              new CUdeviceptr(),
              new CUdeviceptr());
          cuStreamSynchronize(stream);
          byte[] got = sample(output, bytes);
          if (reference == null) {
            reference = got;
          } else if (!Arrays.equals(reference, got)) {
            mismatch += " MISMATCH:" + labels.get(v);
          }
        }
        StringBuilder result =
            new StringBuilder(
                String.format(
                    Locale.ROOT,
                    "%s %-12s %-40s rows/lane %d",
                    where,
                    op.sqlName(),
                    planned.kernel(),
                    LaunchPlan.rowsPerLane(op, planned.pack(), Integer.parseInt(
                        planned.kernel().substring(planned.kernel().lastIndexOf("_c") + 2)))));
        for (int v = 0; v < plans.size(); v++) {
          result.append(String.format(Locale.ROOT, "  %s", labels.get(v)));
          double[] percents = new double[rounds];
          for (int round = 0; round < rounds; round++) {
            percents[round] = 100 * memcpy / times[v][round];
            result.append(String.format(Locale.ROOT, " %.1f", percents[round]));
          }
          result.append(String.format(Locale.ROOT, " [%.1f]", median(percents)));
        }
        System.out.println(result + mismatch);
      }
    } finally {
      jcuda.driver.JCudaDriver.cuStreamDestroy(stream);
    }
  }

  private static void copy(
      KernelModule module,
      String kernel,
      int grid,
      DeviceBuffer input,
      DeviceBuffer output,
      long bytes,
      CUstream stream) {
    Pointer parameters =
        Pointer.to(
            Pointer.to(input.pointer()),
            Pointer.to(output.pointer()),
            Pointer.to(new long[] {bytes}));
    cuLaunchKernel(module.function(kernel), grid, 1, 1, 256, 1, 1, 0, stream, parameters, null);
  }

  /** The first and last 8 MiB and 8 MiB from the middle. */
  private static byte[] sample(DeviceBuffer buffer, long bytes) {
    int piece = (int) Math.min(8 << 20, bytes / 3);
    byte[] all = new byte[3 * piece];
    long[] at = {0, (bytes / 2) & ~15L, bytes - piece};
    for (int i = 0; i < 3; i++) {
      byte[] part = new byte[piece];
      cuMemcpyDtoH(Pointer.to(part), buffer.pointer().withByteOffset(at[i]), piece);
      System.arraycopy(part, 0, all, i * piece, piece);
    }
    return all;
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static double median(CUstream stream, Runnable work) {
    CUevent start = new CUevent();
    CUevent end = new CUevent();
    cuEventCreate(start, 0);
    cuEventCreate(end, 0);
    try {
      for (int i = 0; i < 5; i++) {
        work.run();
      }
      double[] times = new double[REPEATS];
      float[] elapsed = new float[1];
      for (int i = 0; i < REPEATS; i++) {
        cuEventRecord(start, stream);
        work.run();
        cuEventRecord(end, stream);
        cuEventSynchronize(end);
        cuEventElapsedTime(elapsed, start, end);
        times[i] = elapsed[0];
      }
      return median(times);
    } finally {
      cuEventDestroy(start);
      cuEventDestroy(end);
    }
  }

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
      cuMemcpyHtoD(
          buffer.pointer().withByteOffset(at), Pointer.to(block), Math.min(blockBytes, bytes - at));
    }
  }

  private static ElementType type(String name) {
    return switch (name.trim()) {
      case "f32" -> ElementType.FLOAT32;
      case "bf16" -> ElementType.BFLOAT16;
      case "f16" -> ElementType.FLOAT16;
      case "f64" -> ElementType.FLOAT64;
      default -> throw new IllegalArgumentException(name);
    };
  }
}
