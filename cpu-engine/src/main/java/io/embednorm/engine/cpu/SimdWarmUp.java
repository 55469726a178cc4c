package io.embednorm.engine.cpu;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Runs an op on the scalar passes until its SIMD passes are compiled and measured faster, then on
 * the SIMD passes; one decision per op and precision (float32 or float64) for the whole JVM.
 *
 * <p>Why: the Vector API's kernels run at speed only once C2 has compiled them. Interpreted or in
 * C1 they are tens of times slower than the scalar loops, and compiling them takes the JIT about
 * half a second of CPU on a 2-core machine. A short-lived JVM (the {@code normalize} command on a 1
 * GiB file) spent more waiting for them than they saved (docs/PERFORMANCE.md). So the first chunk
 * of an op hands a copy of its rows to a daemon thread, which times both kinds of passes on that
 * copy in alternating rounds; meanwhile every chunk runs scalar. Once the SIMD rounds are the
 * faster ones twice in a row, every later chunk runs SIMD. Where they never are within {@link
 * #DEADLINE_NANOS}, the op stays scalar.
 *
 * <p>Both kinds of passes give the same bits (RowPassSelectionTest), so the switch changes only
 * speed, never an output. {@code -Dembednorm.cpu.warmup=false} starts on the SIMD passes instead.
 */
final class SimdWarmUp {
  /** The system property that, set to {@code false}, runs SIMD passes from the first chunk. */
  static final String PROPERTY = "embednorm.cpu.warmup";

  /**
   * Bytes of an op's rows that run scalar before its SIMD passes are timed, the same for every op:
   * with the scalar exponentials vectorized in part ({@link FloatExponential#exponentialsAndSums}),
   * the softmaxes' scalar passes run at about a third of the SIMD ones' speed (width 768), no
   * longer a sixth, and at that ratio the SIMD passes' compilation (about half a second of a core)
   * pays for itself only after a gigabyte or two (docs/PERFORMANCE.md).
   */
  static final long SCALAR_BYTES = 2L << 30;

  /** The longest the warm-up thread times an op before it settles on the scalar passes. */
  static final long DEADLINE_NANOS = 20_000_000_000L;

  /**
   * Calls of the kernel per timed round: about 0.1–1 ms of compiled code on a sample of one chunk
   * (3 KiB of float32, or one wider row).
   */
  static final int CALLS_PER_ROUND = 256;

  /** SIMD rounds in a row that must beat the scalar rounds beside them. */
  static final int FASTER_ROUNDS = 2;

  private static final int NOT_STARTED = 0;
  private static final int TIMING = 1;
  private static final int SIMD = 2;
  private static final int SCALAR = 3;

  private final RowPasses vector;
  private final RowPasses scalar;
  private final long scalarBytes;
  private final long deadlineNanos;

  /** Per op and precision: bytes run scalar so far, counted until the timing starts. */
  private final AtomicLongArray scalarBytesDone = new AtomicLongArray(Op.values().length * 2);

  /** Per op and precision ({@link #key}): NOT_STARTED, TIMING, SIMD or SCALAR. */
  private final AtomicIntegerArray states = new AtomicIntegerArray(Op.values().length * 2);

  SimdWarmUp(RowPasses vector, RowPasses scalar, long scalarBytes, long deadlineNanos) {
    this.vector = vector;
    this.scalar = scalar;
    this.scalarBytes = scalarBytes;
    this.deadlineNanos = deadlineNanos;
  }

  /**
   * The passes for the op's next float32 rows: {@code rows × width} elements of {@code values} from
   * {@code offset}, not yet normalized.
   */
  RowPasses floatPasses(
      Normalization normalization, float[] values, int offset, int width, int rows) {
    int key = key(normalization.op(), 0);
    int state = states.get(key);
    if (state == SIMD) {
      return vector;
    }
    if (state == NOT_STARTED
        && rows > 0
        && width > 0
        && due(key, (long) rows * width * Float.BYTES)) {
      int sampleRows = Math.max(1, Math.min(rows, CpuEngine.CHUNK_ELEMENTS / width));
      float[] sample = Arrays.copyOfRange(values, offset, offset + sampleRows * width);
      if (width > CpuEngine.CHUNK_ELEMENTS) {
        start(key, wideRow(normalization, sample));
      } else {
        start(
            key,
            passes -> {
              float[] output = new float[sample.length];
              CpuKernels.normalizeRows(
                  passes, normalization, sample, 0, output, 0, width, sampleRows);
            });
      }
    }
    return scalar;
  }

  /**
   * A row wider than a chunk as the engine runs it: between direct buffers where the passes can (so
   * that the SIMD passes are timed, and compiled, in the form the engine will call), else through
   * arrays. The buffers are allocated on the warm-up thread at its first call; where direct memory
   * is short the row is timed through arrays only.
   */
  private static Kernel wideRow(Normalization normalization, float[] row) {
    return new Kernel() {
      private final float[] values = new float[row.length];
      private ByteBuffer input;
      private ByteBuffer output;
      private boolean arraysOnly;

      @Override
      public void run(RowPasses passes) {
        if (input == null && !arraysOnly) {
          allocate();
        }
        if (arraysOnly
            || !passes.normalizeBetweenBuffers(normalization, input, output, 0, row.length)) {
          CpuKernels.normalizeRows(passes, normalization, row, 0, values, 0, row.length, 1);
        }
      }

      private void allocate() {
        try {
          int bytes = Math.multiplyExact(row.length, Float.BYTES);
          ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
          in.asFloatBuffer().put(row);
          output = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
          input = in;
        } catch (OutOfMemoryError | ArithmeticException e) {
          arraysOnly = true;
        }
      }
    };
  }

  /** The passes for the op's next float64 row, {@code width} elements of {@code values}. */
  RowPasses doublePasses(Normalization normalization, double[] values, int offset, int width) {
    int key = key(normalization.op(), 1);
    int state = states.get(key);
    if (state == SIMD) {
      return vector;
    }
    if (state == NOT_STARTED && width > 0 && due(key, (long) width * Double.BYTES)) {
      double[] sample = Arrays.copyOfRange(values, offset, offset + width);
      start(
          key,
          passes -> {
            double[] output = new double[width];
            CpuKernels.normalizeRow(passes, normalization, sample, 0, output, 0, width);
          });
    }
    return scalar;
  }

  /** Whether the op's chunks of that precision run SIMD now. */
  boolean runsSimd(Op op, int precision) {
    return states.get(key(op, precision)) == SIMD;
  }

  /** Whether the warm-up of the op settled on scalar passes (for tests). */
  boolean settledScalar(Op op, int precision) {
    return states.get(key(op, precision)) == SCALAR;
  }

  /** Counts {@code bytes} more run scalar; true for the one caller that is to start the timing. */
  private boolean due(int key, long bytes) {
    return scalarBytesDone.addAndGet(key, bytes) >= scalarBytes
        && states.compareAndSet(key, NOT_STARTED, TIMING);
  }

  private static int key(Op op, int precision) {
    return op.ordinal() * 2 + precision;
  }

  /** One call of the sampled kernel on the given passes. */
  @FunctionalInterface
  private interface Kernel {
    void run(RowPasses passes);
  }

  private void start(int key, Kernel kernel) {
    Thread thread = new Thread(() -> time(key, kernel), "embednorm-simd-warmup");
    thread.setDaemon(true);
    thread.setPriority(Thread.MIN_PRIORITY);
    thread.start();
  }

  /** Alternates timed rounds until the SIMD passes win {@link #FASTER_ROUNDS} rounds in a row. */
  private void time(int key, Kernel kernel) {
    int outcome = SCALAR;
    try {
      long deadline = System.nanoTime() + deadlineNanos;
      int faster = 0;
      while (System.nanoTime() < deadline) {
        long simd = round(kernel, vector);
        long plain = round(kernel, scalar);
        faster = simd <= plain ? faster + 1 : 0;
        if (faster == FASTER_ROUNDS) {
          outcome = SIMD;
          break;
        }
      }
    } catch (RuntimeException | LinkageError failure) {
      // The engine's own calls meet and report the same failure; the op just stays scalar.
    } finally {
      states.set(key, outcome);
    }
  }

  private static long round(Kernel kernel, RowPasses passes) {
    long start = System.nanoTime();
    for (int call = 0; call < CALLS_PER_ROUND; call++) {
      kernel.run(passes);
    }
    return System.nanoTime() - start;
  }
}
