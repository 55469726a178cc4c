package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.embednorm.engine.cuda.CudaContext;
import io.embednorm.engine.cuda.KernelLaunches;
import java.util.Arrays;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * Host ⇄ device copy bandwidth as the hardware gives it, the ceiling a pipeline is measured
 * against: one direction at a time, and both at once (duplex) on two streams. Benchmarks only.
 */
public final class CopyBandwidth {
  private CopyBandwidth() {}

  /** Bytes per second and direction, and both directions at once (their sum). */
  public record Figures(double upload, double download, double duplex) {}

  /**
   * Copies {@code bytes} between {@code hostAddress} (pinned or not) and a device buffer, {@code
   * repeats} times each way and then both ways at once, and returns the median rates.
   */
  public static Figures measure(CudaContext context, long hostAddress, long bytes, int repeats) {
    context.makeCurrent();
    long half = bytes / 2;
    CUstream up = new CUstream();
    CUstream down = new CUstream();
    cuStreamCreate(up, CUstream_flags.CU_STREAM_NON_BLOCKING);
    cuStreamCreate(down, CUstream_flags.CU_STREAM_NON_BLOCKING);
    try (KernelLaunches.DeviceMemory device =
        KernelLaunches.allocate(context, bytes, "the copy benchmark")) {
      double[] upload = new double[repeats];
      double[] download = new double[repeats];
      double[] duplex = new double[repeats];
      Pointer host = new HostAddress(hostAddress);
      Pointer upperHost = new HostAddress(hostAddress + half);
      for (int repeat = 0; repeat < repeats; repeat++) {
        long started = System.nanoTime();
        cuMemcpyHtoDAsync(device.pointer(), host, bytes, up);
        cuStreamSynchronize(up);
        upload[repeat] = bytes / ((System.nanoTime() - started) / 1e9);
        started = System.nanoTime();
        cuMemcpyDtoHAsync(host, device.pointer(), bytes, down);
        cuStreamSynchronize(down);
        download[repeat] = bytes / ((System.nanoTime() - started) / 1e9);
        // Half the bytes each way at once: the same total as one direction.
        started = System.nanoTime();
        cuMemcpyHtoDAsync(device.pointer(), host, half, up);
        cuMemcpyDtoHAsync(upperHost, device.pointer().withByteOffset(half), half, down);
        cuStreamSynchronize(up);
        cuStreamSynchronize(down);
        duplex[repeat] = 2 * half / ((System.nanoTime() - started) / 1e9);
      }
      return new Figures(median(upload), median(download), median(duplex));
    } finally {
      cuStreamDestroy(up);
      cuStreamDestroy(down);
    }
  }

  /**
   * Input bytes per second of copies alone through the pipeline's pattern: chunk {@code i} of
   * {@code bytes} from {@code input} goes up on stream {@code i mod lanes} and comes back down to
   * {@code output}, each stream waiting for its previous chunk before the next (as sessions do),
   * with no kernels. Tells the copies' share of a pipeline's time from the host's.
   */
  public static double chunkedRoundTrip(
      CudaContext context, long input, long output, long bytes, long chunk, int lanes) {
    context.makeCurrent();
    CUstream[] streams = new CUstream[lanes];
    CUevent[] done = new CUevent[lanes];
    KernelLaunches.DeviceMemory[] buffers = new KernelLaunches.DeviceMemory[lanes];
    try {
      for (int lane = 0; lane < lanes; lane++) {
        streams[lane] = new CUstream();
        cuStreamCreate(streams[lane], CUstream_flags.CU_STREAM_NON_BLOCKING);
        done[lane] = new CUevent();
        cuEventCreate(done[lane], 0);
        buffers[lane] = KernelLaunches.allocate(context, chunk, "the copy benchmark");
      }
      long started = System.nanoTime();
      int index = 0;
      for (long offset = 0; offset < bytes; offset += chunk, index++) {
        int lane = index % lanes;
        long length = Math.min(chunk, bytes - offset);
        if (index >= lanes) {
          cuEventSynchronize(done[lane]);
        }
        cuMemcpyHtoDAsync(
            buffers[lane].pointer(), new HostAddress(input + offset), length, streams[lane]);
        cuMemcpyDtoHAsync(
            new HostAddress(output + offset), buffers[lane].pointer(), length, streams[lane]);
        cuEventRecord(done[lane], streams[lane]);
      }
      for (CUstream stream : streams) {
        cuStreamSynchronize(stream);
      }
      return bytes / ((System.nanoTime() - started) / 1e9);
    } finally {
      for (int lane = 0; lane < lanes; lane++) {
        if (buffers[lane] != null) {
          buffers[lane].close();
        }
        if (done[lane] != null) {
          cuEventDestroy(done[lane]);
        }
        if (streams[lane] != null) {
          cuStreamDestroy(streams[lane]);
        }
      }
    }
  }

  /** A JCuda pointer to a raw host address (JCuda's constructor for one is protected). */
  private static final class HostAddress extends Pointer {
    HostAddress(long address) {
      super(address);
    }
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
