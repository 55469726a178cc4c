package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuFuncGetAttribute;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * The normalize-then-encode kernels (src/main/cuda/encode_kernels.cu, their own fatbin): float32
 * rows in device memory to their {@link Encoding} (layout in {@link
 * io.embednorm.engine.EncodedRows}), the float32 result never written. Rows of up to 1024 elements
 * whose starts and widths are multiples of 4, or up to 256 otherwise, take the warp kernels, which
 * reduce as the op's warp kernels do, but such rows of 513 to 4096 elements a block a row in
 * registers; other wider rows a block a row, cached in shared memory where it fits. Holds no device
 * memory; thread-safe; loaded once per device.
 */
public final class EncodeKernels {
  /** Where the Maven build puts the fatbin (cuda-kernels/pom.xml). */
  static final String RESOURCE = "/io/embednorm/engine/cuda/embednorm_encode.fatbin";

  private static final ConcurrentMap<Integer, EncodeKernels> LOADED = new ConcurrentHashMap<>();
  private static final int WARP_BLOCK = 256;
  private static final int PACK = 4;
  private static final int[] PACKS = {1, 2, 4, 8};

  /** Packs a lane of the warp kernels for aligned rows of up to 128 packs. */
  private static final int NARROW_LANE_PACKS = 4;

  /**
   * Aligned rows of these widths take the register kernels, 16 elements a thread, a block a row.
   */
  private static final int REGISTER_MIN_WIDTH = 513;

  private static final int REGISTER_MAX_WIDTH = 4096;
  private static final int REGISTER_THREAD_ELEMENTS = 16;

  private final CudaContext context;
  private final CUmodule module = new CUmodule();
  private final ConcurrentMap<String, CUfunction> functions = new ConcurrentHashMap<>();

  private EncodeKernels(CudaContext context) {
    this.context = context;
    context.makeCurrent();
    cuModuleLoadData(module, fatbin());
  }

  /** The kernels of {@code context}'s device, loaded on first use. */
  public static EncodeKernels of(CudaContext context) {
    return LOADED.computeIfAbsent(context.ordinal(), ordinal -> new EncodeKernels(context));
  }

  /** Whether this jar holds the kernels (a CPU-only build does not). */
  public static boolean isBundled() {
    return EncodeKernels.class.getResource(RESOURCE) != null;
  }

  /**
   * Enqueues the encoding of {@code rows} contiguous rows of {@code width} floats at {@code input}
   * (16-byte aligned) into {@code values} ({@code rows × rowBytes(width)} bytes) and, for int8,
   * {@code scales} (one float a row; pass an empty pointer otherwise), without weight or bias. The
   * caller keeps the buffers until the stream is done.
   */
  public void launch(
      Normalization normalization,
      Encoding encoding,
      CUdeviceptr input,
      CUdeviceptr values,
      CUdeviceptr scales,
      long rows,
      int width,
      CUstream stream) {
    launch(
        normalization,
        encoding,
        new Rows(input, new CUdeviceptr(), new CUdeviceptr(), rows, width, width % PACK == 0),
        values,
        scales,
        new CUdeviceptr(),
        new CUdeviceptr(),
        stream);
  }

  /** Rows in device memory: contiguous where the offset pointers are empty. */
  record Rows(
      CUdeviceptr input,
      CUdeviceptr offsets,
      CUdeviceptr valueStarts,
      long rows,
      int width,
      boolean aligned) {}

  void launch(
      Normalization normalization,
      Encoding encoding,
      Rows rows,
      CUdeviceptr values,
      CUdeviceptr scales,
      CUdeviceptr weight,
      CUdeviceptr bias,
      CUstream stream) {
    if (rows.rows() == 0) {
      return;
    }
    context.makeCurrent();
    String op = normalization.op().sqlName();
    int width = rows.width();
    String name;
    int group;
    int block;
    int sharedBytes = 0;
    long rowsPerBlock;
    boolean onePass = false;
    if (rows.aligned() && width >= REGISTER_MIN_WIDTH && width <= REGISTER_MAX_WIDTH) {
      group = 1;
      int threads = (width + REGISTER_THREAD_ELEMENTS - 1) / REGISTER_THREAD_ELEMENTS;
      block = (threads + 31) / 32 * 32;
      name = "embednorm_encode_registers_" + op + "_" + encoding.name().toLowerCase(Locale.ROOT);
      rowsPerBlock = 1;
      onePass = true;
    } else if (rows.aligned() && width <= 32 * PACK * PACKS[PACKS.length - 1]) {
      int packsPerRow = Math.max(1, (width + PACK - 1) / PACK);
      // Narrow rows still take 4 packs a lane, over fewer lanes: a row's reductions and encoding
      // set-up then serve 16 values a lane (the kernels are bound by instructions there).
      int packs =
          Math.max(lanePacks(packsPerRow), Math.min(NARROW_LANE_PACKS, powerOfTwo(packsPerRow)));
      group = Math.min(32, powerOfTwo((packsPerRow + packs - 1) / packs));
      name = "embednorm_encode_warp_" + op + "_p" + PACK + "_c" + packs;
      block = WARP_BLOCK;
      rowsPerBlock = (WARP_BLOCK / 32L) * (32 / group);
    } else if (width <= 32 * PACKS[PACKS.length - 1]) {
      group = 32;
      name = "embednorm_encode_warp_" + op + "_p1_c" + lanePacks(Math.max(1, width));
      block = WARP_BLOCK;
      rowsPerBlock = WARP_BLOCK / 32L;
    } else {
      group = 1;
      block = (int) Math.min(1024, Math.max(128, ((width / 16L + 31) / 32) * 32));
      long cacheBytes = 4L * (width + PACK);
      boolean cached = cacheBytes <= context.sharedMemoryPerBlockOptIn() - 2048;
      name = "embednorm_encode_block_" + op + (cached ? "_cached" : "_uncached");
      sharedBytes = cached ? (int) cacheBytes : 0;
      rowsPerBlock = 1;
    }
    CUfunction function = function(name);
    int[] resident = new int[1];
    cuOccupancyMaxActiveBlocksPerMultiprocessor(resident, function, block, sharedBytes);
    long held = (long) Math.max(1, resident[0]) * context.multiprocessors();
    long needed = (rows.rows() + rowsPerBlock - 1) / rowsPerBlock;
    int grid = (int) Math.max(1, Math.min(needed, onePass ? Integer.MAX_VALUE : held));
    double epsilon = normalization.op().takesEpsilon() ? normalization.epsilon() : 0;
    Pointer parameters =
        Pointer.to(
            Pointer.to(rows.input()),
            Pointer.to(values),
            Pointer.to(scales),
            Pointer.to(rows.offsets()),
            Pointer.to(rows.valueStarts()),
            Pointer.to(new long[] {rows.rows()}),
            Pointer.to(new int[] {width}),
            Pointer.to(new int[] {group}),
            Pointer.to(new double[] {epsilon}),
            Pointer.to(weight),
            Pointer.to(bias),
            Pointer.to(new int[] {encoding.ordinal()}));
    cuLaunchKernel(function, grid, 1, 1, block, 1, 1, sharedBytes, stream, parameters, null);
  }

  /** The least power of two at or above {@code value} (at least 1). */
  private static int powerOfTwo(int value) {
    return Integer.highestOneBit(Math.max(1, value) * 2 - 1);
  }

  /** The fewest packs a lane (1, 2, 4 or 8) that hold {@code packsPerRow} over 32 lanes. */
  private static int lanePacks(int packsPerRow) {
    for (int packs : PACKS) {
      if (32L * packs >= packsPerRow) {
        return packs;
      }
    }
    throw new IllegalStateException("no warp kernel holds " + packsPerRow + " packs");
  }

  private CUfunction function(String name) {
    return functions.computeIfAbsent(name, this::load);
  }

  private CUfunction load(String name) {
    CUfunction function = new CUfunction();
    cuModuleGetFunction(function, module, name);
    if (name.startsWith("embednorm_encode_block_")) {
      int[] staticBytes = new int[1];
      cuFuncGetAttribute(
          staticBytes, CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function);
      cuFuncSetAttribute(
          function,
          CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          context.sharedMemoryPerBlockOptIn() - staticBytes[0]);
    }
    return function;
  }

  private static byte[] fatbin() {
    try (InputStream stream = EncodeKernels.class.getResourceAsStream(RESOURCE)) {
      if (stream == null) {
        throw new EmbedNormException(
            "Cannot load the encoding kernels: "
                + RESOURCE
                + " is not in this jar (built with -Dembednorm.cpuOnly?)");
      }
      return stream.readAllBytes();
    } catch (IOException failure) {
      throw new EmbedNormException(
          "Cannot load the encoding kernels: " + failure.getMessage(), failure);
    }
  }
}
