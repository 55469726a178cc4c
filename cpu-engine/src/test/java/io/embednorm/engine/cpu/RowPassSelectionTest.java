package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Which loops run, and that the choice never shows in the output: the SIMD loops must give the
 * scalar loops' bits for every row, special values included.
 */
class RowPassSelectionTest {
  // 32: the SIMD passes' one-step loops (LayerNorm's statistics, sums of squares); 32-128 in
  // steps of 32: their flat loops; 512, 768, 1024, 2048 and 4096: rows of equal blocks, which the
  // SIMD reductions take four at a time.
  private static final int[] WIDTHS = {
    1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 135, 255, 256, 257,
    300, 512, 768, 1000, 1024, 2048, 4096, 4099
  };
  private static final float[] SPECIAL = {
    0f,
    -0f,
    Float.MIN_VALUE,
    -Float.MIN_NORMAL,
    1e-30f,
    1e30f,
    -3e38f,
    Float.NEGATIVE_INFINITY,
    Float.POSITIVE_INFINITY,
    Float.NaN,
    -87.5f,
    88f,
    -100f
  };

  @Test
  void theTestJvmRunsTheSimdLoops() {
    assertThat(ModuleLayer.boot().findModule("jdk.incubator.vector"))
        .as("--add-modules=jdk.incubator.vector in embednorm.jvm.options")
        .isPresent();
    assertThat(RowPassSelection.VECTOR).as("256-bit vectors on this machine").isNotNull();
    assertThat(RowPassSelection.DEFAULT).isSameAs(RowPassSelection.VECTOR);
    String simd = CpuKernels.implementation();
    assertThat(simd).isIn(SIMD_256, SIMD_512_EXPONENTIALS);
    assertThat(new CpuEngine(1).description()).isEqualTo("cpu (" + simd + ")");
    assertThat(new CpuEngine(1, ScalarRowPasses.INSTANCE).description())
        .isEqualTo("cpu (java scalar)");
    assertThat(new CpuEngine(4).description()).isEqualTo("cpu (" + simd + ", 4 threads)");
    assertThat(RowPassesImplementations.vectorVariants())
        .extracting(RowPasses::description)
        .containsExactly(SIMD_256, SIMD_512_EXPONENTIALS);
  }

  private static final String SIMD_256 = "java simd, 256-bit";
  private static final String SIMD_512_EXPONENTIALS = "java simd, 256-bit, 512-bit exponentials";

  @Test
  void withoutTheModuleOrWithSimdSwitchedOffTheScalarLoopsRun() throws Exception {
    String withoutModule = probe(List.of());
    assertThat(withoutModule).isEqualTo("java scalar");
    String switchedOff =
        probe(
            List.of(
                "--add-modules=jdk.incubator.vector",
                "-D" + InternalSwitches.CPU_SIMD.name() + "=false"));
    assertThat(switchedOff).isEqualTo("java scalar");
    assertThat(probe(List.of("--add-modules=jdk.incubator.vector")))
        .isEqualTo(CpuKernels.implementation());
  }

  @ParameterizedTest
  @EnumSource(Op.class)
  void simdAndScalarGiveTheSameBits(Op op) {
    assertThat(RowPassesImplementations.vectorVariants()).hasSize(2);
    for (RowPasses vector : RowPassesImplementations.vectorVariants()) {
      simdAndScalarGiveTheSameBits(op, vector);
    }
  }

  private static void simdAndScalarGiveTheSameBits(Op op, RowPasses vector) {
    RowPasses scalar = ScalarRowPasses.INSTANCE;
    for (long seed : TestSeeds.seeds()) {
      for (int width : WIDTHS) {
        Random random = new Random(TestSeeds.mix(seed, op.ordinal(), width));
        for (Normalization normalization : NormalizationVariants.of(op, width, random)) {
          for (RowDistribution distribution : RowDistribution.values()) {
            for (boolean special : new boolean[] {false, true}) {
              float[] row = distribution.floats(random, width);
              if (special) {
                row[random.nextInt(width)] = SPECIAL[random.nextInt(SPECIAL.length)];
              }
              String what =
                  vector.description()
                      + ": "
                      + normalization
                      + ", "
                      + distribution
                      + ", width "
                      + width;
              float[] fromScalar = new float[width];
              float[] fromVector = new float[width];
              CpuKernels.normalizeRow(scalar, normalization, row, 0, fromScalar, 0, width);
              CpuKernels.normalizeRow(vector, normalization, row, 0, fromVector, 0, width);
              assertThat(fromVector).as(what).isEqualTo(fromScalar);
              double[] wide = ReferenceNormalization.widen(row);
              double[] wideScalar = new double[width];
              double[] wideVector = new double[width];
              CpuKernels.normalizeRow(scalar, normalization, wide, 0, wideScalar, 0, width);
              CpuKernels.normalizeRow(vector, normalization, wide, 0, wideVector, 0, width);
              assertThat(wideVector).as(what).isEqualTo(wideScalar);
            }
          }
        }
      }
    }
  }

  @Test
  void theExponentialIsAccurateOverItsWholeDomain() {
    // exp(x) for x ≤ 0 within 3 ulp where the result is normal, +0 from x · log2(e) ≤ −126.5 on
    // (x ≤ −87.684), and below float32's normal range in between.
    for (float x = 0f; x > -100f; x = Math.nextDown(x) - 1e-4f * Math.abs(x)) {
      double reference = Math.exp(x);
      float value = FloatExponential.exp(x);
      String what = "exp(" + x + ")";
      if (x <= -87.684f) {
        assertThat(Float.floatToRawIntBits(value)).as(what).isZero();
      } else if (reference < Float.MIN_NORMAL) {
        assertThat(value).as(what).isBetween(0f, Float.MIN_NORMAL);
      } else {
        assertThat(Math.abs(value - reference))
            .as(what)
            .isLessThanOrEqualTo(3 * Math.ulp((float) reference) + Float.MIN_VALUE * 4);
      }
    }
    assertThat(FloatExponential.exp(0f)).isEqualTo(1f);
    assertThat(FloatExponential.exp(Float.NEGATIVE_INFINITY)).isZero();
    assertThat(FloatExponential.exp(Float.NaN)).isNaN();
  }

  @Test
  void theExponentialsOfAnArrayAreTheExponentialsOfItsElementsAndSumInFloatSumsOrder() {
    for (long seed : TestSeeds.seeds()) {
      exponentialsOfAnArray(seed);
    }
  }

  private static void exponentialsOfAnArray(long seed) {
    Random random = new Random(seed);
    float[] nasty = {
      0f,
      -0f,
      Float.NaN,
      Float.NEGATIVE_INFINITY,
      FloatExponential.FLOOR,
      Math.nextDown(FloatExponential.FLOOR),
      Math.nextUp(FloatExponential.FLOOR),
      -87.33654f,
      -87.5f,
      -87.683f,
      -87.684f,
      -1e-30f
    };
    int[][] shapes = {{0, 5}, {7, 0}, {1, 1}, {7, 3}, {8, 64}, {33, 20}, {511, 2}, {512, 3}};
    int[][] more = {
      {513, 2}, {1500, 1}, {32, 64}, {100, 11}, {300, 7}, {768, 3}, {129, 9}, {4099, 1}, {40000, 1}
    };
    for (int[] shape : concat(shapes, more)) {
      int width = shape[0];
      int rows = shape[1];
      float[] input = new float[width * rows + 3];
      for (int i = 0; i < input.length; i++) {
        input[i] =
            random.nextInt(4) == 0
                ? nasty[random.nextInt(nasty.length)]
                : (float) (random.nextGaussian() * 30);
      }
      float[] shifts = new float[rows];
      float[] expected = new float[width * rows];
      for (int row = 0; row < rows; row++) {
        shifts[row] = random.nextBoolean() ? 0f : (float) random.nextGaussian();
        for (int i = 0; i < width; i++) {
          expected[row * width + i] =
              FloatExponential.exp(input[3 + row * width + i] - shifts[row]);
        }
      }
      float[] expectedSums = new float[rows];
      for (int row = 0; row < rows; row++) {
        expectedSums[row] = FloatSums.sumOfDifferences(expected, row * width, width, 0f);
      }
      RowScratch scratch = RowScratch.current();
      String what = "seed " + seed + ", width " + width + ", rows " + rows;
      float[] output = new float[width * rows + 1];
      float[] sums = new float[rows];
      FloatExponential.exponentialsAndSums(input, 3, output, 1, width, rows, shifts, sums, scratch);
      assertThat(Arrays.copyOfRange(output, 1, output.length)).as(what).isEqualTo(expected);
      assertThat(output[0]).as(what).isZero();
      assertThat(sums).as(what + ", sums").isEqualTo(expectedSums);
      float[] sumsOnly = new float[rows];
      FloatExponential.exponentialsAndSums(
          input, 3, null, 0, width, rows, shifts, sumsOnly, scratch);
      assertThat(sumsOnly).as(what + ", sums without the exponentials").isEqualTo(expectedSums);
      float[] shiftsThenSums = shifts.clone();
      FloatExponential.exponentialsAndSums(
          input, 3, input, 3, width, rows, shiftsThenSums, shiftsThenSums, scratch);
      assertThat(Arrays.copyOfRange(input, 3, input.length))
          .as(what + ", in place")
          .isEqualTo(expected);
      assertThat(shiftsThenSums).as(what + ", sums over the shifts").isEqualTo(expectedSums);
    }
  }

  private static int[][] concat(int[][] first, int[][] second) {
    int[][] both = Arrays.copyOf(first, first.length + second.length);
    System.arraycopy(second, 0, both, first.length, second.length);
    return both;
  }

  @Test
  void theLogarithmIsAccurateOverTheSumsOfLogSoftmax() {
    // Σ exp(x − max) lies in [1, D]: log within 1 ulp from 1 to 2^31 (exhaustively checked once:
    // at most 0.83 ulp), log(1) = +0 exactly, NaN stays NaN.
    for (float x = 1f; x < 0x1p31f; x = Math.nextUp(x) * 1.0001f) {
      double reference = Math.log(x);
      assertThat(Math.abs(FloatLogarithm.log(x) - reference))
          .as("log(%s)", x)
          .isLessThanOrEqualTo(Math.ulp((float) reference));
    }
    assertThat(Float.floatToRawIntBits(FloatLogarithm.log(1f))).isZero();
    assertThat(FloatLogarithm.log(Float.NaN)).isNaN();
    float[] sums = {1f, 1.5f, 2f, 3f, 7.25f, 100f, 768f, 32768f, Float.NaN, 1e9f, 1.0000001f};
    float[] fromVector = sums.clone();
    float[] fromScalar = sums.clone();
    RowPassSelection.VECTOR.logarithms(fromVector, sums.length);
    ScalarRowPasses.INSTANCE.logarithms(fromScalar, sums.length);
    assertThat(fromVector).isEqualTo(fromScalar);
  }

  /**
   * The SIMD logarithms (two loops with the reduced argument and exponent stored between them) give
   * the scalar bits for every count up to a group, over sums spread from 1 to 2^31, mantissas on
   * both sides of √½ (where the reduction switches), 1, +inf and NaN.
   */
  @Test
  void theVectorLogarithmsGiveTheScalarBitsOverAGroup() {
    float[] edges = {
      1f, Float.POSITIVE_INFINITY, Float.NaN, Float.MAX_VALUE, 0x1p31f, 2f, 1.0000001f, 0.99999994f
    };
    int rootBits = Float.floatToRawIntBits(FloatLogarithm.SQRT_HALF);
    for (long seed : TestSeeds.seeds()) {
      System.out.println("RowPassSelectionTest logarithms seed " + seed);
      Random random = new Random(seed);
      for (int count = 1; count <= FloatRowKernels.GROUP_ROWS; count++) {
        float[] sums = new float[count];
        for (int i = 0; i < count; i++) {
          switch (random.nextInt(4)) {
            case 0 -> sums[i] = edges[random.nextInt(edges.length)];
            case 1 -> {
              // A mantissa within a few ulps of √½'s, at a random power of two from 2 to 2^30.
              float mantissa = Float.intBitsToFloat(rootBits + random.nextInt(9) - 4);
              sums[i] = Math.scalb(mantissa, 1 + random.nextInt(30));
            }
            default -> sums[i] = (float) Math.exp(random.nextDouble() * Math.log(0x1p31));
          }
        }
        float[] fromVector = sums.clone();
        float[] fromScalar = sums.clone();
        RowPassSelection.VECTOR.logarithms(fromVector, count);
        ScalarRowPasses.INSTANCE.logarithms(fromScalar, count);
        assertThat(fromVector)
            .as("seed %d, %d sums %s", seed, count, Arrays.toString(sums))
            .isEqualTo(fromScalar);
      }
    }
  }

  /** The main class of {@link #probe}'s JVM: prints the loops it selects. */
  static final class PrintSelection {
    private PrintSelection() {}

    public static void main(String[] arguments) {
      System.out.println(CpuKernels.implementation());
    }
  }

  /** What a fresh JVM without this one's options selects. */
  private static String probe(List<String> options) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(options);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(PrintSelection.class.getName());
    Process process = new ProcessBuilder(command).redirectErrorStream(false).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    return output.strip();
  }
}
