package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.cuda.CudaAvailability;
import io.embednorm.engine.cuda.CudaContext;
import io.embednorm.engine.cuda.KernelLaunches;
import java.util.Arrays;
import java.util.Random;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The benchmark's copy ceiling copies what the driver's copy would, on any grid it is given. */
@Tag("gpu")
class CopyKernelGpuTest {
  @Test
  void theCopyCeilingKernelCopiesEveryByteAndNoMore() {
    CudaAvailability availability = CudaAvailability.get();
    assumeTrue(availability.usable(), () -> "no usable GPU: " + availability.reason());
    assumeTrue(CopyKernel.isBundled(), "no copy kernel in this build (-Dembednorm.cpuOnly)");
    CudaContext context = CudaContext.of(0);
    CopyKernel copy = new CopyKernel(context);
    int bytes = (3 << 20) + 13; // 13 bytes past the last 16-byte pack
    byte[] data = new byte[bytes];
    new Random(16).nextBytes(data);
    try (KernelLaunches.DeviceMemory input = KernelLaunches.allocate(context, bytes, "copy input");
        KernelLaunches.DeviceMemory output =
            KernelLaunches.allocate(context, bytes + 64L, "copy output")) {
      cuMemcpyHtoD(input.pointer(), Pointer.to(data), bytes);
      // A few blocks that loop over the buffer, and the benchmark's two grids.
      for (int grid : new int[] {3, copy.grid(bytes, true), copy.grid(bytes, false)}) {
        cuMemsetD8(output.pointer(), (byte) 0xA5, bytes + 64L);
        copy.launch(grid, input.pointer(), output.pointer(), bytes, new CUstream());
        cuCtxSynchronize();
        byte[] copied = new byte[bytes + 64];
        cuMemcpyDtoH(Pointer.to(copied), output.pointer(), bytes + 64L);
        assertThat(Arrays.copyOf(copied, bytes)).as("grid %d", grid).isEqualTo(data);
        for (int at = bytes; at < bytes + 64; at++) {
          assertThat(copied[at])
              .as("byte %d past the end, grid %d", at - bytes, grid)
              .isEqualTo((byte) 0xA5);
        }
      }
    }
  }
}
