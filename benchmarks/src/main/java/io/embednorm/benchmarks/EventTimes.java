package io.embednorm.benchmarks;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import java.util.Arrays;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/** Times GPU work with CUDA events on its stream, as the kernel benchmarks report it. */
final class EventTimes {
  private EventTimes() {}

  /** The median time in milliseconds of {@code work} on {@code stream}, after warm-up. */
  static double median(CUstream stream, int repeats, Runnable work) {
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
}
