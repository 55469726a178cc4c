package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A JVM that runs many ops at many widths (a Spark executor, this module's test JVM) must keep the
 * SIMD passes' vectors in registers: once compiled, a call allocates nothing. Which compilation a
 * loop gets depends on the profiles that every caller of the Vector API shares, so the ops and
 * widths run in one JVM after the module's other tests, where before the rules of {@link
 * VectorRowPasses} 16 to 30 of these cells allocated 3-430 KB a call.
 */
class SimdAllocationTest {
  private static final int[] WIDTHS = {1, 7, 16, 32, 33, 100, 300, 768, 1000, 4096, 4099};
  private static final int CALLS = 1000;
  private static final int TRIES = 40;

  @Test
  void onceCompiledTheSimdPassesAllocateNothingPerCall() {
    assumeTrue(RowPassSelection.VECTOR != null, "the JVM has no Vector API module");
    assumeTrue(
        System.getProperty("java.vm.info", "").contains("mixed mode"),
        "the JVM does not compile (" + System.getProperty("java.vm.info") + ")");
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long thread = Thread.currentThread().getId();
    long seed = TestSeeds.seeds()[0];
    System.out.println("SimdAllocationTest seed " + seed);
    Random random = new Random(seed);
    List<String> allocating = new ArrayList<>();
    for (Op op : Op.values()) {
      Normalization normalization = Normalization.of(op);
      for (int width : WIDTHS) {
        int rows = Math.max(1, 768 / width);
        float[] rowsIn = new float[rows * width];
        for (int i = 0; i < rowsIn.length; i++) {
          rowsIn[i] = (float) random.nextGaussian();
        }
        float[] rowsOut = new float[rowsIn.length];
        long fewest = Long.MAX_VALUE;
        for (int attempt = 0; attempt < TRIES && fewest > CALLS; attempt++) {
          run(normalization, rowsIn, rowsOut, width, rows, 2 * CALLS);
          long before = threads.getThreadAllocatedBytes(thread);
          run(normalization, rowsIn, rowsOut, width, rows, CALLS);
          fewest = Math.min(fewest, threads.getThreadAllocatedBytes(thread) - before);
        }
        // Under a byte a call: one vector kept in an object is at least 48.
        if (fewest > CALLS) {
          allocating.add(op + " " + width + ": " + fewest / CALLS + " bytes a call");
        }
        if (width > CpuEngine.CHUNK_ELEMENTS) {
          // The engine's path for such rows, straight between buffers.
          ByteBuffer input = ByteBuffer.allocateDirect(width * Float.BYTES);
          input.order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().put(rowsIn, 0, width);
          ByteBuffer output =
              ByteBuffer.allocateDirect(width * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
          fewest = Long.MAX_VALUE;
          for (int attempt = 0; attempt < TRIES && fewest > CALLS; attempt++) {
            runBetweenBuffers(normalization, input, output, width, 2 * CALLS);
            long before = threads.getThreadAllocatedBytes(thread);
            runBetweenBuffers(normalization, input, output, width, CALLS);
            fewest = Math.min(fewest, threads.getThreadAllocatedBytes(thread) - before);
          }
          if (fewest > CALLS) {
            allocating.add(
                op + " " + width + " between buffers: " + fewest / CALLS + " bytes a call");
          }
        }
      }
    }
    // The binary16 conversions of a chunk of float16 rows (768 elements), both ways.
    short[] halves = new short[768];
    float[] floats = new float[768];
    for (int i = 0; i < floats.length; i++) {
      floats[i] = (float) random.nextGaussian();
    }
    long fewest = Long.MAX_VALUE;
    for (int attempt = 0; attempt < TRIES && fewest > CALLS; attempt++) {
      convert(floats, halves, 2 * CALLS);
      long before = threads.getThreadAllocatedBytes(thread);
      convert(floats, halves, CALLS);
      fewest = Math.min(fewest, threads.getThreadAllocatedBytes(thread) - before);
    }
    if (fewest > CALLS) {
      allocating.add("float16 conversions: " + fewest / CALLS + " bytes a call");
    }
    // The encodings of a row of 771 elements (eight-lane blocks and a tail).
    float[] row = new float[771];
    for (int i = 0; i < row.length; i++) {
      row[i] = (float) random.nextGaussian();
    }
    byte[] encoded = new byte[2 * row.length];
    for (Encoding encoding : Encoding.values()) {
      fewest = Long.MAX_VALUE;
      for (int attempt = 0; attempt < TRIES && fewest > CALLS; attempt++) {
        encode(encoding, row, encoded, 2 * CALLS);
        long before = threads.getThreadAllocatedBytes(thread);
        encode(encoding, row, encoded, CALLS);
        fewest = Math.min(fewest, threads.getThreadAllocatedBytes(thread) - before);
      }
      if (fewest > CALLS) {
        allocating.add(encoding + " encoding: " + fewest / CALLS + " bytes a call");
      }
    }
    assertThat(allocating)
        .as("cells allocating after %d tries of %d calls", TRIES, CALLS)
        .isEmpty();
  }

  private static void runBetweenBuffers(
      Normalization normalization, ByteBuffer input, ByteBuffer output, int width, int calls) {
    for (int call = 0; call < calls; call++) {
      RowPassSelection.VECTOR.normalizeBetweenBuffers(normalization, input, output, 0, width);
    }
  }

  private static void encode(Encoding encoding, float[] row, byte[] target, int calls) {
    for (int call = 0; call < calls; call++) {
      RowPassSelection.VECTOR.encodeRow(encoding, row, 0, row.length, target, 0);
    }
  }

  private static void convert(float[] floats, short[] halves, int calls) {
    for (int call = 0; call < calls; call++) {
      RowPassSelection.VECTOR.floatsToHalves(floats, halves, floats.length);
      RowPassSelection.VECTOR.halvesToFloats(halves, floats, halves.length);
    }
  }

  private static void run(
      Normalization normalization, float[] input, float[] output, int width, int rows, int calls) {
    for (int call = 0; call < calls; call++) {
      CpuKernels.normalizeRows(
          RowPassSelection.VECTOR, normalization, input, 0, output, 0, width, rows);
    }
  }
}
