package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuFuncGetAttribute;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;

/**
 * embednorm's kernels, loaded once per context from the fatbin that nvcc built into the jar (SASS
 * for sm_80 and sm_90, PTX for newer GPUs), with the launch tuning they export. Never compiled at
 * run time.
 */
final class KernelModule implements LaunchTarget {
  /** Where the Maven build puts the fatbin. */
  static final String RESOURCE = "/io/embednorm/engine/cuda/embednorm_kernels.fatbin";

  private static final ConcurrentMap<Integer, KernelModule> MODULES = new ConcurrentHashMap<>();

  private final CudaContext context;
  private final CUmodule module = new CUmodule();
  private final ConcurrentMap<String, CUfunction> functions = new ConcurrentHashMap<>();
  private final KernelTuning tuning;

  private KernelModule(CudaContext context) {
    this.context = context;
    context.makeCurrent();
    cuModuleLoadData(module, readResource());
    this.tuning = KernelTuning.of(this::table);
  }

  /** The module of {@code context}'s device, loading it on first use. */
  static KernelModule of(CudaContext context) {
    return MODULES.computeIfAbsent(context.ordinal(), ordinal -> new KernelModule(context));
  }

  /** Whether this jar holds kernels (a CPU-only build does not). */
  static boolean isBundled() {
    return KernelModule.class.getResource(RESOURCE) != null;
  }

  /** The kernel {@code name}; block kernels may use all the shared memory the device allows. */
  CUfunction function(String name) {
    return functions.computeIfAbsent(name, this::load);
  }

  private CUfunction load(String name) {
    context.makeCurrent();
    CUfunction function = new CUfunction();
    cuModuleGetFunction(function, module, name);
    if (name.startsWith("embednorm_block_") || name.startsWith("embednorm_tile_")) {
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

  /** The module's exported table {@code name} (an {@code int} array; see {@link KernelTuning}). */
  int[] table(String name) {
    context.makeCurrent();
    CUdeviceptr address = new CUdeviceptr();
    long[] bytes = new long[1];
    try {
      cuModuleGetGlobal(address, bytes, module, name);
    } catch (CudaException failure) {
      throw new EmbedNormException(
          "Cannot read the kernels' tuning: the module has no table "
              + name
              + " ("
              + failure.getMessage()
              + ")",
          failure);
    }
    int[] values = new int[(int) (bytes[0] / Integer.BYTES)];
    cuMemcpyDtoH(Pointer.to(values), address, (long) values.length * Integer.BYTES);
    return values;
  }

  @Override
  public KernelTuning tuning() {
    return tuning;
  }

  @Override
  public int computeCapability() {
    return context.computeCapability();
  }

  @Override
  public int multiprocessors() {
    return context.multiprocessors();
  }

  @Override
  public long memoryBandwidth() {
    return context.memoryBandwidth();
  }

  @Override
  public int occupancy(String kernel, int block, int dynamicSharedBytes) {
    int[] blocks = new int[1];
    cuOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks, function(kernel), block, dynamicSharedBytes);
    return blocks[0];
  }

  @Override
  public int dynamicSharedMemoryLimit(String blockKernel) {
    int[] staticBytes = new int[1];
    cuFuncGetAttribute(
        staticBytes,
        CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        function(blockKernel));
    return context.sharedMemoryPerBlockOptIn() - staticBytes[0];
  }

  private static byte[] readResource() {
    try (InputStream stream = KernelModule.class.getResourceAsStream(RESOURCE)) {
      if (stream == null) {
        throw new EmbedNormException(
            "Cannot load CUDA kernels: "
                + RESOURCE
                + " is not in this jar (built with -Dembednorm.cpuOnly?)");
      }
      return stream.readAllBytes();
    } catch (IOException failure) {
      throw new EmbedNormException("Cannot load CUDA kernels: " + failure.getMessage(), failure);
    }
  }
}
