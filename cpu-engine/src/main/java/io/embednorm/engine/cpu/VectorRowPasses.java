package io.embednorm.engine.cpu;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The passes with the JDK Vector API (jdk.incubator.vector): the {@link RowPasses} that the classes
 * of each family of loops make up, {@link VectorReductions} (maxima, sums of squares, RMSNorm's and
 * L2's factors, the fallback screen), {@link VectorLayerNorm} (LayerNorm's statistics, rows of 32
 * eight at a time), {@link VectorExponentials} (the softmaxes' exponentials, their sums, inverses
 * and logarithms), {@link VectorElementwise} (scaling, standardizing, subtracting) and {@link
 * VectorShapes} (species, lane folds, float32 to float64 and back), with {@link VectorHalves}
 * (float16) and {@link BufferRowKernels} (rows between buffers). Loaded only by {@link
 * RowPassSelection}, reflectively and only when the JVM has the module, so that no other class
 * links against it; the others load through this one.
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
 * multiple of 32 in one flat loop over the group (see {@link VectorShapes#isFlat}), other rows
 * block by block in one loop nest, four equal blocks side by side where a row has them. The lanes
 * of each block go through {@link RowScratch#lanes} to {@link SumTree}, which adds them in
 * FloatSums' order; rows of one block have their lanes added eight rows at a time, in registers
 * ({@link VectorShapes#sumsOfEightRows}).
 *
 * <h2>The Vector API rules</h2>
 *
 * <p>Every Vector API loop in this package keeps these rules, and the other classes cite them here.
 * Why: on JDK 17, C2 keeps a vector in a register only where it can prove its shape and class, and
 * otherwise allocates it on the heap, at every call, running the loop 2–5× slower; which
 * compilation a loop gets depends on profiles that every caller of the Vector API in the JVM
 * shares, so a rule broken once shows only after other ops and widths have run. Each rule below
 * fixed an allocation that {@code SimdAllocationTest} (ops and widths in one JVM, bytes a call once
 * compiled) or the engine's allocation per row caught (docs/ARCHITECTURE.md, "CPU engine"):
 *
 * <ul>
 *   <li>No method of ours takes or returns a vector: one that crosses a call C2 did not inline is
 *       boxed.
 *   <li>No vector is reassigned in a branch inside a loop. A flat loop changes only ints where a
 *       row ends and reads per-row factors from their arrays; a row's tail is added to its lanes in
 *       scalar code (the masked step it replaced, taken only where a block ends off a register, got
 *       C2 to box the block's sum in some compilations: rms_norm at width 300 ran two to three
 *       times slower than the scalar passes); a pass with and without γ and β is two loops.
 *   <li>No compile unit holds more than about two large vector loops, nor calls one that does: past
 *       C2's inlining cutoff (18,000 parse nodes) the Vector API's own methods are inlined too late
 *       for their intrinsics, and the last stores run as Java calls with their vectors allocated.
 *   <li>No vector changes shape outside a small method of its own (float32 to float64 goes through
 *       arrays by plain casts, {@link VectorShapes#widen}), and every shape change names its
 *       species: {@code reinterpretShape(INTS, 0)} and {@code convertShape(I2F, FLOATS, 0)}, not
 *       {@code reinterpretAsInts()} and {@code convert(I2F, 0)}, which look it up as they run (C2
 *       once ran the logarithms' conversion as its Java fallback, allocating).
 *   <li>Every store of a vector whose class C2 cannot see as it parses the store (a loop's running
 *       register, a blend, a shape change), and every call on a loop's running register, casts it
 *       to its class first: {@code ((FloatVector) FLOAT_CLASS.cast(v)).intoArray(...)} ({@link
 *       VectorShapes#FLOAT_CLASS}). {@code intoArray} otherwise finds the species from a profile
 *       that the 256- and 512-bit stores share, cannot tell it, and runs the store as a Java call
 *       with the vector allocated (after a softmax, rms_norm at width 32 ran 15-25 % slower,
 *       layer_norm 60-120 %, l2_normalize at widths 100 and 300 three to four times slower).
 *   <li>Scalar operands inside a loop are vectors broadcast in the loop ({@code
 *       FloatVector.broadcast(FLOATS, x)}, which C2 hoists), not {@code sub(x)}: the scalar forms
 *       run through FloatVector's own methods, whose profile every caller shares. With the casts
 *       above, this took the cells of SimdAllocationTest that allocated (3-130 KB a call from width
 *       100 up) from 15-30 of 65 to none; either change alone did not.
 *   <li>A fold is written out once per operator rather than taking the operator as an argument: C2
 *       sees an argument as constant only where the call is inlined, and the Vector API falls back
 *       to Java objects where it is not.
 *   <li>The kernels that add most Vector API code to a JVM (float16 conversions, rows between
 *       buffers, the encodings) run only where {@code -XX:PerMethodTrapLimit} is at least {@link
 *       #LEAST_TRAP_LIMIT} ({@link #trapLimitRaised}; conf/jvm.options says why).
 * </ul>
 */
final class VectorRowPasses implements RowPasses {
  /**
   * Whether softmax's and log_softmax's exponentials run on 512-bit registers (then summed from
   * where they were stored, as on 256-bit ones). The exponential is element-wise, so the register
   * width changes no bit; where a core runs 512-bit instructions at full width it doubles the
   * exponentials an instruction computes (as AMD Zen 5 does on JDK 17).
   */
  private final boolean wideExponentials;

  private VectorRowPasses(boolean wideExponentials) {
    this.wideExponentials = wideExponentials;
  }

  /**
   * The SIMD passes, or null when this machine's preferred vectors are narrower than 256 bits
   * (where 256-bit ones would be emulated and slower than scalar code). The exponentials take
   * 512-bit registers where the machine prefers them. Called reflectively.
   */
  static RowPasses createIfSupported() {
    if (FloatVector.SPECIES_PREFERRED.vectorBitSize() < 256
        || DoubleVector.SPECIES_PREFERRED.vectorBitSize() < 256) {
      return null;
    }
    return new VectorRowPasses(FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512);
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
   * other kernels with heap-allocated vectors (SimdAllocationTest: rows between buffers made
   * softmax and LayerNorm allocate 160 bytes to 229 KB a call, the float16 conversions LayerNorm at
   * width 32 120 bytes).
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
   * reads the trap limit is a noticeable part of a cold JVM's start, which narrow float32 rows
   * never need.
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

  /** On SIMD where the trap limit is raised ({@link #trapLimitRaised}), else scalar. */
  @Override
  public float encodeRow(
      Encoding encoding, float[] values, int offset, int width, byte[] target, int targetOffset) {
    return trapLimitRaised()
        ? VectorEncodings.encode(encoding, values, offset, width, target, targetOffset)
        : ScalarRowPasses.INSTANCE.encodeRow(encoding, values, offset, width, target, targetOffset);
  }

  @Override
  public String description() {
    return wideExponentials ? "java simd, 256-bit, 512-bit exponentials" : "java simd, 256-bit";
  }

  // ---- float32 passes over a group of rows ----

  @Override
  public void maxima(float[] values, int offset, int width, int count, float[] maxima) {
    VectorReductions.maxima(values, offset, width, count, maxima);
  }

  @Override
  public void sumsOfSquares(float[] values, int offset, int width, int count, float[] sums) {
    VectorReductions.sumsOfSquares(values, offset, width, count, sums);
  }

  @Override
  public void sumsOfMagnitudes(float[] values, int offset, int width, int count, float[] sums) {
    VectorReductions.sumsOfMagnitudes(values, offset, width, count, sums);
  }

  @Override
  public void maximaOfMagnitudes(float[] values, int offset, int width, int count, float[] maxima) {
    VectorReductions.maximaOfMagnitudes(values, offset, width, count, maxima);
  }

  @Override
  public void layerNormShifts(float[] values, int offset, int width, int count, float[] shifts) {
    VectorLayerNorm.layerNormShifts(values, offset, width, count, shifts);
  }

  @Override
  public void sumsAndSquaresOfDifferences(
      float[] values,
      int offset,
      int width,
      int count,
      float[] shifts,
      float[] sums,
      float[] squares) {
    VectorLayerNorm.sumsAndSquaresOfDifferences(
        values, offset, width, count, shifts, sums, squares);
  }

  @Override
  public float sumOfSquaredDeviations(
      float[] values, int offset, int width, float shift, float center) {
    return VectorLayerNorm.sumOfSquaredDeviations(values, offset, width, shift, center);
  }

  @Override
  public void sumsOfExponentials(
      float[] values, int offset, int width, int count, float[] maxima, float[] sums) {
    VectorExponentials.sumsOfExponentials(
        wideExponentials, values, offset, width, count, maxima, sums);
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
    VectorExponentials.storeExponentials(
        wideExponentials, input, inputOffset, output, outputOffset, width, count, maxima, sums);
  }

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
    VectorElementwise.scaleRows(
        input, inputOffset, output, outputOffset, width, count, scales, weight);
  }

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
    return VectorLayerNorm.layerNormInEights(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        count,
        epsilon,
        smallest,
        largest,
        gamma,
        beta);
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
    VectorElementwise.standardizeRows(
        input,
        inputOffset,
        output,
        outputOffset,
        width,
        count,
        high,
        low,
        inverseDeviations,
        gamma,
        beta);
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
    VectorElementwise.subtractRows(
        input, inputOffset, output, outputOffset, width, count, maxima, logSums);
  }

  // ---- float32 per-row scalars of a group ----

  @Override
  public void inverseSquareRoots(float[] values, int count, double divisor, double epsilon) {
    VectorReductions.inverseSquareRoots(values, count, divisor, epsilon);
  }

  @Override
  public void inverseNorms(float[] values, int count, double epsilon) {
    VectorReductions.inverseNorms(values, count, epsilon);
  }

  @Override
  public void inverses(float[] values, int count) {
    VectorExponentials.inverses(values, count);
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
    VectorLayerNorm.centers(shifts, sums, count, divisor, means, high, low);
  }

  @Override
  public boolean anyUnsafe(float[] sums, float[] scales, int count, float smallest, float largest) {
    return VectorReductions.anyUnsafe(sums, scales, count, smallest, largest);
  }

  @Override
  public void logarithms(float[] values, int count) {
    VectorExponentials.logarithms(values, count);
  }

  // ---- float64: one row at a time ----

  @Override
  public double maximum(double[] values, int offset, int count) {
    return VectorReductions.maximum(values, offset, count);
  }

  @Override
  public double sumOfSquares(double[] values, int offset, int count) {
    return VectorReductions.sumOfSquares(values, offset, count);
  }

  @Override
  public double sumOfDifferences(double[] values, int offset, int count, double shift) {
    return VectorLayerNorm.sumOfDifferences(values, offset, count, shift);
  }

  @Override
  public double sumOfSquaredDeviations(
      double[] values, int offset, int count, double shift, double center) {
    return VectorLayerNorm.sumOfSquaredDeviations(values, offset, count, shift, center);
  }

  @Override
  public void scale(
      double[] input,
      int inputOffset,
      double[] output,
      int outputOffset,
      int count,
      double scale,
      double[] weight) {
    VectorElementwise.scale(input, inputOffset, output, outputOffset, count, scale, weight);
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
    VectorElementwise.standardize(
        input,
        inputOffset,
        output,
        outputOffset,
        count,
        shift,
        mean,
        inverseDeviation,
        gamma,
        beta);
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
    VectorElementwise.subtract(input, inputOffset, output, outputOffset, count, maximum, logSum);
  }
}
