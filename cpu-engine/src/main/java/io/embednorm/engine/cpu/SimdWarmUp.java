package io.embednorm.engine.cpu;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Runs an op on the scalar passes until its SIMD passes are compiled and measured faster, then on
 * the SIMD passes; one decision per op and precision (float32 or float64) for the whole JVM.
 *
 * <p>Why it exists: the Vector API's kernels run at speed only once C2 has compiled them.
 * Interpreted or in C1 they are hundreds of times slower than the scalar loops and allocate every
 * vector. A JVM that ran the SIMD passes from its first rows spent its first second on them at that
 * speed, on the user's data: normalizing 460 MB of rows 768 wide once took it two to three and a
 * half times as long as on the scalar passes.
 *
 * <p>How: the first chunk of an op, whatever its size, hands a copy of its rows to a daemon thread,
 * which times both kinds of passes on that copy in alternating rounds, compiling the SIMD loops as
 * it goes (conf/jvm.options makes it wait for C2 rather than run on in C1); meanwhile every chunk
 * runs scalar. As soon as the timing settles on SIMD ({@link Race}), every later chunk runs SIMD.
 * Where it never does within {@link #DEADLINE_NANOS}, the op stays scalar.
 *
 * <p>What it costs: compiling and timing an op's SIMD passes takes about as much CPU as the scalar
 * passes spend on two GB of its rows, with a thread and C2 busy for the first second or two beside
 * the engine's own threads (C2 serves the warm-up's compilations and the engine's in turn). On a
 * 2-core machine, a JVM that normalized 460 MB of rows 768 wide once finished 13-65 % later than on
 * the scalar passes alone, with one engine thread or two (the job ended before the switch); one
 * that went on to 7.4 GB finished 10-20 % sooner, on SIMD from its second or third GB. So a short
 * job pays for SIMD it never uses, and a long one gets it early.
 *
 * <p>Both kinds of passes give the same bits (RowPassSelectionTest), so the switch changes only
 * speed, never an output. The paths outside the timed kernels (rows between buffers, float16
 * conversions) wait for the switch too ({@link CpuEngine}). The internal switch {@code
 * -Dembednorm.cpu.warmup=false} (benchmarks) starts on the SIMD passes instead.
 */
final class SimdWarmUp {
  /** The longest the warm-up thread times an op before it settles on the scalar passes. */
  static final long DEADLINE_NANOS = 20_000_000_000L;

  /**
   * Calls of the kernel per timed round, on a sample of one chunk (3 KiB of float32, or one wider
   * row): compiled, enough work for the clock to time and little enough to repeat many times.
   */
  static final int CALLS_PER_ROUND = 256;

  /** SIMD rounds in a row that must beat the scalar rounds beside them. */
  static final int FASTER_ROUNDS = 2;

  /** Rounds of compiled SIMD passes after which the timing settles on the faster kind. */
  static final int COMPILED_ROUNDS = 32;

  private static final int NOT_STARTED = 0;
  static final int TIMING = 1;
  static final int SIMD = 2;
  static final int SCALAR = 3;

  private final RowPasses vector;
  private final RowPasses scalar;
  private final long deadlineNanos;

  /** Per op and precision ({@link #key}): NOT_STARTED, TIMING, SIMD or SCALAR. */
  private final AtomicIntegerArray states = new AtomicIntegerArray(Op.values().length * 2);

  SimdWarmUp(RowPasses vector, RowPasses scalar, long deadlineNanos) {
    this.vector = vector;
    this.scalar = scalar;
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
    if (state == NOT_STARTED && rows > 0 && width > 0 && due(key)) {
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
    if (state == NOT_STARTED && width > 0 && due(key)) {
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

  /** True for the one caller that is to start the timing of the op. */
  private boolean due(int key) {
    return states.compareAndSet(key, NOT_STARTED, TIMING);
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

  /** Alternates timed rounds until {@link Race} settles, or the deadline passes. */
  private void time(int key, Kernel kernel) {
    int outcome = TIMING;
    try {
      long deadline = System.nanoTime() + deadlineNanos;
      Race race = new Race();
      while (outcome == TIMING && System.nanoTime() < deadline) {
        long simd = round(kernel, vector);
        long plain = round(kernel, scalar);
        outcome = race.settle(simd, plain);
      }
    } catch (RuntimeException | LinkageError failure) {
      // The engine's own calls meet and report the same failure; the op just stays scalar.
    } finally {
      states.set(key, outcome == SIMD ? SIMD : SCALAR);
    }
  }

  /**
   * The decision, round by round: SIMD once its rounds are the faster ones {@link #FASTER_ROUNDS}
   * times in a row; else, once SIMD has run {@link #COMPILED_ROUNDS} rounds within twice the scalar
   * rounds' time (so compiled: before C2 the Vector API runs tens to hundreds of times slower),
   * whichever kind had the faster best round. The second rule ends the timing where both kinds run
   * at about the same speed (rows that are mostly memory traffic, whose rounds the first rule may
   * split for long), which otherwise kept a core busy until the deadline.
   */
  static final class Race {
    private int faster;
    private int compiled;
    private long bestSimd = Long.MAX_VALUE;
    private long bestScalar = Long.MAX_VALUE;

    /**
     * After a round in which the SIMD passes took {@code simd} nanoseconds and the scalar ones
     * {@code plain}: {@link SimdWarmUp#SIMD} or {@link SimdWarmUp#SCALAR} once settled, {@link
     * SimdWarmUp#TIMING} to go on.
     */
    int settle(long simd, long plain) {
      faster = simd <= plain ? faster + 1 : 0;
      if (faster == FASTER_ROUNDS) {
        return SIMD;
      }
      if (simd < 2 * plain) {
        bestSimd = Math.min(bestSimd, simd);
        bestScalar = Math.min(bestScalar, plain);
        if (++compiled == COMPILED_ROUNDS) {
          return bestSimd <= bestScalar ? SIMD : SCALAR;
        }
      }
      return TIMING;
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
