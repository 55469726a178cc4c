package io.embednorm.arrow;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.Device;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaultException;
import io.embednorm.engine.GpuFaults;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TransferTimes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * A GPU without a GPU for the staging tests on CI. As a GPU's streams do, a session's lanes work
 * asynchronously: each chunk is read from host memory into a "device" buffer of its own on its
 * lane's thread after {@code enqueue} returned, computed there by the CPU engine, and written back
 * to the host output, after a random delay, so that chunks of different lanes complete out of step
 * with their enqueue and a slot reused before its chunk is done shows as wrong bits. Every
 * element's lowest bit is flipped (as {@link FaultingGpuEngine} does), so its rows are told apart
 * from the CPU engine's. At most two sessions are open at once; the others wait, as on a GPU.
 * Faults come from the {@link GpuFaults} switches at enqueue, or from {@link #failChunkAsync} on a
 * lane.
 */
final class HostCopyGpuEngine implements NormalizationEngine {
  private static final int LANES = 4;

  private final NormalizationEngine cpu = Engines.cpu(1);
  private final Semaphore sessions = new Semaphore(2, true);
  private final AtomicLong seeds;
  private final AtomicInteger failingChunk = new AtomicInteger();
  private final AtomicLong chunksRun = new AtomicLong();

  /** The lanes' threads, shared by the sessions (two sessions' chunks may queue on one). */
  private final ExecutorService[] lanes = new ExecutorService[LANES];

  private final int maximumDelayMicros;

  /** Chunks wait up to {@code maximumDelayMicros} on their lane, drawn from {@code seed}. */
  HostCopyGpuEngine(long seed, int maximumDelayMicros) {
    this.seeds = new AtomicLong(seed);
    this.maximumDelayMicros = maximumDelayMicros;
    for (int lane = 0; lane < LANES; lane++) {
      lanes[lane] =
          Executors.newSingleThreadExecutor(
              task -> {
                Thread thread = new Thread(task, "test-gpu-lane");
                thread.setDaemon(true);
                return thread;
              });
    }
  }

  /** Makes the {@code chunk}-th chunk from now (from 1) fail on its lane, after its enqueue. */
  void failChunkAsync(int chunk) {
    chunksRun.set(0);
    failingChunk.set(chunk);
  }

  @Override
  public Device device() {
    return Device.GPU;
  }

  @Override
  public String description() {
    return "test GPU (host copies on lane threads, the CPU engine, lowest bit flipped)";
  }

  @Override
  public int threads() {
    return 1;
  }

  @Override
  public boolean copiesToDevice() {
    return true;
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    throw new UnsupportedOperationException("the staging tests use sessions");
  }

  @Override
  public PipelineSession openSession(List<Normalization> steps, ElementType type) {
    sessions.acquireUninterruptibly();
    return new Session(steps, type, new Random(seeds.getAndIncrement()));
  }

  @Override
  public void close() {
    for (ExecutorService lane : lanes) {
      lane.shutdown();
    }
    cpu.close();
  }

  private static ByteBuffer at(long address, long bytes) {
    return MemoryUtil.directBuffer(address, Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
  }

  private final class Session implements PipelineSession {
    private final List<Normalization> steps;
    private final ElementType type;
    private final Random random;
    private final List<CompletableFuture<Void>> chunks = new ArrayList<>();
    private int finished;
    private boolean closed;

    Session(List<Normalization> steps, ElementType type, Random random) {
      this.steps = List.copyOf(steps);
      this.type = type;
      this.random = random;
    }

    @Override
    public int lanes() {
      return LANES;
    }

    @Override
    public long enqueue(
        long inputAddress, long outputAddress, int rows, int width, long firstRowIndex) {
      for (Normalization step : steps) {
        step.checkWidth(firstRowIndex, width);
      }
      if ((long) rows * width == 0) {
        return NOTHING_ENQUEUED;
      }
      return submit(inputAddress, outputAddress, rows, null, width, firstRowIndex);
    }

    @Override
    public long enqueueRagged(
        long inputAddress,
        long outputAddress,
        int[] offsets,
        long firstRowIndex,
        ColumnShape shape) {
      int rows = offsets.length - 1;
      for (int row = 0; row < rows; row++) {
        for (Normalization step : steps) {
          step.checkWidth(firstRowIndex + row, offsets[row + 1] - offsets[row]);
        }
      }
      if (rows == 0 || offsets[rows] == offsets[0]) {
        return NOTHING_ENQUEUED;
      }
      int[] relative = new int[offsets.length];
      for (int row = 0; row <= rows; row++) {
        relative[row] = offsets[row] - offsets[0];
      }
      return submit(inputAddress, outputAddress, rows, relative, 0, firstRowIndex);
    }

    private long submit(
        long inputAddress,
        long outputAddress,
        int rows,
        int[] offsets,
        int width,
        long firstRowIndex) {
      if (closed) {
        throw new IllegalStateException("session closed");
      }
      GpuFaults.beforeGpuCall("a chunk of " + rows + " rows");
      long ticket = chunks.size();
      long elements = offsets == null ? (long) rows * width : offsets[rows];
      long bytes = elements * type.byteWidth();
      int delayMicros = random.nextInt(maximumDelayMicros + 1);
      boolean fails = failingChunk.get() > 0 && chunksRun.incrementAndGet() == failingChunk.get();
      chunks.add(
          CompletableFuture.runAsync(
              () -> {
                sleepMicros(delayMicros);
                ByteBuffer deviceInput = ByteBuffer.allocateDirect((int) bytes);
                ByteBuffer deviceOutput = ByteBuffer.allocateDirect((int) bytes);
                deviceInput.order(ByteOrder.LITTLE_ENDIAN);
                deviceOutput.order(ByteOrder.LITTLE_ENDIAN);
                MemoryUtil.copyMemory(
                    inputAddress, MemoryUtil.getByteBufferAddress(deviceInput), bytes);
                if (fails) {
                  throw new GpuFaultException("Cannot run a chunk on the test GPU: told to fail");
                }
                ByteBuffer in = deviceInput;
                for (Normalization step : steps) {
                  RowBatch batch =
                      offsets == null
                          ? RowBatch.fixedWidth(type, rows, width, in, deviceOutput)
                          : RowBatch.ragged(type, IntBuffer.wrap(offsets), in, deviceOutput);
                  cpu.normalize(step, batch.withFirstRowIndex(firstRowIndex));
                  in = deviceOutput;
                }
                for (int index = 0; index < bytes; index += type.byteWidth()) {
                  deviceOutput.put(index, (byte) (deviceOutput.get(index) ^ 1));
                }
                sleepMicros(delayMicros / 2);
                MemoryUtil.copyMemory(
                    MemoryUtil.getByteBufferAddress(deviceOutput), outputAddress, bytes);
              },
              lanes[(int) (ticket % LANES)]));
      return ticket;
    }

    @Override
    public void awaitChunk(long ticket) {
      if (ticket == NOTHING_ENQUEUED) {
        return;
      }
      if (ticket < 0 || ticket >= chunks.size()) {
        throw new IllegalArgumentException("Cannot wait for chunk " + ticket);
      }
      join(chunks.get((int) ticket));
    }

    @Override
    public TransferTimes finish() {
      for (CompletableFuture<Void> chunk : chunks) {
        join(chunk);
      }
      TransferTimes times = new TransferTimes(chunks.size() - finished, 0, 0, 0);
      finished = chunks.size();
      return times;
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      for (CompletableFuture<Void> chunk : chunks) {
        chunk.exceptionally(failure -> null).join();
      }
      sessions.release();
    }

    private void join(CompletableFuture<Void> chunk) {
      try {
        chunk.join();
      } catch (CompletionException failure) {
        if (failure.getCause() instanceof RuntimeException runtime) {
          throw runtime;
        }
        throw failure;
      }
    }
  }

  private static void sleepMicros(int micros) {
    if (micros == 0) {
      return;
    }
    try {
      Thread.sleep(micros / 1000, (micros % 1000) * 1000);
    } catch (InterruptedException stop) {
      Thread.currentThread().interrupt();
    }
  }
}
