package io.embednorm.arrow.internal;

import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.GpuOutOfMemoryException;
import io.embednorm.engine.NormalizationEngine;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Runs the batches of a {@code causal_conv} call on a GPU engine through pinned staging slots: the
 * rows of a batch are copied into a slot's input half (on the copy threads, each row padded with
 * zero steps to the batch's longest, its first), convolved by the engine, and copied out of the
 * slot's output half. The engine copies pinned memory at full speed and ordinary memory at a
 * fraction of it. With several batches, the engine runs them on a thread of the call's while the
 * caller fills the next and drains the earlier ones. Padding changes no bit of a row's output on a
 * GPU (docs/SEMANTICS.md, Causal convolution). Holds slots of the {@link StagingPool} only during
 * {@link #run}.
 */
public final class StagedConvolution {
  /** Batches staged at once: one being filled, one in the engine, one being drained. */
  private static final int DEPTH = 3;

  private final NormalizationEngine engine;
  private final ConvolutionKernel kernel;
  private final float eps;
  private final StagingPool pool;
  private final Rows rows;
  private final Deque<InFlight> inFlight = new ArrayDeque<>();
  private ExecutorService engineThread;

  /**
   * The rows of a call: row {@code r} has {@code counts[r]} steps of {@code channels} floats from
   * step {@code inputStarts[r]} at {@code inputAddress}, and its output goes to step {@code
   * outputStarts[r]} at {@code outputAddress}.
   */
  public record Rows(
      long inputAddress,
      long outputAddress,
      long[] inputStarts,
      long[] outputStarts,
      int[] counts,
      int channels) {}

  private StagedConvolution(
      NormalizationEngine engine,
      ConvolutionKernel kernel,
      float eps,
      StagingPool pool,
      Rows rows) {
    this.engine = engine;
    this.kernel = kernel;
    this.eps = eps;
    this.pool = pool;
    this.rows = rows;
  }

  /** Rows of {@code steps} steps that one pooled slot holds: at least one. */
  public static int rowsPerSlot(StagingPool pool, int steps, int channels) {
    long rowBytes = (long) steps * channels * Float.BYTES;
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, pool.slotBytes() / Math.max(1, rowBytes)));
  }

  /**
   * Convolves {@code batches} of {@code rows} with {@code kernel} on {@code engine} through the
   * slots of {@code pool}, a batch's rows padded to its first row's steps; returns once every
   * output is copied out and every slot given back. Throws the first failure of the engine's.
   */
  public static void run(
      NormalizationEngine engine,
      ConvolutionKernel kernel,
      float eps,
      StagingPool pool,
      Rows rows,
      List<List<Integer>> batches) {
    StagedConvolution staged = new StagedConvolution(engine, kernel, eps, pool, rows);
    try {
      boolean alone = batches.size() == 1;
      for (List<Integer> batch : batches) {
        staged.stage(batch, alone);
      }
      while (!staged.inFlight.isEmpty()) {
        staged.completeOldest();
      }
    } finally {
      staged.release();
    }
  }

  /**
   * Stages {@code batch} and hands it to the engine: on this thread when it is the call's only
   * batch ({@code alone}), else on the engine thread, draining earlier batches as slots are needed.
   */
  private void stage(List<Integer> batch, boolean alone) {
    int steps = rows.counts()[batch.get(0)];
    for (int row : batch) {
      if (rows.counts()[row] > steps) {
        throw new IllegalArgumentException(
            "Cannot stage a causal_conv batch: its row "
                + row
                + " has "
                + rows.counts()[row]
                + " steps, more than its first row's "
                + steps);
      }
    }
    long bytes = (long) batch.size() * steps * rows.channels() * Float.BYTES;
    if (bytes > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot stage "
              + batch.size()
              + " sequences of "
              + steps
              + " steps for causal_conv: "
              + bytes
              + " bytes pass a slot's limit of "
              + Integer.MAX_VALUE);
    }
    StagingSlot slot = take(bytes);
    InFlight chunk = new InFlight(slot, batch, steps);
    try {
      ParallelCopy.run(bytes, chunk::fill);
      FloatBuffer input = floats(slot.input(), bytes);
      FloatBuffer output = floats(slot.output(), bytes);
      Runnable call =
          () -> engine.causalConvolution(kernel, eps, input, batch.size(), steps, output);
      if (alone) {
        call.run();
        chunk.call = CompletableFuture.completedFuture(null);
      } else {
        chunk.call = engineThread().submit(call);
      }
    } catch (RuntimeException | Error failure) {
      pool.give(slot);
      throw failure;
    }
    inFlight.add(chunk);
  }

  /** Waits for the engine's call in flight, if any, and gives every slot back. */
  private void release() {
    for (InFlight chunk : inFlight) {
      chunk.call.cancel(false);
    }
    if (engineThread != null) {
      engineThread.shutdown();
      boolean interrupted = false;
      while (true) {
        try {
          if (engineThread.awaitTermination(1, TimeUnit.MINUTES)) {
            break;
          }
        } catch (InterruptedException stop) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    for (InFlight chunk : inFlight) {
      pool.give(chunk.slot);
    }
    inFlight.clear();
  }

  /**
   * A slot of at least {@code bytes} a half, draining the oldest batch while too many are out or
   * the pool has none. Pinned memory the process cannot allocate, with no batch left to drain, is a
   * {@link GpuOutOfMemoryException}: the call reruns on the CPU engine.
   */
  private StagingSlot take(long bytes) {
    boolean wide = bytes > pool.slotBytes();
    while (true) {
      if (inFlight.size() < (wide ? DEPTH - 1 : DEPTH)) {
        try {
          StagingSlot slot =
              wide ? pool.takeWide(bytes) : inFlight.isEmpty() ? pool.take() : pool.tryTake();
          if (slot != null) {
            return slot;
          }
        } catch (EmbedNormException noRoom) {
          if (inFlight.isEmpty()) {
            throw new GpuOutOfMemoryException(
                "Cannot stage "
                    + bytes
                    + " bytes of sequences for causal_conv: "
                    + noRoom.getMessage(),
                noRoom);
          }
        }
      }
      completeOldest();
    }
  }

  private void completeOldest() {
    InFlight chunk = inFlight.poll();
    try {
      await(chunk.call);
      ParallelCopy.run(
          (long) chunk.batch.size() * chunk.steps * rows.channels() * Float.BYTES, chunk::drain);
    } finally {
      pool.give(chunk.slot);
    }
  }

  private static void await(Future<?> call) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          call.get();
          return;
        } catch (InterruptedException stop) {
          interrupted = true;
        } catch (ExecutionException failed) {
          if (failed.getCause() instanceof RuntimeException runtime) {
            throw runtime;
          }
          if (failed.getCause() instanceof Error error) {
            throw error;
          }
          throw new EmbedNormException("Cannot convolve on the GPU: " + failed.getCause(), failed);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private ExecutorService engineThread() {
    if (engineThread == null) {
      engineThread =
          Executors.newSingleThreadExecutor(
              task -> {
                Thread thread = new Thread(task, "embednorm-convolution");
                thread.setDaemon(true);
                return thread;
              });
    }
    return engineThread;
  }

  private static FloatBuffer floats(long address, long bytes) {
    return MemoryUtil.directBuffer(address, (int) bytes)
        .order(ByteOrder.LITTLE_ENDIAN)
        .asFloatBuffer();
  }

  /** A batch in a slot: row {@code i} of the batch at byte {@code i * steps * channels * 4}. */
  private final class InFlight {
    private final StagingSlot slot;
    private final List<Integer> batch;
    private final int steps;
    private Future<?> call;

    InFlight(StagingSlot slot, List<Integer> batch, int steps) {
      this.slot = slot;
      this.batch = batch;
      this.steps = steps;
    }

    /** Copies the rows' bytes in {@code [offset, offset + length)} of the slot in, zero padded. */
    void fill(long offset, long length) {
      walk(
          offset,
          length,
          (row, at, inRow, bytes) ->
              MemoryUtil.copyMemory(
                  rowAddress(rows.inputAddress(), rows.inputStarts(), row) + inRow,
                  slot.input() + at,
                  bytes),
          (at, bytes) -> MemoryUtil.setMemory(slot.input() + at, bytes, (byte) 0));
    }

    /** Copies the rows' outputs in {@code [offset, offset + length)} of the slot out. */
    void drain(long offset, long length) {
      walk(
          offset,
          length,
          (row, at, inRow, bytes) ->
              MemoryUtil.copyMemory(
                  slot.output() + at,
                  rowAddress(rows.outputAddress(), rows.outputStarts(), row) + inRow,
                  bytes),
          (at, bytes) -> {});
    }

    private long rowAddress(long base, long[] starts, int row) {
      return base + starts[row] * rows.channels() * Float.BYTES;
    }

    /**
     * Splits the slot's bytes {@code [offset, offset + length)} into the parts of rows' values
     * ({@code values}: the row, the slot offset, the offset in the row, bytes) and of padding.
     */
    private void walk(long offset, long length, ValuePart values, PaddingPart padding) {
      long rowBytes = (long) steps * rows.channels() * Float.BYTES;
      for (long at = offset, end = offset + length; at < end; ) {
        int index = (int) (at / rowBytes);
        int row = batch.get(index);
        long rowStart = index * rowBytes;
        long valueEnd = rowStart + (long) rows.counts()[row] * rows.channels() * Float.BYTES;
        long upTo = Math.min(end, at < valueEnd ? valueEnd : rowStart + rowBytes);
        if (at < valueEnd) {
          values.copy(row, at, at - rowStart, upTo - at);
        } else {
          padding.copy(at, upTo - at);
        }
        at = upTo;
      }
    }
  }

  private interface ValuePart {
    void copy(int row, long slotOffset, long rowOffset, long bytes);
  }

  private interface PaddingPart {
    void copy(long slotOffset, long bytes);
  }
}
