package io.embednorm.benchmarks;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.DeviceChoice;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * {@code causal_conv} through the Arrow API on a ragged {@code List<FixedSizeList<float>>} column,
 * as token sequences come: every row its own length, drawn uniformly from 1 to T. Prints the median
 * wall time of a call on a GPU normalizer and on a CPU one (after a warm-up call), and the useful
 * multiply-adds' rate. Arguments: {@code --sequences B --channels C --steps T --repeats N}.
 */
public final class RaggedConvolutionBenchmark {
  private RaggedConvolutionBenchmark() {}

  public static void main(String[] args) {
    int sequences = option(args, "--sequences", 128);
    int channels = option(args, "--channels", 768);
    int steps = option(args, "--steps", 768);
    int repeats = option(args, "--repeats", 5);
    Random random = new Random(3);
    float[][] w = new float[channels][steps];
    for (float[] row : w) {
      for (int j = 0; j < steps; j++) {
        row[j] = random.nextFloat() * 0.1f;
      }
    }
    ConvolutionKernel kernel = ConvolutionKernel.of(w);
    int[] lengths = new int[sequences];
    double multiplyAdds = 0;
    for (int i = 0; i < sequences; i++) {
      lengths[i] = 1 + random.nextInt(steps);
      multiplyAdds += (double) channels * lengths[i] * (lengths[i] + 1) / 2;
    }
    try (BufferAllocator allocator = new RootAllocator();
        ListVector column = column(allocator, random, lengths, channels)) {
      for (DeviceChoice device : new DeviceChoice[] {DeviceChoice.GPU, DeviceChoice.CPU}) {
        try (ArrowNormalizer normalizer = ArrowNormalizer.create(allocator, device)) {
          double[] millis = new double[repeats];
          normalizer.causalConv(column, kernel, 0f).close();
          for (int i = 0; i < repeats; i++) {
            long started = System.nanoTime();
            normalizer.causalConv(column, kernel, 0f).close();
            millis[i] = (System.nanoTime() - started) / 1e6;
          }
          Arrays.sort(millis);
          double median = millis[repeats / 2];
          System.out.printf(
              Locale.ROOT,
              "causal_conv ragged column, %d sequences of 1..%d steps, C%d, Arrow API on %s:"
                  + " %.2f ms median of %d, %.0f GFLOP/s useful%n",
              sequences,
              steps,
              channels,
              device,
              median,
              repeats,
              2 * multiplyAdds / median / 1e6);
        }
      }
    }
  }

  private static ListVector column(
      BufferAllocator allocator, Random random, int[] lengths, int channels) {
    ListVector column = ListVector.empty("tokens", allocator);
    FixedSizeListVector steps =
        (FixedSizeListVector)
            column
                .addOrGetVector(FieldType.nullable(new ArrowType.FixedSizeList(channels)))
                .getVector();
    steps.addOrGetVector(
        FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    Float4Vector values = (Float4Vector) steps.getDataVector();
    int written = 0;
    for (int row = 0; row < lengths.length; row++) {
      column.startNewValue(row);
      for (int t = 0; t < lengths[row]; t++) {
        steps.setNotNull(written + t);
        for (int c = 0; c < channels; c++) {
          values.setSafe((written + t) * channels + c, (float) random.nextGaussian());
        }
      }
      written += lengths[row];
      column.endValue(row, lengths[row]);
    }
    values.setValueCount(written * channels);
    steps.setValueCount(written);
    column.setValueCount(lengths.length);
    return column;
  }

  private static int option(String[] args, String name, int fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
