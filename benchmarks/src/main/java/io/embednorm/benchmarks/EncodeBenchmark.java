package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.cuda.CudaAvailability;
import io.embednorm.engine.cuda.CudaContext;
import io.embednorm.engine.cuda.CudaEngine;
import io.embednorm.engine.cuda.EncodeKernels;
import io.embednorm.engine.cuda.KernelLaunches;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * Times the fused normalize-then-encode kernels ({@link EncodeKernels}) against the memory bound,
 * in one run on the GPU host: about 1 GiB of float32 input per width, CUDA events, warm-up, median
 * of many repeats. Bytes moved = float32 read + encoded bytes (and int8 scales) written; the bound
 * is a device-to-device copy moving as many bytes (half of them read, half written), timed on the
 * same stream just before each kernel; {@code %bound} = copy time / kernel time.
 *
 * <pre>
 * java -cp ... io.embednorm.benchmarks.EncodeBenchmark [--widths 128,768,4096]
 *     [--ops l2_normalize,rms_norm] [--encodings float16,bfloat16,int8,binary] [--gib 1]
 *     [--repeats 30]
 * </pre>
 */
public final class EncodeBenchmark {
  private EncodeBenchmark() {}

  public static void main(String[] args) {
    EncodeOptions options = EncodeOptions.parse(args, Set.of("--gib", "--repeats"));
    int[] widths = options.widths();
    List<Op> ops = options.ops();
    List<Encoding> encodings = options.encodings();
    double gib = options.number("--gib", 1);
    int repeats = (int) options.number("--repeats", 30);
    String unavailable = CudaEngine.unavailableReason();
    if (unavailable == null && !EncodeKernels.isBundled()) {
      unavailable = "this jar was built without the encoding kernels (-Dembednorm.cpuOnly)";
    }
    if (unavailable != null) {
      System.err.println("EncodeBenchmark: no usable GPU: " + unavailable);
      System.exit(2);
    }
    CudaContext context = KernelLaunches.open(0).context();
    EncodeKernels kernels = EncodeKernels.of(context);
    System.out.printf(
        Locale.ROOT,
        "# %s, sm_%d, %d SMs; %.2f GiB of float32 input per width; median of %d;"
            + " GB/s = (float32 read + encoded written) / time; %%bound = copy time / kernel time%n",
        CudaAvailability.get().deviceName(),
        context.computeCapability(),
        context.multiprocessors(),
        gib,
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
        "%bound");
    for (int width : widths) {
      long rows = Math.max(1, (long) (gib * (1L << 30) / (4L * width)));
      long inputBytes = rows * width * 4;
      CUstream stream = new CUstream();
      cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
      try (KernelLaunches.DeviceMemory input =
              KernelLaunches.allocate(context, inputBytes, "benchmark input");
          KernelLaunches.DeviceMemory values =
              KernelLaunches.allocate(context, inputBytes, "benchmark output");
          KernelLaunches.DeviceMemory scales =
              KernelLaunches.allocate(context, 4 * rows, "benchmark scales")) {
        fillRandom(input, inputBytes);
        for (Op op : ops) {
          for (Encoding encoding : encodings) {
            long written = rows * encoding.rowBytes(width) + (encoding.hasScales() ? 4 * rows : 0);
            long moved = inputBytes + written;
            CUdeviceptr scalePointer = encoding.hasScales() ? scales.pointer() : new CUdeviceptr();
            double copyMs =
                EventTimes.median(
                    stream,
                    repeats,
                    () -> cuMemcpyDtoDAsync(values.pointer(), input.pointer(), moved / 2, stream));
            double kernelMs =
                EventTimes.median(
                    stream,
                    repeats,
                    () ->
                        kernels.launch(
                            Normalization.of(op),
                            encoding,
                            input.pointer(),
                            values.pointer(),
                            scalePointer,
                            rows,
                            width,
                            stream));
            System.out.printf(
                Locale.ROOT,
                "%-13s %-9s %6d %9d %8.0f %8.0f %6.1f%%%n",
                op.sqlName(),
                encoding.optionName(),
                width,
                rows,
                moved / kernelMs / 1e6,
                2.0 * (moved / 2) / copyMs / 1e6,
                100 * copyMs / kernelMs);
          }
        }
      } finally {
        cuStreamDestroy(stream);
      }
    }
  }

  /** Gaussian float32 values: a 16 MiB random block copied over the whole buffer. */
  private static void fillRandom(KernelLaunches.DeviceMemory buffer, long bytes) {
    int blockBytes = (int) Math.min(bytes, 16 << 20);
    ByteBuffer block = ByteBuffer.allocateDirect(blockBytes).order(ByteOrder.LITTLE_ENDIAN);
    SplittableRandom random = new SplittableRandom(42);
    for (int at = 0; at + 4 <= blockBytes; at += 4) {
      block.putFloat(at, (float) random.nextGaussian());
    }
    for (long at = 0; at < bytes; at += blockBytes) {
      cuMemcpyHtoD(
          buffer.pointer().withByteOffset(at), Pointer.to(block), Math.min(blockBytes, bytes - at));
    }
  }
}
