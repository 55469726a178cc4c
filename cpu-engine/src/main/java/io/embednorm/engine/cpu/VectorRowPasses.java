package io.embednorm.engine.cpu;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.embednorm.engine.Normalization;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The passes with the JDK Vector API (jdk.incubator.vector). Loaded only by {@link
 * RowPassSelection}, reflectively and only when the JVM has the module, so that no other class
 * links against it.
 *
 * <p>256-bit registers, whatever the machine prefers: eight float32 lanes are exactly the eight
 * accumulators of {@link FloatSums} (element i in lane i % 8), and float64 uses two 4-lane
 * registers as lanes 0–3 and 4–7. The one exception is the softmaxes' exponentials, element-wise,
 * which take 512-bit registers where the machine prefers them ({@link #wideExponentials}) and are
 * then summed from where they were stored. Blocks, split points, the final pairwise combination and
 * every element-wise operation are those of {@link ScalarRowPasses}, so both give the same bits; a
 * row tail shorter than a register goes through scalar code, into its lanes after the register is
 * stored (reductions) or straight to the output (element-wise, exponentials).
 *
 * <p>Each float32 pass runs over a whole group of rows: rows of up to one block whose width is a
 * multiple of 32 in one flat loop over the group (see {@link #isFlat}), other rows block by block
 * in one loop nest, four equal blocks side by side where a row has them. The lanes of each block go
 * through {@link RowScratch#lanes} to {@link SumTree}, which adds them in FloatSums' order; rows of
 * one block have their lanes added eight rows at a time, in registers ({@link #sumsOfEightRows}).
 *
 * <p>On JDK 17, C2 allocates a vector on the heap (and runs 2–5× slower) whenever it cannot keep it
 * in a register; four situations did that here, and the code avoids each:
 *
 * <ul>
 *   <li>no method of this class takes or returns a vector: one that crosses a call C2 did not
 *       inline is boxed;
 *   <li>no vector is reassigned in a branch inside a loop (a flat loop changes only ints where a
 *       row ends, and reads per-row factors from their arrays; a row's tail is added to its lanes
 *       in scalar code: the masked step it replaced, taken only where a block ends off a register,
 *       got C2 to box the block's sum in some compilations: rms_norm at width 300 took 78-119 ms
 *       against 38 for the scalar passes in a probe, 17 ms after; docs/PERFORMANCE.md);
 *   <li>no method holds more than about two large vector loops, nor calls another that does: past
 *       C2's inlining cutoff (18,000 parse nodes) the Vector API's own methods are inlined too late
 *       for their intrinsics;
 *   <li>no vector changes shape (float32 ⇄ float64 goes through arrays by plain casts) but in
 *       {@link #plainStatistics}, a small method of its own: such a conversion was sometimes
 *       inlined too late in the same way;
 *   <li>a vector whose class C2 cannot see where it is stored is cast to it first ({@link
 *       #FLOAT_CLASS}): the store's species otherwise comes from a profile that the 512-bit stores
 *       share.
 * </ul>
 *
 * The engine's allocation per row (thread allocation counters around a benchmark) is the check.
 */
final class VectorRowPasses implements RowPasses {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_256;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
  private static final int FLOAT_LANES = 8;
  private static final int DOUBLE_LANES = 4;
  private static final int BLOCK = FloatSums.BLOCK;

  /** Elements per step of a flat loop: four registers, in order. */
  private static final int STEP = 4 * 8;

  /**
   * Lanes 1, 3, 5, 7; 2, 3, 6, 7; 4-7: the upper lane of each pair that a round of {@link
   * #sumsOfEightRows} adds.
   */
  private static final VectorMask<Float> UPPER_OF_ONES =
      VectorMask.fromValues(FLOATS, false, true, false, true, false, true, false, true);

  private static final VectorMask<Float> UPPER_OF_TWOS =
      VectorMask.fromValues(FLOATS, false, false, true, true, false, false, true, true);

  private static final VectorMask<Float> UPPER_OF_FOURS =
      VectorMask.fromValues(FLOATS, false, false, false, false, true, true, true, true);

  /** Lane i from lane i ^ 1, i ^ 2 and i ^ 4. */
  private static final VectorShuffle<Float> SWAP_ONES =
      VectorShuffle.fromValues(FLOATS, 1, 0, 3, 2, 5, 4, 7, 6);

  private static final VectorShuffle<Float> SWAP_TWOS =
      VectorShuffle.fromValues(FLOATS, 2, 3, 0, 1, 6, 7, 4, 5);

  private static final VectorShuffle<Float> SWAP_FOURS =
      VectorShuffle.fromValues(FLOATS, 4, 5, 6, 7, 0, 1, 2, 3);

  /** The exponentials' registers where they are wide: sixteen float32 lanes. */
  private static final VectorSpecies<Float> WIDE_FLOATS = FloatVector.SPECIES_512;

  private static final VectorSpecies<Integer> WIDE_INTS = IntVector.SPECIES_512;

  private static final int WIDE_LANES = 16;

  /**
   * The system property that, set to {@code 256}, keeps the exponentials on 256-bit registers where
   * the machine prefers 512-bit ones.
   */
  static final String EXPONENTIAL_BITS_PROPERTY = "embednorm.cpu.exponentialBits";

  /**
   * Whether softmax's and log_softmax's exponentials run on 512-bit registers (then summed from
   * where they were stored, as on 256-bit ones). The exponential is element-wise, so the register
   * width changes no bit; where a core runs 512-bit instructions at full width it doubles the
   * exponentials an instruction computes (AMD Zen 5, JDK 17: docs/PERFORMANCE.md).
   */
  private final boolean wideExponentials;

  /**
   * The class of {@link #FLOATS}' vectors, a constant to C2: every float store here is {@code
   * ((FloatVector) FLOAT_CLASS.cast(v)).intoArray(...)}. {@code intoArray} finds the species
   * through calls on the vector; where C2 does not know the vector's class as it parses the store
   * (a loop's register, a blend, a shape conversion) it takes them from their profile, which the
   * 256- and 512-bit stores share once the wide exponentials have run, cannot tell the species, and
   * runs the store as a Java call with the vector allocated. The cast (an intrinsic) gives the
   * class. Without it, after a softmax in the same JVM, rms_norm at width 32 ran 15-25 % slower and
   * layer_norm 60-120 %; after several ops and widths, l2_normalize at widths 100 and 300 ran 3-4x
   * slower (2026-11-27, {@code bench/cpu-probes/MixedProbe.java}).
   *
   * <p>A loop's running register is cast the same way wherever a method is called on it, and the
   * shift of the blocked sums is broadcast inside the loop that subtracts it (C2 hoists it): after
   * many ops and widths in one JVM, the profiles behind both (shared by every caller of the Vector
   * API) made C2 keep every vector of those loops in objects, 3-130 KB a call from width 100 up,
   * and the rows ran up to twice as slow. Either change alone left 15-30 of 65 cells allocating;
   * both together none (2026-11-27, {@code bench/cpu-probes/AllocProbe.java}). Shape changes name
   * their species ({@code reinterpretShape(INTS, 0)}, {@code convertShape(I2F, FLOATS, 0)}): {@code
   * reinterpretAsInts()} and {@code convert(I2F, 0)} look it up as they run, and in the module's
   * test JVM C2 once ran the logarithms' conversion as its Java fallback, allocating ({@code
   * SimdAllocationTest}).
   */
  private static final Class<? extends Vector<Float>> FLOAT_CLASS = FLOATS.vectorType();

  /** The class of {@link #WIDE_FLOATS}' vectors, for the same casts ({@link #FLOAT_CLASS}). */
  private static final Class<? extends Vector<Float>> WIDE_FLOAT_CLASS = WIDE_FLOATS.vectorType();

  private VectorRowPasses(boolean wideExponentials) {
    this.wideExponentials = wideExponentials;
  }

  /**
   * The SIMD passes, or null when this machine's preferred vectors are narrower than 256 bits
   * (where 256-bit ones would be emulated and slower than scalar code). The exponentials take
   * 512-bit registers where the machine prefers them, unless {@link #EXPONENTIAL_BITS_PROPERTY} is
   * 256. Called reflectively.
   */
  static RowPasses createIfSupported() {
    if (FloatVector.SPECIES_PREFERRED.vectorBitSize() < 256
        || DoubleVector.SPECIES_PREFERRED.vectorBitSize() < 256) {
      return null;
    }
    return new VectorRowPasses(
        FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512
            && !"256".equals(System.getProperty(EXPONENTIAL_BITS_PROPERTY)));
  }

  /**
   * Both forms, 256- and 512-bit exponentials, whatever this machine prefers (where 512-bit
   * registers are emulated the second is slow, but gives the same bits): for tests. Called
   * reflectively.
   */
  static List<RowPasses> variants() {
    return List.of(new VectorRowPasses(false), new VectorRowPasses(true));
  }

  /**
   * The least {@code -XX:PerMethodTrapLimit} (C2's limit on the deoptimizations of all the methods
   * one compilation inlines; conf/jvm.options sets 1000 and says why) under which the kernels that
   * need more Vector API code in the JVM stay off: under the default (100), with them, the
   * deoptimizations of the Vector API's shared methods added up past the limit and C2 compiled
   * other kernels with heap-allocated vectors (SimdAllocationTest, 2026-11-27: rows between buffers
   * made softmax and LayerNorm allocate 160 bytes to 229 KB a call, the float16 conversions
   * LayerNorm at width 32 120 bytes).
   */
  static final long LEAST_TRAP_LIMIT = 1000;

  /**
   * Whether this JVM runs with {@code -XX:PerMethodTrapLimit} of at least {@link
   * #LEAST_TRAP_LIMIT}.
   */
  static boolean trapLimitRaised() {
    return Gates.TRAP_LIMIT_RAISED;
  }

  /**
   * Whether {@link #normalizeBetweenBuffers} runs {@link BufferRowKernels}: where the trap limit is
   * raised and this JVM's Vector API reads and writes byte buffers ({@code
   * FloatVector.fromByteBuffer} and {@code intoByteBuffer}, JDK 17 and 18; later JDKs replaced them
   * by memory segments; checked by reflection so that the class never links where they are
   * missing).
   */
  static boolean rowsBetweenBuffers() {
    return Gates.ROWS_BETWEEN_BUFFERS;
  }

  /**
   * The two gates, read on first use rather than when the passes load: the management bean that
   * reads the trap limit costs about 30 ms of a cold JVM, which narrow float32 rows never need.
   */
  private static final class Gates {
    static final boolean TRAP_LIMIT_RAISED = trapLimit() >= LEAST_TRAP_LIMIT;
    static final boolean ROWS_BETWEEN_BUFFERS = TRAP_LIMIT_RAISED && hasByteBufferVectors();

    private Gates() {}
  }

  @Override
  public boolean normalizeBetweenBuffers(
      Normalization normalization, ByteBuffer input, ByteBuffer output, int start, int width) {
    return rowsBetweenBuffers()
        && BufferRowKernels.normalize(this, normalization, input, output, start, width);
  }

  private static boolean hasByteBufferVectors() {
    try {
      FloatVector.class.getMethod(
          "fromByteBuffer", VectorSpecies.class, ByteBuffer.class, int.class, ByteOrder.class);
      FloatVector.class.getMethod("intoByteBuffer", ByteBuffer.class, int.class, ByteOrder.class);
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /** This JVM's {@code PerMethodTrapLimit}, or 0 where it cannot be read. */
  private static long trapLimit() {
    try {
      HotSpotDiagnosticMXBean diagnostics =
          ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      return Long.parseLong(diagnostics.getVMOption("PerMethodTrapLimit").getValue());
    } catch (RuntimeException | LinkageError e) {
      return 0;
    }
  }

  /** On SIMD where the trap limit is raised ({@link #trapLimitRaised}), else scalar. */
  @Override
  public void halvesToFloats(short[] halves, float[] floats, int count) {
    if (trapLimitRaised()) {
      VectorHalves.toFloats(halves, floats, count);
    } else {
      ScalarRowPasses.INSTANCE.halvesToFloats(halves, floats, count);
    }
  }

  /** On SIMD where the trap limit is raised ({@link #trapLimitRaised}), else scalar. */
  @Override
  public void floatsToHalves(float[] floats, short[] halves, int count) {
    if (trapLimitRaised()) {
      VectorHalves.toHalves(floats, halves, count);
    } else {
      ScalarRowPasses.INSTANCE.floatsToHalves(floats, halves, count);
    }
  }

  @Override
  public String description() {
    return wideExponentials ? "java simd, 256-bit, 512-bit exponentials" : "java simd, 256-bit";
  }

  // ---- float32 reductions of a group of rows ----
  //
  // Each method is one loop nest over the rows of the group and the blocks of each row
  // (SumTree: FloatSums' blocks, in order): a register of eight lanes per block, stored to the
  // per-thread array RowScratch.lanes(); the lanes and blocks are then added in scalar code in
  // FloatSums' order (see the class comment for why no vector leaves a method). One pass over a
  // whole group pays one call and one lane combine per block instead of a recursion and lane
  // extractions per row.

  @Override
  public void maxima(float[] values, int offset, int width, int count, float[] maxima) {
    float[] lanes = RowScratch.current().lanes(count * FLOAT_LANES);
    if (isFlat(width)) {
      Arrays.fill(lanes, 0, count * FLOAT_LANES, Float.NEGATIVE_INFINITY);
      int perRow = width / STEP;
      int left = perRow;
      int at = 0;
      for (int index = offset, end = offset + count * width; index < end; index += STEP) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, lanes, at)
                        .max(FloatVector.fromArray(FLOATS, values, index))
                        .max(FloatVector.fromArray(FLOATS, values, index + 8))
                        .max(FloatVector.fromArray(FLOATS, values, index + 16))
                        .max(FloatVector.fromArray(FLOATS, values, index + 24))))
            .intoArray(lanes, at);
        if (--left == 0) {
          left = perRow;
          at += FLOAT_LANES;
        }
      }
      maximaOfLanes(lanes, count, maxima);
      return;
    }
    int full = width & ~(FLOAT_LANES - 1);
    int fullSteps = width & ~(STEP - 1);
    for (int row = 0, start = offset; row < count; row++, start += width) {
      // Max is exact and symmetric (NaN wins, +0 over −0): any order gives the scalar value, so
      // four registers take turns, four chains of max instead of one.
      FloatVector maximum = FloatVector.broadcast(FLOATS, values[start]);
      FloatVector second = maximum;
      FloatVector third = maximum;
      FloatVector fourth = maximum;
      int index = start;
      for (int end = start + fullSteps; index < end; index += STEP) {
        maximum =
            ((FloatVector) FLOAT_CLASS.cast(maximum))
                .max(FloatVector.fromArray(FLOATS, values, index));
        second =
            ((FloatVector) FLOAT_CLASS.cast(second))
                .max(FloatVector.fromArray(FLOATS, values, index + 8));
        third =
            ((FloatVector) FLOAT_CLASS.cast(third))
                .max(FloatVector.fromArray(FLOATS, values, index + 16));
        fourth =
            ((FloatVector) FLOAT_CLASS.cast(fourth))
                .max(FloatVector.fromArray(FLOATS, values, index + 24));
      }
      maximum =
          ((FloatVector) FLOAT_CLASS.cast(maximum))
              .max(FLOAT_CLASS.cast(second))
              .max(((FloatVector) FLOAT_CLASS.cast(third)).max(FLOAT_CLASS.cast(fourth)));
      for (int end = start + full; index < end; index += FLOAT_LANES) {
        maximum =
            ((FloatVector) FLOAT_CLASS.cast(maximum))
                .max(FloatVector.fromArray(FLOATS, values, index));
      }
      ((FloatVector) FLOAT_CLASS.cast(maximum)).intoArray(lanes, row * FLOAT_LANES);
      // The tail, element j to lane j, in scalar code (the class comment says why).
      for (int lane = row * FLOAT_LANES, end = start + width; index < end; index++, lane++) {
        lanes[lane] = Math.max(lanes[lane], values[index]);
      }
    }
    maximaOfLanes(lanes, count, maxima);
  }

  /**
   * The maximum of each row's eight lanes (any order gives the same value): eight rows at a time
   * ({@link #maximaOfEightRows}), then one reduction per row, where seven Math.max cost about four
   * times as much.
   */
  private static void maximaOfLanes(float[] lanes, int count, float[] maxima) {
    int row = 0;
    for (; row + FLOAT_LANES <= count; row += FLOAT_LANES) {
      maximaOfEightRows(lanes, row * FLOAT_LANES, maxima, row);
    }
    for (; row < count; row++) {
      maxima[row] =
          FloatVector.fromArray(FLOATS, lanes, row * FLOAT_LANES).reduceLanes(VectorOperators.MAX);
    }
  }

  /**
   * {@code maxima[to + r]} = the maximum of the eight floats at {@code lanes[at + 8r]}, r = 0 … 7:
   * {@link #sumsOfEightRows}' three folds with max for add, 7 register folds for 8 rows instead of
   * 8 reductions. Written out again rather than shared: a fold taking its operator would pass C2 an
   * operator it sees as constant only where the call is inlined, and the Vector API falls back to
   * Java objects where it is not.
   */
  private static void maximaOfEightRows(float[] lanes, int at, float[] maxima, int to) {
    FloatVector r0 = FloatVector.fromArray(FLOATS, lanes, at);
    FloatVector r1 = FloatVector.fromArray(FLOATS, lanes, at + 8);
    FloatVector r2 = FloatVector.fromArray(FLOATS, lanes, at + 16);
    FloatVector r3 = FloatVector.fromArray(FLOATS, lanes, at + 24);
    FloatVector r4 = FloatVector.fromArray(FLOATS, lanes, at + 32);
    FloatVector r5 = FloatVector.fromArray(FLOATS, lanes, at + 40);
    FloatVector r6 = FloatVector.fromArray(FLOATS, lanes, at + 48);
    FloatVector r7 = FloatVector.fromArray(FLOATS, lanes, at + 56);
    FloatVector p01 =
        r0.blend(r1, UPPER_OF_ONES).max(r1.blend(r0, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p23 =
        r2.blend(r3, UPPER_OF_ONES).max(r3.blend(r2, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p45 =
        r4.blend(r5, UPPER_OF_ONES).max(r5.blend(r4, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p67 =
        r6.blend(r7, UPPER_OF_ONES).max(r7.blend(r6, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector q0123 =
        p01.blend(p23, UPPER_OF_TWOS).max(p23.blend(p01, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector q4567 =
        p45.blend(p67, UPPER_OF_TWOS).max(p67.blend(p45, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector eightMaxima =
        q0123
            .blend(q4567, UPPER_OF_FOURS)
            .max(q4567.blend(q0123, UPPER_OF_FOURS).rearrange(SWAP_FOURS));
    ((FloatVector) FLOAT_CLASS.cast(eightMaxima)).intoArray(maxima, to);
  }

  @Override
  public void sumsOfSquares(float[] values, int offset, int width, int count, float[] sums) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(count * blocks * FLOAT_LANES);
    if (width == STEP) {
      for (int row = 0, index = offset; row < count; row++, index += STEP) {
        FloatVector a = FloatVector.fromArray(FLOATS, values, index);
        FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8);
        FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16);
        FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24);
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.zero(FLOATS)
                        .add(a.mul(a))
                        .add(b.mul(b))
                        .add(c.mul(c))
                        .add(d.mul(d))))
            .intoArray(lanes, row * FLOAT_LANES);
      }
      sumsOfLanes(lanes, count, sums);
      return;
    }
    if (isFlat(width)) {
      // A register per row, as in sumsOfExponentials.
      for (int row = 0, start = offset; row < count; row++, start += width) {
        FloatVector sum = FloatVector.zero(FLOATS);
        for (int index = start, end = start + width; index < end; index += STEP) {
          FloatVector a = FloatVector.fromArray(FLOATS, values, index);
          FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8);
          FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16);
          FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24);
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(a.mul(a))
                  .add(b.mul(b))
                  .add(c.mul(c))
                  .add(d.mul(d));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, row * FLOAT_LANES);
      }
      sumsOfLanes(lanes, count, sums);
      return;
    }
    int uniform = tree.uniformLength();
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      int index = start;
      int block = 0;
      for (; uniform > 0 && block + 4 <= blocks; block += 4, at += 4 * FLOAT_LANES) {
        FloatVector a = FloatVector.zero(FLOATS);
        FloatVector b = FloatVector.zero(FLOATS);
        FloatVector c = FloatVector.zero(FLOATS);
        FloatVector d = FloatVector.zero(FLOATS);
        for (int end = index + uniform; index < end; index += FLOAT_LANES) {
          FloatVector x = FloatVector.fromArray(FLOATS, values, index);
          FloatVector y = FloatVector.fromArray(FLOATS, values, index + uniform);
          FloatVector z = FloatVector.fromArray(FLOATS, values, index + 2 * uniform);
          FloatVector w = FloatVector.fromArray(FLOATS, values, index + 3 * uniform);
          a = ((FloatVector) FLOAT_CLASS.cast(a)).add(x.mul(x));
          b = ((FloatVector) FLOAT_CLASS.cast(b)).add(y.mul(y));
          c = ((FloatVector) FLOAT_CLASS.cast(c)).add(z.mul(z));
          d = ((FloatVector) FLOAT_CLASS.cast(d)).add(w.mul(w));
        }
        index += 3 * uniform;
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(lanes, at);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(lanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(lanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(lanes, at + 24);
      }
      for (; block < blocks; block++, at += FLOAT_LANES) {
        int end = start + ends[block];
        int full = index + ((end - index) & ~(FLOAT_LANES - 1));
        FloatVector sum = FloatVector.zero(FLOATS);
        for (; index < full; index += FLOAT_LANES) {
          FloatVector value = FloatVector.fromArray(FLOATS, values, index);
          sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(value.mul(value));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
        // The tail, element j to lane j, in scalar code (the class comment says why).
        for (int lane = at; index < end; index++, lane++) {
          lanes[lane] += values[index] * values[index];
        }
      }
    }
    treeSums(scratch, tree, lanes, count, sums);
  }

  /**
   * {@code sums[row]} = Σ x in {@link FloatSums#sumOfDifferences}' order with shift 0, the sums of
   * stored exponentials ({@link #storeExponentials}): x − 0 is x for every float (−0 − +0 is −0),
   * so no subtraction is made; it was one of two operations an element of this pass.
   */
  private static void sumsOfStored(float[] values, int offset, int width, int count, float[] sums) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(count * blocks * FLOAT_LANES);
    if (isFlat(width)) {
      // A register per row, as in sumsOfExponentials.
      for (int row = 0, start = offset; row < count; row++, start += width) {
        FloatVector sum = FloatVector.zero(FLOATS);
        for (int index = start, end = start + width; index < end; index += STEP) {
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(FloatVector.fromArray(FLOATS, values, index))
                  .add(FloatVector.fromArray(FLOATS, values, index + 8))
                  .add(FloatVector.fromArray(FLOATS, values, index + 16))
                  .add(FloatVector.fromArray(FLOATS, values, index + 24));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, row * FLOAT_LANES);
      }
      sumsOfLanes(lanes, count, sums);
      return;
    }
    int uniform = tree.uniformLength();
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      int index = start;
      int block = 0;
      for (; uniform > 0 && block + 4 <= blocks; block += 4, at += 4 * FLOAT_LANES) {
        FloatVector a = FloatVector.zero(FLOATS);
        FloatVector b = FloatVector.zero(FLOATS);
        FloatVector c = FloatVector.zero(FLOATS);
        FloatVector d = FloatVector.zero(FLOATS);
        for (int end = index + uniform; index < end; index += FLOAT_LANES) {
          a = ((FloatVector) FLOAT_CLASS.cast(a)).add(FloatVector.fromArray(FLOATS, values, index));
          b =
              ((FloatVector) FLOAT_CLASS.cast(b))
                  .add(FloatVector.fromArray(FLOATS, values, index + uniform));
          c =
              ((FloatVector) FLOAT_CLASS.cast(c))
                  .add(FloatVector.fromArray(FLOATS, values, index + 2 * uniform));
          d =
              ((FloatVector) FLOAT_CLASS.cast(d))
                  .add(FloatVector.fromArray(FLOATS, values, index + 3 * uniform));
        }
        index += 3 * uniform;
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(lanes, at);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(lanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(lanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(lanes, at + 24);
      }
      for (; block < blocks; block++, at += FLOAT_LANES) {
        int end = start + ends[block];
        int full = index + ((end - index) & ~(FLOAT_LANES - 1));
        FloatVector sum = FloatVector.zero(FLOATS);
        for (; index < full; index += FLOAT_LANES) {
          sum =
              ((FloatVector) FLOAT_CLASS.cast(sum))
                  .add(FloatVector.fromArray(FLOATS, values, index));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
        // The tail, element j to lane j, in scalar code (the class comment says why).
        for (int lane = at; index < end; index++, lane++) {
          lanes[lane] += values[index];
        }
      }
    }
    treeSums(scratch, tree, lanes, count, sums);
  }

  /**
   * {@code sums[row]} as {@link SumTree#sums} adds them from a group's block lanes. From 16 blocks
   * in the group the lanes of each block are combined eight blocks at a time ({@link #sumsOfLanes})
   * before the blocks are added in the tree's order: the same additions, without a scalar combine
   * per block and a chain through the tree's stack. Σd and Σd² of a row (StatsProbe, 2026-11-27):
   * 4096 wide 397-412 ns against 441-475, 32768 wide 3040-3255 against 3883-4094; at 8 blocks
   * (width 1024) the scalar combine was faster, 120-125 against 131-135.
   */
  static void treeSums(RowScratch scratch, SumTree tree, float[] lanes, int count, float[] sums) {
    int blocks = count * tree.blocks();
    if (blocks < 2 * FLOAT_LANES) {
      tree.sums(lanes, count, sums);
      return;
    }
    float[] blockSums = scratch.blockSums(blocks);
    sumsOfLanes(lanes, blocks, blockSums);
    tree.sumsOfBlocks(blockSums, count, sums);
  }

  /**
   * {@code sums[row]} = {@link SumTree#combine} of the eight lanes at {@code lanes[8 · row]}, for
   * each row below {@code count}: eight rows at a time ({@link #sumsOfEightRows}), the rest one by
   * one.
   */
  private static void sumsOfLanes(float[] lanes, int count, float[] sums) {
    int row = 0;
    for (; row + FLOAT_LANES <= count; row += FLOAT_LANES) {
      sumsOfEightRows(lanes, row * FLOAT_LANES, FLOAT_LANES, 1f, sums, row);
    }
    for (; row < count; row++) {
      sums[row] = SumTree.combine(lanes, row * FLOAT_LANES);
    }
  }

  /**
   * {@code sums[to + r]} = {@link SumTree#combine} of the eight floats at {@code source[at + r ·
   * stride]}, each multiplied by {@code factor} first, for r = 0 … 7. Three rounds add lanes 1, 2
   * and 4 apart, as combine's three levels do; each round folds two registers into one (rows side
   * by side), so that after the third lane r holds row r. Against a horizontal sum per row this
   * takes 7 register folds for 8 rows instead of 8 stores and 8 × 7 scalar loads and adds.
   */
  private static void sumsOfEightRows(
      float[] source, int at, int stride, float factor, float[] sums, int to) {
    FloatVector scale = FloatVector.broadcast(FLOATS, factor);
    FloatVector r0 = FloatVector.fromArray(FLOATS, source, at).mul(scale);
    FloatVector r1 = FloatVector.fromArray(FLOATS, source, at + stride).mul(scale);
    FloatVector r2 = FloatVector.fromArray(FLOATS, source, at + 2 * stride).mul(scale);
    FloatVector r3 = FloatVector.fromArray(FLOATS, source, at + 3 * stride).mul(scale);
    FloatVector r4 = FloatVector.fromArray(FLOATS, source, at + 4 * stride).mul(scale);
    FloatVector r5 = FloatVector.fromArray(FLOATS, source, at + 5 * stride).mul(scale);
    FloatVector r6 = FloatVector.fromArray(FLOATS, source, at + 6 * stride).mul(scale);
    FloatVector r7 = FloatVector.fromArray(FLOATS, source, at + 7 * stride).mul(scale);
    // Lane i of a fold of (a, b): a[i] + a[i ^ s] where bit s of i is clear, b[i] + b[i ^ s] where
    // it is set.
    FloatVector p01 =
        r0.blend(r1, UPPER_OF_ONES).add(r1.blend(r0, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p23 =
        r2.blend(r3, UPPER_OF_ONES).add(r3.blend(r2, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p45 =
        r4.blend(r5, UPPER_OF_ONES).add(r5.blend(r4, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector p67 =
        r6.blend(r7, UPPER_OF_ONES).add(r7.blend(r6, UPPER_OF_ONES).rearrange(SWAP_ONES));
    FloatVector q0123 =
        p01.blend(p23, UPPER_OF_TWOS).add(p23.blend(p01, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector q4567 =
        p45.blend(p67, UPPER_OF_TWOS).add(p67.blend(p45, UPPER_OF_TWOS).rearrange(SWAP_TWOS));
    FloatVector eightSums =
        q0123
            .blend(q4567, UPPER_OF_FOURS)
            .add(q4567.blend(q0123, UPPER_OF_FOURS).rearrange(SWAP_FOURS));
    ((FloatVector) FLOAT_CLASS.cast(eightSums)).intoArray(sums, to);
  }

  /**
   * Rows of 32 (with or without γ and β), up to a group at a time: the shifts and both sums as for
   * {@link LayerNormStatistics} (lanes added eight rows at a time by {@link #sumsOfEightRows}), the
   * statistics of eight rows in float64 registers ({@link #plainStatistics}), and the output, with
   * the scratch found once and no per-row call: at 32 elements a row that per-row work, not the
   * elements, is most of LayerNorm's time. Each step runs over the whole group before the next, so
   * that the eight-row blocks' latencies overlap.
   */
  @Override
  public int layerNormInEights(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      double epsilon,
      float smallest,
      float largest,
      float[] gamma,
      float[] beta) {
    if (width != STEP) {
      return 0;
    }
    RowScratch scratch = RowScratch.current();
    float[] shifts = scratch.rowScalars(0);
    float[] sums = scratch.rowScalars(1);
    float[] squares = scratch.rowScalars(2);
    float[] high = scratch.rowScalars(3);
    float[] low = scratch.rowScalars(4);
    float[] inverseDeviations = scratch.rowScalars(5);
    float[] sumLanes = scratch.lanes(FloatRowKernels.GROUP_ROWS * FLOAT_LANES);
    float[] squareLanes = scratch.squareLanes(FloatRowKernels.GROUP_ROWS * FLOAT_LANES);
    int done = 0;
    while (count - done >= FLOAT_LANES) {
      int rows = Math.min(count - done, FloatRowKernels.GROUP_ROWS) & ~(FLOAT_LANES - 1);
      int in = inputOffset + done * STEP;
      layerNormShifts(input, in, STEP, rows, shifts);
      stepDifferenceLanes(input, in, rows, shifts, sumLanes, squareLanes);
      int plain = 0;
      for (; plain < rows; plain += FLOAT_LANES) {
        sumsOfEightRows(sumLanes, plain * FLOAT_LANES, FLOAT_LANES, 1f, sums, plain);
        sumsOfEightRows(squareLanes, plain * FLOAT_LANES, FLOAT_LANES, 1f, squares, plain);
        if (!plainStatistics(
            plain,
            shifts,
            sums,
            squares,
            epsilon,
            smallest,
            largest,
            high,
            low,
            inverseDeviations)) {
          break;
        }
      }
      if (gamma == null && beta == null) {
        standardizeSteps(
            input, in, output, outputOffset + done * STEP, plain, high, low, inverseDeviations);
      } else {
        standardizeAffineSteps(
            input,
            in,
            output,
            outputOffset + done * STEP,
            plain,
            high,
            low,
            inverseDeviations,
            gamma == null ? scratch.ones(STEP) : gamma,
            beta == null ? scratch.negativeZeros(STEP) : beta);
      }
      done += plain;
      if (plain < rows) {
        break;
      }
    }
    return done;
  }

  /**
   * For the eight rows of 32 from {@code from}: {@link LayerNormStatistics#compute}'s variance,
   * {@link #centers} and {@link #inverseSquareRoots} with the same float64 operations (÷ 32 as ×
   * 2^-5: the same bits), into high, low and inverseDeviations; false, leaving them unspecified,
   * where any row would take another path there. In registers throughout: through arrays, each
   * change between scalar and vector stores and loads stalled on store forwarding (about 40 % of
   * the kernel's samples).
   */
  private static boolean plainStatistics(
      int from,
      float[] shifts,
      float[] sums,
      float[] squares,
      double epsilon,
      float smallest,
      float largest,
      float[] high,
      float[] low,
      float[] inverseDeviations) {
    double inverseWidth = 1.0 / STEP;
    FloatVector sum = FloatVector.fromArray(FLOATS, sums, from);
    FloatVector square = FloatVector.fromArray(FLOATS, squares, from);
    FloatVector shift = FloatVector.fromArray(FLOATS, shifts, from);
    DoubleVector sumLow = (DoubleVector) sum.convertShape(VectorOperators.F2D, DOUBLES, 0);
    DoubleVector sumHigh = (DoubleVector) sum.convertShape(VectorOperators.F2D, DOUBLES, 1);
    DoubleVector squareLow = (DoubleVector) square.convertShape(VectorOperators.F2D, DOUBLES, 0);
    DoubleVector squareHigh = (DoubleVector) square.convertShape(VectorOperators.F2D, DOUBLES, 1);
    DoubleVector deviationsLow = squareLow.sub(sumLow.mul(sumLow).mul(inverseWidth));
    DoubleVector deviationsHigh = squareHigh.sub(sumHigh.mul(sumHigh).mul(inverseWidth));
    // LayerNormStatistics' second pass where Σd² is not finite or (Σd)²/D is over half of it.
    if (!square.compare(VectorOperators.LT, Float.POSITIVE_INFINITY).allTrue()
        || deviationsLow.add(deviationsLow).compare(VectorOperators.LT, squareLow).anyTrue()
        || deviationsHigh.add(deviationsHigh).compare(VectorOperators.LT, squareHigh).anyTrue()) {
      return false;
    }
    FloatVector variance =
        ((FloatVector) deviationsLow.convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector) deviationsHigh.convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    DoubleVector one = DoubleVector.broadcast(DOUBLES, 1.0);
    DoubleVector inverseLow =
        one.div(
            ((DoubleVector) variance.convertShape(VectorOperators.F2D, DOUBLES, 0))
                .mul(inverseWidth)
                .add(epsilon)
                .lanewise(VectorOperators.SQRT));
    DoubleVector inverseHigh =
        one.div(
            ((DoubleVector) variance.convertShape(VectorOperators.F2D, DOUBLES, 1))
                .mul(inverseWidth)
                .add(epsilon)
                .lanewise(VectorOperators.SQRT));
    FloatVector inverse =
        ((FloatVector) inverseLow.convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector) inverseHigh.convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    DoubleVector centerLow =
        ((DoubleVector) shift.convertShape(VectorOperators.F2D, DOUBLES, 0))
            .add(sumLow.mul(inverseWidth));
    DoubleVector centerHigh =
        ((DoubleVector) shift.convertShape(VectorOperators.F2D, DOUBLES, 1))
            .add(sumHigh.mul(inverseWidth));
    FloatVector center =
        ((FloatVector) centerLow.convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector) centerHigh.convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    ((FloatVector) FLOAT_CLASS.cast(center)).intoArray(high, from);
    FloatVector remainder =
        ((FloatVector)
                centerLow
                    .sub(center.convertShape(VectorOperators.F2D, DOUBLES, 0))
                    .convertShape(VectorOperators.D2F, FLOATS, 0))
            .blend(
                (FloatVector)
                    centerHigh
                        .sub(center.convertShape(VectorOperators.F2D, DOUBLES, 1))
                        .convertShape(VectorOperators.D2F, FLOATS, -1),
                UPPER_OF_FOURS);
    ((FloatVector) FLOAT_CLASS.cast(remainder)).intoArray(low, from);
    ((FloatVector) FLOAT_CLASS.cast(inverse)).intoArray(inverseDeviations, from);
    // FloatRowKernels' float64 fallback: the variance outside [smallest, largest], or an inverse
    // deviation that is not a normal float.
    return variance
        .compare(VectorOperators.LE, largest)
        .and(variance.compare(VectorOperators.GE, smallest))
        .and(inverse.compare(VectorOperators.GE, Float.MIN_NORMAL))
        .and(inverse.compare(VectorOperators.LT, Float.POSITIVE_INFINITY))
        .allTrue();
  }

  /**
   * {@link #standardizeSteps} with γ and β: (((x − high) − low) · inverse) · γ + β, γ and β in
   * registers. The four registers of a row are written out: as a loop over them (γ and β loaded in
   * it) LayerNorm's kernel with γ and β ran at 0.45-0.75 ns an element against 0.37-0.41.
   */
  private static void standardizeAffineSteps(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations,
      float[] gamma,
      float[] beta) {
    FloatVector gammaA = FloatVector.fromArray(FLOATS, gamma, 0);
    FloatVector gammaB = FloatVector.fromArray(FLOATS, gamma, 8);
    FloatVector gammaC = FloatVector.fromArray(FLOATS, gamma, 16);
    FloatVector gammaD = FloatVector.fromArray(FLOATS, gamma, 24);
    FloatVector betaA = FloatVector.fromArray(FLOATS, beta, 0);
    FloatVector betaB = FloatVector.fromArray(FLOATS, beta, 8);
    FloatVector betaC = FloatVector.fromArray(FLOATS, beta, 16);
    FloatVector betaD = FloatVector.fromArray(FLOATS, beta, 24);
    for (int row = 0; row < count; row++) {
      int in = inputOffset + row * STEP;
      int out = outputOffset + row * STEP;
      FloatVector centerHigh = FloatVector.broadcast(FLOATS, high[row]);
      FloatVector centerLow = FloatVector.broadcast(FLOATS, low[row]);
      FloatVector inverseDeviation = FloatVector.broadcast(FLOATS, inverseDeviations[row]);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaA)
                      .add(betaA)))
          .intoArray(output, out);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in + 8)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaB)
                      .add(betaB)))
          .intoArray(output, out + 8);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in + 16)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaC)
                      .add(betaC)))
          .intoArray(output, out + 16);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.fromArray(FLOATS, input, in + 24)
                      .sub(centerHigh)
                      .sub(centerLow)
                      .mul(inverseDeviation)
                      .mul(gammaD)
                      .add(betaD)))
          .intoArray(output, out + 24);
    }
  }

  /**
   * {@link #standardizeRows} for rows of 32 without γ, β or skipped rows: the flat loop's
   * arithmetic in a loop per row, which needs no row counter; 5 % faster at 32 than the flat loop
   * (LayerNorm's kernel, 0.365 against 0.386 ns an element, 2026-11-27).
   */
  private static void standardizeSteps(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations) {
    for (int row = 0; row < count; row++) {
      int in = inputOffset + row * STEP;
      int out = outputOffset + row * STEP;
      FloatVector centerHigh = FloatVector.broadcast(FLOATS, high[row]);
      FloatVector centerLow = FloatVector.broadcast(FLOATS, low[row]);
      FloatVector inverseDeviation = FloatVector.broadcast(FLOATS, inverseDeviations[row]);
      FloatVector a =
          FloatVector.fromArray(FLOATS, input, in)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      FloatVector b =
          FloatVector.fromArray(FLOATS, input, in + 8)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      FloatVector c =
          FloatVector.fromArray(FLOATS, input, in + 16)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      FloatVector d =
          FloatVector.fromArray(FLOATS, input, in + 24)
              .sub(centerHigh)
              .sub(centerLow)
              .mul(inverseDeviation);
      ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, out);
      ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, out + 8);
      ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, out + 16);
      ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, out + 24);
    }
  }

  /**
   * Block by block ({@link SumTree}), a register per block and the block's tail in scalar code into
   * its lanes, as the other reductions. LayerNorm over rows that all take this pass (first eight
   * elements far from the rest): 0.43 ns an element against 0.78 with the scalar pass at width 768,
   * 0.28 against 0.67 at 4096 (2026-11-27).
   */
  @Override
  public float sumOfSquaredDeviations(
      float[] values, int offset, int width, float shift, float center) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] lanes = scratch.lanes(blocks * FLOAT_LANES);
    int index = offset;
    for (int block = 0, at = 0; block < blocks; block++, at += FLOAT_LANES) {
      int end = offset + ends[block];
      int full = index + ((end - index) & ~(FLOAT_LANES - 1));
      FloatVector sum = FloatVector.zero(FLOATS);
      for (; index < full; index += FLOAT_LANES) {
        FloatVector deviation =
            FloatVector.fromArray(FLOATS, values, index)
                .sub(FloatVector.broadcast(FLOATS, shift))
                .sub(FloatVector.broadcast(FLOATS, center));
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(deviation.mul(deviation));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, at);
      // The tail, element j to lane j, in scalar code (the class comment says why).
      for (int lane = at; index < end; index++, lane++) {
        float deviation = values[index] - shift - center;
        lanes[lane] += deviation * deviation;
      }
    }
    return tree.sum(lanes, 0);
  }

  /** Eight rows at a time where rows hold eight elements ({@link #sumsOfEightRows}). */
  @Override
  public void layerNormShifts(float[] values, int offset, int width, int count, float[] shifts) {
    int row = 0;
    for (; width >= FLOAT_LANES && row + FLOAT_LANES <= count; row += FLOAT_LANES) {
      sumsOfEightRows(values, offset + row * width, width, 0.125f, shifts, row);
    }
    for (; row < count; row++) {
      shifts[row] = FloatSums.layerNormShift(values, offset + row * width, width);
    }
  }

  /**
   * Three shapes, one method each (so that none holds more than two vector loops): rows of 32 (one
   * step), whose loop runs over the whole group so that the rows' short chains overlap; other flat
   * rows, a register pair per row; and the rest block by block, four equal blocks side by side
   * where a row has them.
   */
  @Override
  public void sumsAndSquaresOfDifferences(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares) {
    if (!isFlat(width)) {
      sumsAndSquaresByBlocks(values, offset, width, count, shifts, sums, squares);
      return;
    }
    RowScratch scratch = RowScratch.current();
    float[] sumLanes = scratch.lanes(count * FLOAT_LANES);
    float[] squareLanes = scratch.squareLanes(count * FLOAT_LANES);
    if (width == STEP) {
      stepDifferenceLanes(values, offset, count, shifts, sumLanes, squareLanes);
    } else {
      flatDifferenceLanes(values, offset, width, count, shifts, sumLanes, squareLanes);
    }
    sumsOfLanes(sumLanes, count, sums);
    sumsOfLanes(squareLanes, count, squares);
  }

  /**
   * The eight lanes of Σ (x − shifts[row]) and of Σ (x − shifts[row])² of each row of 32, into
   * {@code sumLanes} and {@code squareLanes} from {@code 8 · row}: one loop over the group, so that
   * the rows' short chains overlap.
   */
  private static void stepDifferenceLanes(
      float[] values,
      int offset,
      int count,
      float[] shifts,
      float[] sumLanes,
      float[] squareLanes) {
    for (int row = 0, index = offset; row < count; row++, index += STEP) {
      FloatVector shift = FloatVector.broadcast(FLOATS, shifts[row]);
      FloatVector a = FloatVector.fromArray(FLOATS, values, index).sub(shift);
      FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8).sub(shift);
      FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16).sub(shift);
      FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24).sub(shift);
      ((FloatVector) FLOAT_CLASS.cast(FloatVector.zero(FLOATS).add(a).add(b).add(c).add(d)))
          .intoArray(sumLanes, row * FLOAT_LANES);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  FloatVector.zero(FLOATS).add(a.mul(a)).add(b.mul(b)).add(c.mul(c)).add(d.mul(d))))
          .intoArray(squareLanes, row * FLOAT_LANES);
    }
  }

  /** {@link #stepDifferenceLanes} for other flat widths: a register pair per row. */
  private static void flatDifferenceLanes(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sumLanes,
      float[] squareLanes) {
    for (int row = 0, start = offset; row < count; row++, start += width) {
      FloatVector shift = FloatVector.broadcast(FLOATS, shifts[row]);
      FloatVector sum = FloatVector.zero(FLOATS);
      FloatVector square = FloatVector.zero(FLOATS);
      for (int index = start, end = start + width; index < end; index += STEP) {
        FloatVector a = FloatVector.fromArray(FLOATS, values, index).sub(shift);
        FloatVector b = FloatVector.fromArray(FLOATS, values, index + 8).sub(shift);
        FloatVector c = FloatVector.fromArray(FLOATS, values, index + 16).sub(shift);
        FloatVector d = FloatVector.fromArray(FLOATS, values, index + 24).sub(shift);
        sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(a).add(b).add(c).add(d);
        square =
            ((FloatVector) FLOAT_CLASS.cast(square))
                .add(a.mul(a))
                .add(b.mul(b))
                .add(c.mul(c))
                .add(d.mul(d));
      }
      ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(sumLanes, row * FLOAT_LANES);
      ((FloatVector) FLOAT_CLASS.cast(square)).intoArray(squareLanes, row * FLOAT_LANES);
    }
  }

  private static void sumsAndSquaresByBlocks(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares) {
    RowScratch scratch = RowScratch.current();
    SumTree tree = scratch.sumTree(width);
    int blocks = tree.blocks();
    int[] ends = tree.ends();
    float[] sumLanes = scratch.lanes(count * blocks * FLOAT_LANES);
    float[] squareLanes = scratch.squareLanes(count * blocks * FLOAT_LANES);
    int uniform = tree.uniformLength();
    int at = 0;
    for (int row = 0, start = offset; row < count; row++, start += width) {
      float shift = shifts[row];
      int index = start;
      int block = 0;
      for (; uniform > 0 && block + 4 <= blocks; block += 4, at += 4 * FLOAT_LANES) {
        FloatVector a = FloatVector.zero(FLOATS);
        FloatVector b = FloatVector.zero(FLOATS);
        FloatVector c = FloatVector.zero(FLOATS);
        FloatVector d = FloatVector.zero(FLOATS);
        FloatVector aa = FloatVector.zero(FLOATS);
        FloatVector bb = FloatVector.zero(FLOATS);
        FloatVector cc = FloatVector.zero(FLOATS);
        FloatVector dd = FloatVector.zero(FLOATS);
        for (int end = index + uniform; index < end; index += FLOAT_LANES) {
          FloatVector x =
              FloatVector.fromArray(FLOATS, values, index)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          FloatVector y =
              FloatVector.fromArray(FLOATS, values, index + uniform)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          FloatVector z =
              FloatVector.fromArray(FLOATS, values, index + 2 * uniform)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          FloatVector w =
              FloatVector.fromArray(FLOATS, values, index + 3 * uniform)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          a = ((FloatVector) FLOAT_CLASS.cast(a)).add(x);
          b = ((FloatVector) FLOAT_CLASS.cast(b)).add(y);
          c = ((FloatVector) FLOAT_CLASS.cast(c)).add(z);
          d = ((FloatVector) FLOAT_CLASS.cast(d)).add(w);
          aa = ((FloatVector) FLOAT_CLASS.cast(aa)).add(x.mul(x));
          bb = ((FloatVector) FLOAT_CLASS.cast(bb)).add(y.mul(y));
          cc = ((FloatVector) FLOAT_CLASS.cast(cc)).add(z.mul(z));
          dd = ((FloatVector) FLOAT_CLASS.cast(dd)).add(w.mul(w));
        }
        index += 3 * uniform;
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(sumLanes, at);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(sumLanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(sumLanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(sumLanes, at + 24);
        ((FloatVector) FLOAT_CLASS.cast(aa)).intoArray(squareLanes, at);
        ((FloatVector) FLOAT_CLASS.cast(bb)).intoArray(squareLanes, at + 8);
        ((FloatVector) FLOAT_CLASS.cast(cc)).intoArray(squareLanes, at + 16);
        ((FloatVector) FLOAT_CLASS.cast(dd)).intoArray(squareLanes, at + 24);
      }
      for (; block < blocks; block++, at += FLOAT_LANES) {
        int end = start + ends[block];
        int full = index + ((end - index) & ~(FLOAT_LANES - 1));
        FloatVector sum = FloatVector.zero(FLOATS);
        FloatVector square = FloatVector.zero(FLOATS);
        for (; index < full; index += FLOAT_LANES) {
          FloatVector difference =
              FloatVector.fromArray(FLOATS, values, index)
                  .sub(FloatVector.broadcast(FLOATS, shift));
          sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(difference);
          square = ((FloatVector) FLOAT_CLASS.cast(square)).add(difference.mul(difference));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(sumLanes, at);
        ((FloatVector) FLOAT_CLASS.cast(square)).intoArray(squareLanes, at);
        // The tail, element j to lane j, in scalar code (the class comment says why).
        for (int lane = at; index < end; index++, lane++) {
          float difference = values[index] - shift;
          sumLanes[lane] += difference;
          squareLanes[lane] += difference * difference;
        }
      }
    }
    treeSums(scratch, tree, sumLanes, count, sums);
    treeSums(scratch, tree, squareLanes, count, squares);
  }

  // The exponential is FloatExponential.exp lane by lane, the same operations in the same order.
  // storeExponentials, and sumsOfExponentials but for flat rows, compute it in one loop that stores
  // it (exponentialsByRow), then sum the stored values with sumsOfStored: the same additions in the
  // same order as the scalar passes, which do the same (FloatSums with shift 0, x − 0 = x). Summed
  // in the block loops that computed them, C2 boxed the exponential's vectors in some compilations
  // (width 300: 20-45 ns an element against 0.6; docs/PERFORMANCE.md). Flat rows of
  // sumsOfExponentials keep a register per row on 256-bit exponentials (storing to scratch first
  // measured 15-20 % slower at widths 32-128); 512-bit ones store first, as the other rows do.

  @Override
  public void sumsOfExponentials(
      float[] input, int inputOffset, int width, int count, float[] maxima, float[] sums) {
    RowScratch scratch = RowScratch.current();
    if (!wideExponentials && isFlat(width)) {
      SumTree tree = scratch.sumTree(width);
      float[] lanes = scratch.lanes(count * tree.blocks() * FLOAT_LANES);
      // A register per row (its lanes reach the array once), rather than one loop over the
      // group adding into the array: that chained each row's additions through memory.
      for (int row = 0, start = inputOffset; row < count; row++, start += width) {
        float maximum = maxima[row];
        FloatVector sum = FloatVector.zero(FLOATS);
        for (int index = start, end = start + width; index < end; index += FLOAT_LANES) {
          FloatVector x =
              FloatVector.fromArray(FLOATS, input, index)
                  .sub(FloatVector.broadcast(FLOATS, maximum))
                  .max(FloatVector.broadcast(FLOATS, FloatExponential.FLOOR));
          FloatVector rounded =
              x.mul(FloatVector.broadcast(FLOATS, FloatExponential.LOG2_E))
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
          FloatVector n = rounded.sub(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
          FloatVector r =
              x.sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_HIGH)))
                  .sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_LOW)));
          FloatVector polynomial =
              r.mul(FloatVector.broadcast(FLOATS, FloatExponential.P0))
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.P1))
                  .mul(r)
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.P2))
                  .mul(r)
                  .add(FloatVector.broadcast(FLOATS, FloatExponential.P3));
          FloatVector mantissa =
              polynomial.mul(r.mul(r)).add(r).add(FloatVector.broadcast(FLOATS, 1f));
          FloatVector power =
              (FloatVector)
                  ((IntVector) rounded.reinterpretShape(INTS, 0))
                      .add(IntVector.broadcast(INTS, 127 - FloatExponential.ROUNDING_BITS))
                      .lanewise(VectorOperators.LSHL, 23)
                      .reinterpretShape(FLOATS, 0);
          sum = ((FloatVector) FLOAT_CLASS.cast(sum)).add(mantissa.mul(power));
        }
        ((FloatVector) FLOAT_CLASS.cast(sum)).intoArray(lanes, row * FLOAT_LANES);
      }
      sumsOfLanes(lanes, count, sums);
      return;
    }
    // Other widths, and 512-bit exponentials: stored into scratch (log_softmax's output may be its
    // input), then summed as stored values.
    storeExponentials(
        input, inputOffset, scratch.exponentials(count * width), 0, width, count, maxima, sums);
  }

  @Override
  public void storeExponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] sums) {
    if (wideExponentials) {
      wideExponentials(input, inputOffset, output, outputOffset, width, count, maxima);
    } else {
      exponentialsByRow(input, inputOffset, output, outputOffset, width, count, maxima);
    }
    sumsOfStored(output, outputOffset, width, count, sums);
  }

  /**
   * Stores exp(x − maxima[row]) of every element (FloatExponential.exp lane by lane, the same
   * operations in the same order): a loop per row over its whole registers, then the row's tail in
   * scalar code. Input and output are the same array at the same offset or do not overlap.
   */
  private static void exponentialsByRow(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima) {
    int shift = outputOffset - inputOffset;
    for (int row = 0, start = inputOffset; row < count; row++, start += width) {
      float maximum = maxima[row];
      int end = start + width;
      int index = start;
      for (int full = start + (width & ~(FLOAT_LANES - 1)); index < full; index += FLOAT_LANES) {
        FloatVector x =
            FloatVector.fromArray(FLOATS, input, index)
                .sub(FloatVector.broadcast(FLOATS, maximum))
                .max(FloatVector.broadcast(FLOATS, FloatExponential.FLOOR));
        FloatVector rounded =
            x.mul(FloatVector.broadcast(FLOATS, FloatExponential.LOG2_E))
                .add(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
        FloatVector n = rounded.sub(FloatVector.broadcast(FLOATS, FloatExponential.ROUNDING));
        FloatVector r =
            x.sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_HIGH)))
                .sub(n.mul(FloatVector.broadcast(FLOATS, FloatExponential.LN2_LOW)));
        FloatVector polynomial =
            r.mul(FloatVector.broadcast(FLOATS, FloatExponential.P0))
                .add(FloatVector.broadcast(FLOATS, FloatExponential.P1))
                .mul(r)
                .add(FloatVector.broadcast(FLOATS, FloatExponential.P2))
                .mul(r)
                .add(FloatVector.broadcast(FLOATS, FloatExponential.P3));
        FloatVector mantissa =
            polynomial.mul(r.mul(r)).add(r).add(FloatVector.broadcast(FLOATS, 1f));
        FloatVector power =
            (FloatVector)
                ((IntVector) rounded.reinterpretShape(INTS, 0))
                    .add(IntVector.broadcast(INTS, 127 - FloatExponential.ROUNDING_BITS))
                    .lanewise(VectorOperators.LSHL, 23)
                    .reinterpretShape(FLOATS, 0);
        ((FloatVector) FLOAT_CLASS.cast(mantissa.mul(power))).intoArray(output, index + shift);
      }
      for (; index < end; index++) {
        output[index + shift] = FloatExponential.exp(input[index] - maximum);
      }
    }
  }

  /**
   * {@link #exponentialsByRow} on 16-lane registers: one loop over all rows' whole registers, in
   * which only ints change where a row ends (a loop per row kept its vectors in objects, the
   * broadcast constants allocated on every call at widths 100 and 300; without the group loop,
   * log_softmax at width 32 ran at 12-13 % of the copy against 16-24, softmax at 128 at 17-18 %
   * against 27-28, 2026-11-27), then the rows' tails in scalar code ({@link #exponentialTails}).
   *
   * <p>The loop calls only methods that each vector class overrides ({@code lanewise} with a
   * vector, {@code reinterpretShape}), with constants broadcast once: the scalar forms ({@code
   * sub(float)}, {@code reinterpretAsInts()}) are FloatVector's own, whose inner calls the 256-bit
   * passes profile too, and C2 then merged both shapes and allocated every vector (4 % of the copy
   * instead of 25). The power of two is (bits + bias) · 2^23 rather than a shift by 23: the same
   * bits, without the shift's scalar form. With a second vector loop in the same method, C2 (JDK
   * 17.0.15) once crashed inlining the Vector API there.
   */
  private static void wideExponentials(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima) {
    FloatVector floor = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.FLOOR);
    FloatVector log2e = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.LOG2_E);
    FloatVector rounding = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.ROUNDING);
    FloatVector ln2High = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.LN2_HIGH);
    FloatVector ln2Low = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.LN2_LOW);
    FloatVector p0 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P0);
    FloatVector p1 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P1);
    FloatVector p2 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P2);
    FloatVector p3 = FloatVector.broadcast(WIDE_FLOATS, FloatExponential.P3);
    FloatVector one = FloatVector.broadcast(WIDE_FLOATS, 1f);
    IntVector exponentBias = IntVector.broadcast(WIDE_INTS, 127 - FloatExponential.ROUNDING_BITS);
    IntVector exponentScale = IntVector.broadcast(WIDE_INTS, 1 << 23);
    int shift = outputOffset - inputOffset;
    int perRow = width / WIDE_LANES;
    int tail = width - perRow * WIDE_LANES;
    int row = 0;
    int left = perRow;
    for (int index = inputOffset, end = inputOffset + count * width - tail;
        perRow > 0 && index < end;
        index += WIDE_LANES) {
      FloatVector x =
          FloatVector.fromArray(WIDE_FLOATS, input, index)
              .lanewise(VectorOperators.SUB, FloatVector.broadcast(WIDE_FLOATS, maxima[row]))
              .lanewise(VectorOperators.MAX, floor);
      FloatVector rounded =
          x.lanewise(VectorOperators.MUL, log2e).lanewise(VectorOperators.ADD, rounding);
      FloatVector n = rounded.lanewise(VectorOperators.SUB, rounding);
      FloatVector r =
          x.lanewise(VectorOperators.SUB, n.lanewise(VectorOperators.MUL, ln2High))
              .lanewise(VectorOperators.SUB, n.lanewise(VectorOperators.MUL, ln2Low));
      FloatVector polynomial =
          r.lanewise(VectorOperators.MUL, p0)
              .lanewise(VectorOperators.ADD, p1)
              .lanewise(VectorOperators.MUL, r)
              .lanewise(VectorOperators.ADD, p2)
              .lanewise(VectorOperators.MUL, r)
              .lanewise(VectorOperators.ADD, p3);
      FloatVector mantissa =
          polynomial
              .lanewise(VectorOperators.MUL, r.lanewise(VectorOperators.MUL, r))
              .lanewise(VectorOperators.ADD, r)
              .lanewise(VectorOperators.ADD, one);
      FloatVector power =
          (FloatVector)
              rounded
                  .reinterpretShape(WIDE_INTS, 0)
                  .lanewise(VectorOperators.ADD, exponentBias)
                  .lanewise(VectorOperators.MUL, exponentScale)
                  .reinterpretShape(WIDE_FLOATS, 0);
      ((FloatVector) WIDE_FLOAT_CLASS.cast(mantissa.lanewise(VectorOperators.MUL, power)))
          .intoArray(output, index + shift);
      if (--left == 0) {
        left = perRow;
        row++;
        index += tail;
      }
    }
    exponentialTails(input, inputOffset, output, outputOffset, width, count, maxima);
  }

  /**
   * The scalar exponentials of each row's last {@code width % 16} elements, after all rows'
   * registers.
   */
  private static void exponentialTails(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima) {
    int shift = outputOffset - inputOffset;
    int tail = width & (WIDE_LANES - 1);
    for (int row = 0, start = inputOffset; row < count; row++, start += width) {
      float maximum = maxima[row];
      for (int index = start + width - tail, end = start + width; index < end; index++) {
        output[index + shift] = FloatExponential.exp(input[index] - maximum);
      }
    }
  }

  /**
   * Rows of one block and whole registers, where a pass runs as one loop over all the registers of
   * the group, counting where each row ends: a separate loop per narrow row costs C2's loop set-up
   * (several dozen instructions) for a few registers of work. In such a loop only ints may change
   * at a row's end (C2 boxes a vector assigned in a branch): partial sums accumulate in the lanes
   * array, and each register reads its row's factors from their arrays.
   */
  private static boolean isFlat(int width) {
    return width <= BLOCK && width % STEP == 0;
  }

  /** No row's factor is 0 (a row the float64 fallback wrote, which the pass must skip). */
  private static boolean noneSkipped(float[] factors, int count) {
    for (int row = 0; row < count; row++) {
      if (factors[row] == 0f) {
        return false;
      }
    }
    return true;
  }

  // ---- float32 element-wise passes over a group of rows ----

  @Override
  public void scaleRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] scales,
      float[] weight) {
    if (weight == null && isFlat(width) && noneSkipped(scales, count)) {
      int perRow = width / STEP;
      int left = perRow;
      int row = 0;
      int shift = outputOffset - inputOffset;
      for (int index = inputOffset, end = inputOffset + count * width; index < end; index += STEP) {
        FloatVector scale = FloatVector.broadcast(FLOATS, scales[row]);
        FloatVector a = FloatVector.fromArray(FLOATS, input, index).mul(scale);
        FloatVector b = FloatVector.fromArray(FLOATS, input, index + 8).mul(scale);
        FloatVector c = FloatVector.fromArray(FLOATS, input, index + 16).mul(scale);
        FloatVector d = FloatVector.fromArray(FLOATS, input, index + 24).mul(scale);
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, index + shift);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, index + shift + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, index + shift + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, index + shift + 24);
        if (--left == 0) {
          left = perRow;
          row++;
        }
      }
      return;
    }
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float scale = scales[row];
      if (scale == 0f) {
        continue;
      }
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      if (weight == null) {
        for (; i < full; i += FLOAT_LANES) {
          ((FloatVector)
                  FLOAT_CLASS.cast(
                      FloatVector.fromArray(FLOATS, input, in + i)
                          .mul(FloatVector.broadcast(FLOATS, scale))))
              .intoArray(output, out + i);
        }
        for (; i < width; i++) {
          output[out + i] = input[in + i] * scale;
        }
      } else {
        for (; i < full; i += FLOAT_LANES) {
          ((FloatVector)
                  FLOAT_CLASS.cast(
                      FloatVector.fromArray(FLOATS, input, in + i)
                          .mul(FloatVector.broadcast(FLOATS, scale))
                          .mul(FloatVector.fromArray(FLOATS, weight, i))))
              .intoArray(output, out + i);
        }
        for (; i < width; i++) {
          output[out + i] = input[in + i] * scale * weight[i];
        }
      }
    }
  }

  @Override
  public void standardizeRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations,
      float[] gamma,
      float[] beta) {
    if (gamma == null && beta == null && isFlat(width) && noneSkipped(inverseDeviations, count)) {
      if (width == STEP) {
        standardizeSteps(
            input, inputOffset, output, outputOffset, count, high, low, inverseDeviations);
        return;
      }
      int perRow = width / STEP;
      int left = perRow;
      int row = 0;
      int shift = outputOffset - inputOffset;
      for (int index = inputOffset, end = inputOffset + count * width; index < end; index += STEP) {
        FloatVector centerHigh = FloatVector.broadcast(FLOATS, high[row]);
        FloatVector centerLow = FloatVector.broadcast(FLOATS, low[row]);
        FloatVector inverseDeviation = FloatVector.broadcast(FLOATS, inverseDeviations[row]);
        FloatVector a =
            FloatVector.fromArray(FLOATS, input, index)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        FloatVector b =
            FloatVector.fromArray(FLOATS, input, index + 8)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        FloatVector c =
            FloatVector.fromArray(FLOATS, input, index + 16)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        FloatVector d =
            FloatVector.fromArray(FLOATS, input, index + 24)
                .sub(centerHigh)
                .sub(centerLow)
                .mul(inverseDeviation);
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, index + shift);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, index + shift + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, index + shift + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, index + shift + 24);
        if (--left == 0) {
          left = perRow;
          row++;
        }
      }
      return;
    }
    if (gamma == null && beta == null) {
      standardizeEachRow(
          input, inputOffset, output, outputOffset, width, count, high, low, inverseDeviations);
      return;
    }
    RowScratch scratch = RowScratch.current();
    standardizeEachRowAffine(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        count,
        high,
        low,
        inverseDeviations,
        gamma == null ? scratch.ones(width) : gamma,
        beta == null ? scratch.negativeZeros(width) : beta);
  }

  /**
   * {@link #standardizeRows} row by row without γ and β, skipping rows whose inverse deviation is 0
   * (done by the float64 fallback). A loop of its own: with γ and β as branches in one loop the
   * value was a vector reassigned in a branch, which C2 kept in an object in some JVMs (a whole
   * module's tests first: 3.6-24.6 KB a call from width 16 up, SimdAllocationTest, 2026-11-27). Not
   * {@link #standardizeEachRowAffine} with ones and −0s: that is two operations an element more for
   * LayerNorm's default, which has neither.
   */
  private static void standardizeEachRow(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations) {
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float inverseDeviation = inverseDeviations[row];
      if (inverseDeviation == 0f) {
        continue;
      }
      float centerHigh = high[row];
      float centerLow = low[row];
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      for (; i < full; i += FLOAT_LANES) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, input, in + i)
                        .sub(FloatVector.broadcast(FLOATS, centerHigh))
                        .sub(FloatVector.broadcast(FLOATS, centerLow))
                        .mul(FloatVector.broadcast(FLOATS, inverseDeviation))))
            .intoArray(output, out + i);
      }
      for (; i < width; i++) {
        output[out + i] = (input[in + i] - centerHigh - centerLow) * inverseDeviation;
      }
    }
  }

  /**
   * {@link #standardizeEachRow} with γ and β, a missing one as ones or −0s ({@link
   * RowScratch#ones}): the bits of skipping it.
   */
  private static void standardizeEachRowAffine(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] high,
      float[] low,
      float[] inverseDeviations,
      float[] gamma,
      float[] beta) {
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float inverseDeviation = inverseDeviations[row];
      if (inverseDeviation == 0f) {
        continue;
      }
      float centerHigh = high[row];
      float centerLow = low[row];
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      for (; i < full; i += FLOAT_LANES) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, input, in + i)
                        .sub(FloatVector.broadcast(FLOATS, centerHigh))
                        .sub(FloatVector.broadcast(FLOATS, centerLow))
                        .mul(FloatVector.broadcast(FLOATS, inverseDeviation))
                        .mul(FloatVector.fromArray(FLOATS, gamma, i))
                        .add(FloatVector.fromArray(FLOATS, beta, i))))
            .intoArray(output, out + i);
      }
      for (; i < width; i++) {
        output[out + i] =
            (input[in + i] - centerHigh - centerLow) * inverseDeviation * gamma[i] + beta[i];
      }
    }
  }

  @Override
  public void subtractRows(
      float[] input,
      int inputOffset,
      float[] output,
      int outputOffset,
      int width,
      int count,
      float[] maxima,
      float[] logSums) {
    if (isFlat(width)) {
      int perRow = width / STEP;
      int left = perRow;
      int row = 0;
      int shift = outputOffset - inputOffset;
      for (int index = inputOffset, end = inputOffset + count * width; index < end; index += STEP) {
        FloatVector maximum = FloatVector.broadcast(FLOATS, maxima[row]);
        FloatVector logSum = FloatVector.broadcast(FLOATS, logSums[row]);
        FloatVector a = FloatVector.fromArray(FLOATS, input, index).sub(maximum).sub(logSum);
        FloatVector b = FloatVector.fromArray(FLOATS, input, index + 8).sub(maximum).sub(logSum);
        FloatVector c = FloatVector.fromArray(FLOATS, input, index + 16).sub(maximum).sub(logSum);
        FloatVector d = FloatVector.fromArray(FLOATS, input, index + 24).sub(maximum).sub(logSum);
        ((FloatVector) FLOAT_CLASS.cast(a)).intoArray(output, index + shift);
        ((FloatVector) FLOAT_CLASS.cast(b)).intoArray(output, index + shift + 8);
        ((FloatVector) FLOAT_CLASS.cast(c)).intoArray(output, index + shift + 16);
        ((FloatVector) FLOAT_CLASS.cast(d)).intoArray(output, index + shift + 24);
        if (--left == 0) {
          left = perRow;
          row++;
        }
      }
      return;
    }
    int full = width & ~(FLOAT_LANES - 1);
    for (int row = 0; row < count; row++) {
      float maximum = maxima[row];
      float logSum = logSums[row];
      int in = inputOffset + row * width;
      int out = outputOffset + row * width;
      int i = 0;
      for (; i < full; i += FLOAT_LANES) {
        ((FloatVector)
                FLOAT_CLASS.cast(
                    FloatVector.fromArray(FLOATS, input, in + i)
                        .sub(FloatVector.broadcast(FLOATS, maximum))
                        .sub(FloatVector.broadcast(FLOATS, logSum))))
            .intoArray(output, out + i);
      }
      for (; i < width; i++) {
        output[out + i] = input[in + i] - maximum - logSum;
      }
    }
  }

  // ---- per-row scalars of a group of rows, four rows at a time in float64 ----
  //
  // The divisions and square roots run on DoubleVector, widened and narrowed through a double
  // array by plain casts (exact one way, rounded once the other). A cast is a short chain of its
  // own per row, while scalar division and square root would chain every row to the previous one
  // through the registers they merge into (cvtss2sd, sqrtsd), about 20 ns a row. No vector changes
  // shape here: C2 sometimes inlines a shape-changing conversion too late in a large compilation,
  // and the vectors it then returns are allocated.

  /**
   * Under a register of rows (rows from 768 wide come one a call) this and the next three per-row
   * steps run the scalar loops, the same operations: through the float64 arrays one row cost about
   * 30 ns here, its scalar stores and vector loads stalling on store forwarding.
   */
  @Override
  public void inverseSquareRoots(float[] values, int count, double divisor, double epsilon) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.inverseSquareRoots(values, 0, count, divisor, epsilon);
      return;
    }
    double[] wide = widen(values, count);
    if (isPowerOfTwo(divisor)) {
      // x / 2^k and x · 2^-k are the same exact value, rounded once: the same bits, no division.
      double inverse = 1.0 / divisor;
      for (int i = 0; i < count; i += DOUBLE_LANES) {
        DoubleVector root =
            DoubleVector.fromArray(DOUBLES, wide, i)
                .mul(inverse)
                .add(epsilon)
                .lanewise(VectorOperators.SQRT);
        DoubleVector.broadcast(DOUBLES, 1.0).div(root).intoArray(wide, i);
      }
      narrow(wide, values, count);
      return;
    }
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector root =
          DoubleVector.fromArray(DOUBLES, wide, i)
              .div(divisor)
              .add(epsilon)
              .lanewise(VectorOperators.SQRT);
      DoubleVector.broadcast(DOUBLES, 1.0).div(root).intoArray(wide, i);
    }
    narrow(wide, values, count);
  }

  @Override
  public void inverseNorms(float[] values, int count, double epsilon) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.inverseNorms(values, 0, count, epsilon);
      return;
    }
    double[] wide = widen(values, count);
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector norm =
          DoubleVector.fromArray(DOUBLES, wide, i).lanewise(VectorOperators.SQRT).max(epsilon);
      DoubleVector.broadcast(DOUBLES, 1.0).div(norm).intoArray(wide, i);
    }
    narrow(wide, values, count);
  }

  @Override
  public void inverses(float[] values, int count) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.inverses(values, 0, count);
      return;
    }
    double[] wide = widen(values, count);
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector.broadcast(DOUBLES, 1.0)
          .div(DoubleVector.fromArray(DOUBLES, wide, i))
          .intoArray(wide, i);
    }
    narrow(wide, values, count);
  }

  @Override
  public void centers(
      float[] shifts,
      float[] sums,
      int count,
      double divisor,
      float[] means,
      float[] high,
      float[] low) {
    if (count < DOUBLE_LANES) {
      ScalarRowPasses.centers(shifts, sums, 0, count, divisor, means, high, low);
      return;
    }
    RowScratch scratch = RowScratch.current();
    double[] wideMeans = scratch.rowDoubles(0);
    double[] wideCenters = scratch.rowDoubles(1);
    for (int i = 0; i < count; i++) {
      wideMeans[i] = sums[i];
      wideCenters[i] = shifts[i];
    }
    for (int i = 0; i < count; i += DOUBLE_LANES) {
      DoubleVector mean = DoubleVector.fromArray(DOUBLES, wideMeans, i).div(divisor);
      mean.intoArray(wideMeans, i);
      DoubleVector.fromArray(DOUBLES, wideCenters, i).add(mean).intoArray(wideCenters, i);
    }
    for (int i = 0; i < count; i++) {
      double center = wideCenters[i];
      float centerHigh = (float) center;
      means[i] = (float) wideMeans[i];
      high[i] = centerHigh;
      low[i] = (float) (center - centerHigh);
    }
  }

  /** Widths are whole numbers, so a power of two has a single bit set. */
  private static boolean isPowerOfTwo(double divisor) {
    long whole = (long) divisor;
    return whole == divisor && whole > 0 && (whole & (whole - 1)) == 0;
  }

  /**
   * On the bits as ints, without masks: for floats of one sign, int order is float order, so each
   * test is a difference that is positive where it holds, and a row may need the fallback where the
   * largest difference is. NaN (and a stale lane past count) can only say yes, which the kernels'
   * exact check then clears.
   */
  @Override
  public boolean anyUnsafe(float[] sums, float[] scales, int count, float smallest, float largest) {
    int largestBits = Float.floatToRawIntBits(largest);
    int smallestBits = Float.floatToRawIntBits(smallest);
    int normalBits = Float.floatToRawIntBits(Float.MIN_NORMAL);
    int infinityBits = Float.floatToRawIntBits(Float.POSITIVE_INFINITY);
    for (int i = 0; i < count; i += FLOAT_LANES) {
      IntVector sum = (IntVector) FloatVector.fromArray(FLOATS, sums, i).reinterpretShape(INTS, 0);
      IntVector scale =
          (IntVector) FloatVector.fromArray(FLOATS, scales, i).reinterpretShape(INTS, 0);
      IntVector excess =
          sum.sub(largestBits)
              .max(IntVector.broadcast(INTS, smallestBits).sub(sum))
              .max(IntVector.broadcast(INTS, normalBits).sub(scale))
              .max(scale.sub(infinityBits - 1));
      if (excess.reduceLanes(VectorOperators.MAX) > 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * The first {@code count} values as doubles, in a per-thread array whose length is a multiple of
   * four and at least {@code count} (the lanes past count hold stale values that are never read
   * back).
   */
  private static double[] widen(float[] values, int count) {
    double[] wide = RowScratch.current().rowDoubles(0);
    for (int i = 0; i < count; i++) {
      wide[i] = values[i];
    }
    return wide;
  }

  private static void narrow(double[] wide, float[] values, int count) {
    for (int i = 0; i < count; i++) {
      values[i] = (float) wide[i];
    }
  }

  /**
   * {@link FloatLogarithm#log}, eight at a time: the same operations in the same order, in two
   * loops (the reduced argument f and the exponent e, then the polynomial) with f and e stored
   * between them. In one loop, the method passed C2's inlining cutoff (18,000 parse nodes) before
   * its last store, which then ran as a Java call with the vector allocated, in every compilation.
   */
  @Override
  public void logarithms(float[] values, int count) {
    int full = count & ~(FLOAT_LANES - 1);
    RowScratch scratch = RowScratch.current();
    float[] reduced = scratch.logarithmParts(0);
    float[] exponents = scratch.logarithmParts(1);
    logarithmArguments(values, full, reduced, exponents);
    logarithmPolynomials(values, full, reduced, exponents);
    ScalarRowPasses.logarithms(values, full, count);
  }

  /**
   * For x at {@code values[i]}, i below {@code full} (a multiple of eight): x = 2^e · (1 + f) with
   * 1 + f in [√½, √2), as {@link FloatLogarithm#log} reduces it.
   */
  private static void logarithmArguments(
      float[] values, int full, float[] reduced, float[] exponents) {
    IntVector mantissaBits = IntVector.broadcast(INTS, FloatLogarithm.MANTISSA_BITS);
    IntVector halfBits = IntVector.broadcast(INTS, FloatLogarithm.HALF_BITS);
    IntVector exponentShift = IntVector.broadcast(INTS, 23);
    IntVector exponentBias = IntVector.broadcast(INTS, 126);
    FloatVector sqrtHalf = FloatVector.broadcast(FLOATS, FloatLogarithm.SQRT_HALF);
    FloatVector zero = FloatVector.zero(FLOATS);
    FloatVector one = FloatVector.broadcast(FLOATS, 1f);
    for (int i = 0; i < full; i += FLOAT_LANES) {
      IntVector bits =
          (IntVector) FloatVector.fromArray(FLOATS, values, i).reinterpretShape(INTS, 0);
      FloatVector m =
          (FloatVector)
              bits.lanewise(VectorOperators.AND, mantissaBits)
                  .lanewise(VectorOperators.OR, halfBits)
                  .reinterpretShape(FLOATS, 0);
      VectorMask<Float> belowRoot = m.compare(VectorOperators.LT, sqrtHalf);
      ((FloatVector)
              FLOAT_CLASS.cast(
                  m.lanewise(VectorOperators.SUB, one)
                      .blend(
                          m.lanewise(VectorOperators.ADD, m).lanewise(VectorOperators.SUB, one),
                          belowRoot)))
          .intoArray(reduced, i);
      ((FloatVector)
              FLOAT_CLASS
                  .cast( // e − 0 is e (never −0: it comes from an int), e − 1 below the root, as
                      // the scalar branch.
                      ((FloatVector)
                              bits.lanewise(VectorOperators.LSHR, exponentShift)
                                  .lanewise(VectorOperators.SUB, exponentBias)
                                  .convertShape(VectorOperators.I2F, FLOATS, 0))
                          .lanewise(VectorOperators.SUB, zero.blend(one, belowRoot))))
          .intoArray(exponents, i);
    }
  }

  /**
   * log x = f + (f³ · P(f) + e · ln2Low − f²/2) + e · ln2High, NaN for NaN, into {@code values}.
   */
  private static void logarithmPolynomials(
      float[] values, int full, float[] reduced, float[] exponents) {
    FloatVector minusHalf = FloatVector.broadcast(FLOATS, -0.5f);
    FloatVector notANumber = FloatVector.broadcast(FLOATS, Float.NaN);
    FloatVector ln2Low = FloatVector.broadcast(FLOATS, FloatLogarithm.LN2_LOW);
    FloatVector ln2High = FloatVector.broadcast(FLOATS, FloatLogarithm.LN2_HIGH);
    FloatVector q0 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q0);
    FloatVector q1 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q1);
    FloatVector q2 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q2);
    FloatVector q3 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q3);
    FloatVector q4 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q4);
    FloatVector q5 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q5);
    FloatVector q6 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q6);
    FloatVector q7 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q7);
    FloatVector q8 = FloatVector.broadcast(FLOATS, FloatLogarithm.Q8);
    for (int i = 0; i < full; i += FLOAT_LANES) {
      FloatVector f = FloatVector.fromArray(FLOATS, reduced, i);
      FloatVector e = FloatVector.fromArray(FLOATS, exponents, i);
      FloatVector z = f.lanewise(VectorOperators.MUL, f);
      FloatVector polynomial =
          f.lanewise(VectorOperators.MUL, q0)
              .lanewise(VectorOperators.ADD, q1)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q2)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q3)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q4)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q5)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q6)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q7)
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.ADD, q8);
      FloatVector y =
          polynomial
              .lanewise(VectorOperators.MUL, f)
              .lanewise(VectorOperators.MUL, z)
              .lanewise(VectorOperators.ADD, e.lanewise(VectorOperators.MUL, ln2Low))
              .lanewise(VectorOperators.ADD, z.lanewise(VectorOperators.MUL, minusHalf));
      ((FloatVector)
              FLOAT_CLASS.cast(
                  f.lanewise(VectorOperators.ADD, y)
                      .lanewise(VectorOperators.ADD, e.lanewise(VectorOperators.MUL, ln2High))
                      .blend(
                          notANumber,
                          FloatVector.fromArray(FLOATS, values, i).test(VectorOperators.IS_NAN))))
          .intoArray(values, i);
    }
  }

  // ---- float64: two 4-lane registers stand for the eight accumulators ----

  @Override
  public double maximum(double[] values, int offset, int count) {
    int full = count & ~(DOUBLE_LANES - 1);
    double maximum = values[offset];
    if (full > 0) {
      DoubleVector lanes = DoubleVector.fromArray(DOUBLES, values, offset);
      for (int index = offset + DOUBLE_LANES, end = offset + full;
          index < end;
          index += DOUBLE_LANES) {
        lanes = lanes.max(DoubleVector.fromArray(DOUBLES, values, index));
      }
      maximum = Math.max(maximum, lanes.reduceLanes(VectorOperators.MAX));
    }
    for (int index = offset + full, end = offset + count; index < end; index++) {
      maximum = Math.max(maximum, values[index]);
    }
    return maximum;
  }

  @Override
  public double sumOfSquares(double[] values, int offset, int count) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfSquares(values, offset, half) + sumOfSquares(values, offset + half, count - half);
    }
    DoubleVector low = DoubleVector.zero(DOUBLES);
    DoubleVector high = DoubleVector.zero(DOUBLES);
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      DoubleVector first = DoubleVector.fromArray(DOUBLES, values, index);
      DoubleVector second = DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES);
      low = low.add(first.mul(first));
      high = high.add(second.mul(second));
    }
    int rest = count - full;
    if (rest > 0) {
      VectorMask<Double> lowRest = DOUBLES.indexInRange(0, rest);
      DoubleVector first = DoubleVector.fromArray(DOUBLES, values, index, lowRest);
      low = low.add(first.mul(first), lowRest);
      if (rest > DOUBLE_LANES) {
        VectorMask<Double> highRest = DOUBLES.indexInRange(DOUBLE_LANES, rest);
        DoubleVector second =
            DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES, highRest);
        high = high.add(second.mul(second), highRest);
      }
    }
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as DoubleSums.
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }

  @Override
  public double sumOfDifferences(double[] values, int offset, int count, double shift) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfDifferences(values, offset, half, shift)
          + sumOfDifferences(values, offset + half, count - half, shift);
    }
    DoubleVector low = DoubleVector.zero(DOUBLES);
    DoubleVector high = DoubleVector.zero(DOUBLES);
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      low = low.add(DoubleVector.fromArray(DOUBLES, values, index).sub(shift));
      high = high.add(DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES).sub(shift));
    }
    int rest = count - full;
    if (rest > 0) {
      VectorMask<Double> lowRest = DOUBLES.indexInRange(0, rest);
      low = low.add(DoubleVector.fromArray(DOUBLES, values, index, lowRest).sub(shift), lowRest);
      if (rest > DOUBLE_LANES) {
        VectorMask<Double> highRest = DOUBLES.indexInRange(DOUBLE_LANES, rest);
        high =
            high.add(
                DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES, highRest).sub(shift),
                highRest);
      }
    }
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as DoubleSums.
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }

  @Override
  public double sumOfSquaredDeviations(
      double[] values, int offset, int count, double shift, double center) {
    if (count > BLOCK) {
      int half = FloatSums.firstHalf(count);
      return sumOfSquaredDeviations(values, offset, half, shift, center)
          + sumOfSquaredDeviations(values, offset + half, count - half, shift, center);
    }
    DoubleVector low = DoubleVector.zero(DOUBLES);
    DoubleVector high = DoubleVector.zero(DOUBLES);
    int full = count & ~7;
    int index = offset;
    for (int end = offset + full; index < end; index += 8) {
      DoubleVector first = DoubleVector.fromArray(DOUBLES, values, index).sub(shift).sub(center);
      DoubleVector second =
          DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES).sub(shift).sub(center);
      low = low.add(first.mul(first));
      high = high.add(second.mul(second));
    }
    int rest = count - full;
    if (rest > 0) {
      VectorMask<Double> lowRest = DOUBLES.indexInRange(0, rest);
      DoubleVector first =
          DoubleVector.fromArray(DOUBLES, values, index, lowRest).sub(shift).sub(center);
      low = low.add(first.mul(first), lowRest);
      if (rest > DOUBLE_LANES) {
        VectorMask<Double> highRest = DOUBLES.indexInRange(DOUBLE_LANES, rest);
        DoubleVector second =
            DoubleVector.fromArray(DOUBLES, values, index + DOUBLE_LANES, highRest)
                .sub(shift)
                .sub(center);
        high = high.add(second.mul(second), highRest);
      }
    }
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as DoubleSums.
    return ((low.lane(0) + low.lane(1)) + (low.lane(2) + low.lane(3)))
        + ((high.lane(0) + high.lane(1)) + (high.lane(2) + high.lane(3)));
  }

  // ---- float64 element-wise passes ----

  @Override
  public void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double scale,
      double[] weight) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    if (weight == null) {
      for (; i < full; i += DOUBLE_LANES) {
        DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
            .mul(scale)
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale;
      }
    } else {
      for (; i < full; i += DOUBLE_LANES) {
        DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
            .mul(scale)
            .mul(DoubleVector.fromArray(DOUBLES, weight, i))
            .intoArray(output, outputOffset + i);
      }
      for (; i < count; i++) {
        output[outputOffset + i] = input[inputOffset + i] * scale * weight[i];
      }
    }
  }

  @Override
  public void standardize(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double shift,
      double mean,
      double inverseDeviation,
      double[] gamma,
      double[] beta) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    for (; i < full; i += DOUBLE_LANES) {
      DoubleVector value =
          DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
              .sub(shift)
              .sub(mean)
              .mul(inverseDeviation);
      if (gamma != null) {
        value = value.mul(DoubleVector.fromArray(DOUBLES, gamma, i));
      }
      if (beta != null) {
        value = value.add(DoubleVector.fromArray(DOUBLES, beta, i));
      }
      value.intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      double value = (input[inputOffset + i] - shift - mean) * inverseDeviation;
      if (gamma != null) {
        value *= gamma[i];
      }
      if (beta != null) {
        value += beta[i];
      }
      output[outputOffset + i] = value;
    }
  }

  @Override
  public void subtract(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double maximum,
      double logSum) {
    int full = count & ~(DOUBLE_LANES - 1);
    int i = 0;
    for (; i < full; i += DOUBLE_LANES) {
      DoubleVector.fromArray(DOUBLES, input, inputOffset + i)
          .sub(maximum)
          .sub(logSum)
          .intoArray(output, outputOffset + i);
    }
    for (; i < count; i++) {
      output[outputOffset + i] = input[inputOffset + i] - maximum - logSum;
    }
  }
}
