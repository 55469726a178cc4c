package io.embednorm.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * One stream of a GPU session with the device memory its chunks use: two row buffers (a chain of
 * normalizations ping-pongs between them), row offsets, and host staging for the offsets. Events
 * around the upload, the kernels and the download time each chunk. Lanes outlive sessions: the
 * engine pools them, so their memory is reused from call to call.
 */
final class Lane implements AutoCloseable {
  private static final long MEBIBYTE = 1L << 20;

  final CUstream stream = new CUstream();
  private final CUevent[] events = new CUevent[4];
  private static final int FIRST = 0;
  private static final int SECOND = 1;
  private static final int OFFSETS = 2;

  /** The two row buffers and the offsets, by slot. */
  private final DeviceBuffer[] buffers = new DeviceBuffer[3];

  private LongBuffer offsetStaging;
  private boolean busy;
  private boolean timed;

  Lane() {
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    for (int index = 0; index < events.length; index++) {
      events[index] = new CUevent();
      cuEventCreate(events[index], CUevent_flags.CU_EVENT_DEFAULT);
    }
  }

  /** The buffer rows are uploaded to, at least {@code bytes} large. */
  DeviceBuffer first(long bytes) {
    return buffer(FIRST, bytes, "the input rows of a chunk");
  }

  /** The buffer the first kernel writes, at least {@code bytes} large. */
  DeviceBuffer second(long bytes) {
    return buffer(SECOND, bytes, "the output rows of a chunk");
  }

  DeviceBuffer offsets(long bytes) {
    return buffer(OFFSETS, bytes, "the row offsets of a chunk");
  }

  /**
   * The buffer in {@code slot}, replaced by a larger one (whole MiB, so that a slightly larger
   * chunk later fits) when it is too small. The slot is empty while the new one is allocated, so a
   * failed allocation never leaves a freed buffer behind.
   */
  private DeviceBuffer buffer(int slot, long bytes, String what) {
    DeviceBuffer buffer = buffers[slot];
    if (buffer == null || buffer.bytes() < bytes) {
      if (buffer != null) {
        buffer.close();
        buffers[slot] = null;
      }
      buffers[slot] = new DeviceBuffer((bytes + MEBIBYTE - 1) / MEBIBYTE * MEBIBYTE, what);
    }
    return buffers[slot];
  }

  /**
   * Host staging for a chunk's int64 offsets (direct memory; copied through the driver's staging,
   * being small).
   */
  LongBuffer offsetStaging(int count) {
    if (offsetStaging == null || offsetStaging.capacity() < count) {
      offsetStaging =
          ByteBuffer.allocateDirect(count * Long.BYTES)
              .order(ByteOrder.nativeOrder())
              .asLongBuffer();
    }
    offsetStaging.clear();
    return offsetStaging;
  }

  /**
   * Records event {@code index} (0 before upload … 3 after download) on the stream; of a chunk that
   * is not timed, only the last (its completion).
   */
  void mark(int index, boolean timing) {
    if (timing || index == 3) {
      cuEventRecord(events[index], stream);
    }
    if (index == 0) {
      busy = true;
      timed = timing;
    }
  }

  /**
   * Waits for the lane's last chunk to finish and adds its upload, kernel and download times;
   * nothing when the lane is idle.
   */
  void await(TransferTimeSums times) {
    if (!busy) {
      return;
    }
    busy = false;
    cuEventSynchronize(events[3]);
    if (timed) {
      times.addTimedChunk(elapsed(0, 1), elapsed(1, 2), elapsed(2, 3));
    } else {
      times.addChunk();
    }
  }

  /** Waits for whatever the stream holds, without timing (after a failure). */
  void drain() {
    busy = false;
    cuStreamSynchronize(stream);
  }

  /** Device bytes held. */
  long deviceBytes() {
    long bytes = 0;
    for (DeviceBuffer buffer : buffers) {
      bytes += buffer == null ? 0 : buffer.bytes();
    }
    return bytes;
  }

  private long elapsed(int from, int to) {
    float[] milliseconds = new float[1];
    cuEventElapsedTime(milliseconds, events[from], events[to]);
    return (long) (milliseconds[0] * 1e6);
  }

  /** Frees the stream, events and memory; the stream must be idle. */
  @Override
  public void close() {
    for (DeviceBuffer buffer : buffers) {
      if (buffer != null) {
        buffer.close();
      }
    }
    for (CUevent event : events) {
      cuEventDestroy(event);
    }
    cuStreamDestroy(stream);
  }
}
