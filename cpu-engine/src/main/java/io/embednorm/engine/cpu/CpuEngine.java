package io.embednorm.engine.cpu;

import io.embednorm.engine.BFloat16;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Device;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EncodedRows;
import io.embednorm.engine.FloatArrays;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.spi.HostEncoding;
import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The CPU engine: reads runs of consecutive rows of a {@link RowBatch} into a per-thread scratch
 * array (a bulk copy of about {@link #CHUNK_ELEMENTS} elements, converting float16/bfloat16 to
 * float32), normalizes them with {@link CpuKernels}, and writes them back (float16/bfloat16 rounded
 * once).
 *
 * <p>Large batches are split into contiguous blocks of rows of about equal element counts, one per
 * thread: the calling thread takes one block and a private pool of {@code threads − 1} daemon
 * threads the others (created on the first such batch, shut down by {@link #close()}). Batches
 * under {@link #ELEMENTS_PER_THREAD} elements per thread stay on the calling thread, where handing
 * them over would cost more than it saves. Every row is computed alone, so its bits depend neither
 * on the split nor on the thread count.
 *
 * <p>Weight and bias lengths are checked against every row before anything is written, so a batch
 * that fails leaves its output untouched. Thread-safe: several threads may share one engine.
 */
public final class CpuEngine implements NormalizationEngine {
  /**
   * The fewest elements worth a thread of their own: 64 Ki elements (256 KiB of float32) take tens
   * of microseconds, well above the cost of waking a pool thread.
   */
  static final long ELEMENTS_PER_THREAD = 1 << 16;

  /**
   * Elements moved between the buffers and the scratch arrays at a time (3 KiB of float32, which
   * stays in the L1 cache through every pass): one bulk copy per chunk rather than per row, and
   * narrow rows reach the kernels many at once. Small: on one thread, layer_norm at width 32 ran a
   * fifth faster with chunks of 1 Ki elements than with 4 Ki. A chunk moves in copies of {@link
   * #CHUNK_COPY_BYTES}; a row wider than a chunk is a run of its own, moved in copies of {@link
   * #COPY_BYTES}.
   */
  static final int CHUNK_ELEMENTS = 768;

  /**
   * The most bytes one bulk copy moves for a row wider than a chunk (chunks of whole rows use
   * {@link #CHUNK_COPY_BYTES}). On one thread, when every copy used this cap, copies of 4 KiB and
   * more ran the engine at a fraction of the speed of 3 KiB ones (% of a copy of the same bytes:
   * rms_norm 128 62 % against 33 %, 4096 58 % against 45 %), perhaps by 4 KiB aliasing of loads
   * with earlier stores (not proven).
   */
  static final int COPY_BYTES = 3 << 10;

  /**
   * The most bytes one bulk copy moves for a chunk of whole rows (at most {@link #CHUNK_ELEMENTS}
   * elements); rows wider than a chunk keep {@link #COPY_BYTES}. On one thread, chunks loaded and
   * stored in copies of 512 bytes instead of 3 KiB ran rms_norm at width 32 at 84-86 % of a copy of
   * the same bytes against 52-70 %, layer_norm 32 at 61 % against 47 %, l2_normalize 768 at 85-89 %
   * against 58 %; 256 bytes was slower again, and rows of 4096 and 32768 gained nothing. Not
   * explained: the copies are the same bytes in the same order, only in more calls.
   */
  static final int CHUNK_COPY_BYTES = 512;

  private final int threads;
  private final RowPasses passes;
  private final SimdWarmUp warmUp;
  private final Object poolLock = new Object();
  private ExecutorService pool;
  private boolean closed;

  /** An engine with one thread per available processor. */
  public CpuEngine() {
    this(Runtime.getRuntime().availableProcessors());
  }

  /**
   * An engine that uses up to {@code threads} threads (the caller's included) for large batches.
   *
   * @throws IllegalArgumentException when {@code threads} is below 1
   */
  public CpuEngine(int threads) {
    this(threads, RowPassSelection.DEFAULT, RowPassSelection.WARM_UP);
  }

  /** With the given loops from the first chunk: tests run the scalar ones explicitly. */
  CpuEngine(int threads, RowPasses passes) {
    this(threads, passes, null);
  }

  /**
   * With {@code passes} once {@code warmUp} (if not null) has found them compiled and faster than
   * the scalar loops, which run until then.
   */
  CpuEngine(int threads, RowPasses passes, SimdWarmUp warmUp) {
    if (threads < 1) {
      throw new IllegalArgumentException("A CPU engine needs at least 1 thread, not " + threads);
    }
    this.threads = threads;
    this.passes = Objects.requireNonNull(passes, "passes");
    this.warmUp = warmUp;
  }

  @Override
  public int threads() {
    return threads;
  }

  @Override
  public Device device() {
    return Device.CPU;
  }

  /** E.g. {@code cpu (java simd, 256-bit, 8 threads)} or {@code cpu (java scalar)}. */
  @Override
  public String description() {
    return "cpu (" + passes.description() + (threads > 1 ? ", " + threads + " threads" : "") + ")";
  }

  @Override
  public void normalize(Normalization normalization, RowBatch batch) {
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(batch, "batch");
    if (normalization.hasWeight() || normalization.hasBias()) {
      for (int row = 0; row < batch.rows(); row++) {
        normalization.checkWidth(batch.firstRowIndex() + row, batch.rowWidth(row));
      }
    }
    inBlocks(batch, (first, end) -> normalizeRows(normalization, batch, first, end));
  }

  /**
   * Encodes as {@link HostEncoding} does (the bytes of {@link io.embednorm.engine.RowEncoder}, each
   * row encoded alone), fused: each chunk of rows is loaded, normalized and encoded from the same
   * array, so memory sees the float32 input read once and the encoded rows written once. The rows
   * are split between the engine's threads as {@link #normalize} splits them.
   */
  @Override
  public void normalizeEncoded(Normalization normalization, RowBatch batch, EncodedRows target) {
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(batch, "batch");
    Objects.requireNonNull(target, "target");
    HostEncoding.check(normalization, batch, target);
    RowPasses encoder = settledPasses(normalization);
    inBlocks(
        batch,
        (first, end) ->
            encodeFloat32(
                normalization,
                batch,
                first,
                end,
                new ChunkEncoder(encoder, batch, target, first, end)));
  }

  /** Work on rows {@code [first, end)} of a batch. */
  /** Work over a range of rows (or other units) from {@code first} to {@code end}. */
  interface RowRange {
    void run(int first, int end);
  }

  /**
   * Runs {@code work} over the batch's rows: in blocks of about equal element counts, one a thread,
   * the calling thread taking the first; on the calling thread alone for small batches.
   */
  private void inBlocks(RowBatch batch, RowRange work) {
    int blocks =
        (int)
            Math.min(
                Math.min(threads, batch.rows()),
                Math.max(1, batch.elementCount() / ELEMENTS_PER_THREAD));
    if (blocks <= 1) {
      work.run(0, batch.rows());
      return;
    }
    runParts(blockBoundaries(batch, blocks), work);
  }

  /**
   * Runs {@code work} over the ranges between consecutive {@code boundaries}, one a thread, the
   * calling thread taking the first; all on the calling thread once the engine is closed.
   */
  void runParts(int[] boundaries, RowRange work) {
    int parts = boundaries.length - 1;
    ExecutorService executor = parts > 1 ? pool() : null;
    if (executor == null) {
      work.run(boundaries[0], boundaries[parts]);
      return;
    }
    List<Future<?>> others = new ArrayList<>(parts - 1);
    try {
      for (int part = 1; part < parts; part++) {
        int first = boundaries[part];
        int end = boundaries[part + 1];
        others.add(executor.submit(() -> work.run(first, end)));
      }
      work.run(boundaries[0], boundaries[1]);
      for (Future<?> other : others) {
        other.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CancellationException("Interrupted while normalizing a batch");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(cause);
    } finally {
      for (Future<?> other : others) {
        other.cancel(false);
      }
    }
  }

  /** The sequences and their channel blocks shared out among the engine's threads. */
  @Override
  public void causalConvolution(
      ConvolutionKernel kernel,
      float eps,
      FloatBuffer sequences,
      int count,
      int steps,
      FloatBuffer output) {
    kernel.checkBatch(count, steps, sequences, output);
    float[] result = FloatArrays.writable(output);
    CpuConvolutionBatch.run(
        this, kernel, eps, FloatArrays.readable(sequences), count, steps, result);
    FloatArrays.store(result, output);
  }

  /** Shuts the pool down; the engine then runs every batch on the calling thread. */
  @Override
  public void close() {
    synchronized (poolLock) {
      closed = true;
      if (pool != null) {
        pool.shutdown();
        pool = null;
      }
    }
  }

  @Override
  public String toString() {
    return description();
  }

  /** The pool, created on first use; null once closed. */
  private ExecutorService pool() {
    synchronized (poolLock) {
      if (pool == null && !closed) {
        AtomicInteger count = new AtomicInteger();
        ThreadFactory factory =
            runnable -> {
              Thread thread = new Thread(runnable, "embednorm-cpu-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            };
        pool = Executors.newFixedThreadPool(threads - 1, factory);
      }
      return pool;
    }
  }

  /**
   * {@code blocks + 1} row indices: block k is rows [b[k], b[k + 1]), each about an equal share of
   * the batch's elements (ragged rows may differ in width), and never empty.
   */
  static int[] blockBoundaries(RowBatch batch, int blocks) {
    int rows = batch.rows();
    int[] boundaries = new int[blocks + 1];
    boundaries[blocks] = rows;
    long first = batch.rowStart(0);
    long elements = batch.elementCount();
    for (int block = 1; block < blocks; block++) {
      long target = first + elements * block / blocks;
      // The first row that starts at or after the target, at least one row after the previous
      // boundary and leaving at least one row for each block after this one.
      int low = boundaries[block - 1] + 1;
      int high = rows - (blocks - block);
      while (low < high) {
        int middle = (low + high) >>> 1;
        if (batch.rowStart(middle) < target) {
          low = middle + 1;
        } else {
          high = middle;
        }
      }
      // Or the row before it, when that start is nearer the target.
      if (low > boundaries[block - 1] + 1
          && target - batch.rowStart(low - 1) < batch.rowStart(low) - target) {
        low--;
      }
      boundaries[block] = low;
    }
    return boundaries;
  }

  private void normalizeRows(Normalization normalization, RowBatch batch, int first, int end) {
    switch (batch.type()) {
      case FLOAT32 -> normalizeFloat32(normalization, batch, first, end);
      case FLOAT64 -> normalizeFloat64(normalization, batch, first, end);
      case FLOAT16, BFLOAT16 -> normalizeSixteenBit(normalization, batch, first, end);
      default -> throw new IllegalStateException("Unknown element type " + batch.type());
    }
  }

  /** What runs on one chunk: rows [first, end), elements [start, start + elements). */
  @FunctionalInterface
  private interface Chunk {
    void normalize(int first, int end, int start, int elements);
  }

  /**
   * Splits rows [first, end) into runs of consecutive rows of about {@link #CHUNK_ELEMENTS}
   * elements together (a wider row is a run of its own) and hands over each run that has elements.
   */
  private static void forEachChunk(RowBatch batch, int first, int end, Chunk chunk) {
    int row = first;
    while (row < end) {
      long start = batch.rowStart(row);
      int last = row + 1;
      if (!batch.isRagged()) {
        int rowsPerChunk = Math.max(1, CHUNK_ELEMENTS / Math.max(1, batch.rowWidth(row)));
        last = Math.min(end, row + rowsPerChunk);
      } else {
        while (last < end && batch.rowStart(last + 1) - start <= CHUNK_ELEMENTS) {
          last++;
        }
      }
      long elements = batch.rowStart(last) - start;
      if (elements > 0) {
        chunk.normalize(row, last, Math.toIntExact(start), Math.toIntExact(elements));
      }
      row = last;
    }
  }

  /** Normalizes rows [first, end) of a chunk held in {@code values} from element {@code start}. */
  private void normalizeChunk(
      Normalization normalization, RowBatch batch, int first, int end, float[] values, int start) {
    if (!batch.isRagged()) {
      int width = batch.rowWidth(first);
      int rows = end - first;
      RowPasses chosen = floatPasses(normalization, values, 0, width, rows);
      CpuKernels.normalizeRows(chosen, normalization, values, 0, values, 0, width, rows);
      return;
    }
    for (int row = first; row < end; row++) {
      int offset = (int) (batch.rowStart(row) - start);
      int width = batch.rowWidth(row);
      RowPasses chosen = floatPasses(normalization, values, offset, width, 1);
      CpuKernels.normalizeRows(chosen, normalization, values, offset, values, offset, width, 1);
    }
  }

  private RowPasses floatPasses(
      Normalization normalization, float[] values, int offset, int width, int rows) {
    return warmUp == null ? passes : warmUp.floatPasses(normalization, values, offset, width, rows);
  }

  private void normalizeFloat32(Normalization normalization, RowBatch batch, int first, int end) {
    // clear(): element indices count from index 0 of the buffer, whatever its position.
    ByteBuffer inputBytes = batch.input().clear();
    ByteBuffer outputBytes = batch.output().clear();
    FloatBuffer input = inputBytes.asFloatBuffer();
    FloatBuffer output = outputBytes.asFloatBuffer();
    RowScratch scratch = RowScratch.current();
    forEachChunk(
        batch,
        first,
        end,
        (chunkFirst, chunkEnd, start, elements) -> {
          // A chunk wider than CHUNK_ELEMENTS is one row.
          if (elements > CHUNK_ELEMENTS
              && betweenBuffers(normalization, inputBytes, outputBytes, start, elements)) {
            return;
          }
          float[] values = scratch.floats(elements);
          load(input, start, values, elements);
          normalizeChunk(normalization, batch, chunkFirst, chunkEnd, values, start);
          store(values, output, start, elements);
        });
  }

  /** {@link #normalizeFloat32}'s chunks, encoded where they would be stored. */
  private void encodeFloat32(
      Normalization normalization, RowBatch batch, int first, int end, ChunkEncoder encoder) {
    FloatBuffer input = batch.input().clear().asFloatBuffer();
    RowScratch scratch = RowScratch.current();
    forEachChunk(
        batch,
        first,
        end,
        (chunkFirst, chunkEnd, start, elements) -> {
          float[] values = scratch.floats(elements);
          load(input, start, values, elements);
          normalizeChunk(normalization, batch, chunkFirst, chunkEnd, values, start);
          encoder.encode(chunkFirst, chunkEnd, values, start);
        });
  }

  /**
   * Normalizes one float32 row wider than a chunk straight between the buffers where the passes
   * running now have such a path for the op ({@link RowPasses#normalizeBetweenBuffers}); false,
   * having written nothing, otherwise.
   */
  private boolean betweenBuffers(
      Normalization normalization, ByteBuffer input, ByteBuffer output, int start, int width) {
    return simdSettled(normalization)
        && passes.normalizeBetweenBuffers(normalization, input, output, start, width);
  }

  /**
   * Whether the op's float32 rows run on this engine's passes for good: always without a warm-up,
   * else once it has settled on SIMD. The paths outside the warm-up's choice (rows between buffers,
   * float16 conversions) wait for it: interpreted, the Vector API is many times slower than the
   * scalar loops.
   */
  private boolean simdSettled(Normalization normalization) {
    return warmUp == null || warmUp.runsSimd(normalization.op(), 0);
  }

  private void normalizeFloat64(Normalization normalization, RowBatch batch, int first, int end) {
    DoubleBuffer input = batch.input().clear().asDoubleBuffer();
    DoubleBuffer output = batch.output().clear().asDoubleBuffer();
    RowScratch scratch = RowScratch.current();
    forEachChunk(
        batch,
        first,
        end,
        (chunkFirst, chunkEnd, start, elements) -> {
          double[] values = scratch.doubles(elements);
          load(input, start, values, elements);
          for (int row = chunkFirst; row < chunkEnd; row++) {
            int offset = (int) (batch.rowStart(row) - start);
            int width = batch.rowWidth(row);
            RowPasses chosen =
                warmUp == null ? passes : warmUp.doublePasses(normalization, values, offset, width);
            CpuKernels.normalizeRow(chosen, normalization, values, offset, values, offset, width);
          }
          store(values, output, start, elements);
        });
  }

  /** float16 and bfloat16: load narrow, compute in float32, store narrow once. */
  private void normalizeSixteenBit(
      Normalization normalization, RowBatch batch, int first, int end) {
    boolean half = batch.type() == ElementType.FLOAT16;
    ShortBuffer input = batch.input().clear().asShortBuffer();
    ShortBuffer output = batch.output().clear().asShortBuffer();
    RowScratch scratch = RowScratch.current();
    forEachChunk(
        batch,
        first,
        end,
        (chunkFirst, chunkEnd, start, elements) -> {
          short[] bits = scratch.shorts(elements);
          float[] values = scratch.floats(elements);
          load(input, start, bits, elements);
          RowPasses converter = settledPasses(normalization);
          if (half) {
            converter.halvesToFloats(bits, values, elements);
          } else {
            BFloat16.toFloats(bits, 0, values, 0, elements);
          }
          normalizeChunk(normalization, batch, chunkFirst, chunkEnd, values, start);
          if (half) {
            converter.floatsToHalves(values, bits, elements);
          } else {
            BFloat16.fromFloats(values, 0, bits, 0, elements);
          }
          store(bits, output, start, elements);
        });
  }

  /**
   * The passes that convert float16 chunks of the op and encode its rows ({@link #simdSettled}).
   */
  private RowPasses settledPasses(Normalization normalization) {
    return simdSettled(normalization) ? passes : ScalarRowPasses.INSTANCE;
  }

  // ---- bulk copies of at most CHUNK_COPY_BYTES (a chunk) or COPY_BYTES (a wider row) each ----

  /** Elements of {@code bytes} each per copy for a run of {@code elements}. */
  private static int piece(int elements, int bytes) {
    return (elements > CHUNK_ELEMENTS ? COPY_BYTES : CHUNK_COPY_BYTES) / bytes;
  }

  /** Elements [start, start + elements) of the buffer into {@code values} from index 0. */
  private static void load(FloatBuffer from, int start, float[] values, int elements) {
    int piece = piece(elements, Float.BYTES);
    for (int done = 0; done < elements; done += piece) {
      from.get(start + done, values, done, Math.min(piece, elements - done));
    }
  }

  /** {@code values} from index 0 into elements [start, start + elements) of the buffer. */
  private static void store(float[] values, FloatBuffer to, int start, int elements) {
    int piece = piece(elements, Float.BYTES);
    for (int done = 0; done < elements; done += piece) {
      to.put(start + done, values, done, Math.min(piece, elements - done));
    }
  }

  private static void load(DoubleBuffer from, int start, double[] values, int elements) {
    int piece = piece(elements, Double.BYTES);
    for (int done = 0; done < elements; done += piece) {
      from.get(start + done, values, done, Math.min(piece, elements - done));
    }
  }

  private static void store(double[] values, DoubleBuffer to, int start, int elements) {
    int piece = piece(elements, Double.BYTES);
    for (int done = 0; done < elements; done += piece) {
      to.put(start + done, values, done, Math.min(piece, elements - done));
    }
  }

  private static void load(ShortBuffer from, int start, short[] values, int elements) {
    int piece = piece(elements, Short.BYTES);
    for (int done = 0; done < elements; done += piece) {
      from.get(start + done, values, done, Math.min(piece, elements - done));
    }
  }

  private static void store(short[] values, ShortBuffer to, int start, int elements) {
    int piece = piece(elements, Short.BYTES);
    for (int done = 0; done < elements; done += piece) {
      to.put(start + done, values, done, Math.min(piece, elements - done));
    }
  }
}
