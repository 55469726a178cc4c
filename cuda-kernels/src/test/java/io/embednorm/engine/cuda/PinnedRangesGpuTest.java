package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

@Tag("gpu")
@EnabledIf(value = "gpuUsable", disabledReason = "no usable GPU")
class PinnedRangesGpuTest {
  /**
   * Checked before the class's set-up, so that without a GPU each test is reported as skipped
   * rather than the class as zero tests.
   */
  static boolean gpuUsable() {
    return CudaEngine.unavailableReason() == null;
  }

  @BeforeAll
  static void requireGpu() {
    String why = CudaEngine.unavailableReason();
    assumeTrue(why == null, () -> "no usable GPU: " + why);
  }

  /**
   * Two pins that share a page (an input and an output buffer of small vectors often do): the
   * second holds the first's registration and registers its other pages, and copies split where
   * registrations meet, since the driver refuses an asynchronous copy that spans two registrations
   * or registered and pageable memory (CUDA_ERROR_INVALID_VALUE, seen here before the split).
   */
  @Test
  void rowsAcrossPinsThatShareAPage() {
    long page = 4096; // PinnedHostMemory registers whole pages
    int width = 300;
    int rows = 20; // 24,000 bytes: about 6 pages
    long bytes = (long) rows * width * Float.BYTES;
    long[] seeds = TestSeeds.seeds();
    long seed = seeds[seeds.length - 1] ^ 11;
    System.out.println("PinnedRangesGpuTest seed " + seed);
    Random random = new Random(seed);
    float[] values = new float[rows * width];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) random.nextGaussian();
    }
    ByteBuffer memory =
        ByteBuffer.allocateDirect((int) (4 * bytes + 4 * page)).order(ByteOrder.nativeOrder());
    try (CudaEngine engine = new CudaEngine(0)) {
      long base = MemoryAddress.of(memory);
      long pageStart = (base + page - 1) & -page;
      // The output's first page is the input's last one.
      long input = pageStart + 100;
      long output = ((input + bytes) & -page) + 40;
      for (int i = 0; i < values.length; i++) {
        memory.putFloat((int) (input - base + 4L * i), values[i]);
      }
      try (HostPin inputPin = PinnedHostMemory.pin(input, bytes);
          HostPin outputPin = PinnedHostMemory.pin(output, bytes)) {
        assertThat(inputPin.kind()).isEqualTo(HostPin.Kind.REGISTERED);
        assertThat(outputPin.kind()).isEqualTo(HostPin.Kind.REGISTERED);
        long inputPagesEnd = (input + bytes + page - 1) & -page;
        assertThat(PinnedHostMemory.pieces(output, bytes))
            .as("pieces of the output: in the input's registration, then in its own")
            .containsExactly(inputPagesEnd - output, output + bytes - inputPagesEnd);
        Normalization normalization = Normalization.of(Op.RMS_NORM);
        try (PipelineSession session =
            engine.openSession(List.of(normalization), ElementType.FLOAT32)) {
          session.enqueue(input, output, rows, width, 0);
          session.finish();
        }
      }
      assertThat(PinnedHostMemory.registeredBytes()).as("registrations left").isZero();
      for (int row = 0; row < rows; row++) {
        double squares = 0;
        for (int col = 0; col < width; col++) {
          squares += (double) values[row * width + col] * values[row * width + col];
        }
        double scale = 1 / Math.sqrt(squares / width + Normalization.of(Op.RMS_NORM).epsilon());
        for (int col = 0; col < width; col++) {
          float actual = memory.getFloat((int) (output - base + 4L * (row * width + col)));
          assertThat((double) actual)
              .as("seed %d, row %d, column %d", seed, row, col)
              .isCloseTo(values[row * width + col] * scale, within(1e-5));
        }
      }
    }
  }

  /** The address of a direct buffer's first byte. */
  private static final class MemoryAddress {
    static long of(ByteBuffer buffer) {
      try {
        java.lang.reflect.Field address = java.nio.Buffer.class.getDeclaredField("address");
        address.setAccessible(true);
        return address.getLong(buffer);
      } catch (ReflectiveOperationException failure) {
        throw new AssertionError(failure);
      }
    }
  }
}
