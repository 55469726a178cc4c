package io.embednorm.benchmarks;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Where the GPU starts to pay for one Arrow call: the median time of one {@code normalize} call on
 * ordinary Arrow memory ({@link RootAllocator}), on the CPU engine and on the GPU, for calls from
 * kibibytes to hundreds of mebibytes, and what {@code auto} does with each size, all in one run.
 * The sizes where {@code auto} takes the CPU should be those where the CPU column is the faster.
 *
 * <pre>
 * java -cp ... io.embednorm.benchmarks.DeviceCrossoverBenchmark [--width 768] [--op rms_norm]
 *     [--kib 16,64,256,1024,4096,16384,65536,262144] [--repeats 9]
 * </pre>
 */
public final class DeviceCrossoverBenchmark {
  private DeviceCrossoverBenchmark() {}

  public static void main(String[] arguments) {
    int width = 768;
    Op op = Op.RMS_NORM;
    long[] kibibytes = {16, 64, 256, 1024, 4096, 16384, 65536, 262144};
    int repeats = 9;
    for (int i = 0; i < arguments.length; i += 2) {
      String value = arguments[i + 1];
      switch (arguments[i]) {
        case "--width" -> width = Integer.parseInt(value);
        case "--op" -> op = Op.fromName(value);
        case "--kib" ->
            kibibytes = Arrays.stream(value.split(",")).mapToLong(Long::parseLong).toArray();
        case "--repeats" -> repeats = Integer.parseInt(value);
        default -> throw new IllegalArgumentException("unknown option " + arguments[i]);
      }
    }
    Normalization normalization = Normalization.of(op);
    try (RootAllocator allocator = new RootAllocator();
        ArrowNormalizer cpu = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
        ArrowNormalizer gpu = ArrowNormalizer.create(allocator, DeviceChoice.GPU);
        ArrowNormalizer auto = ArrowNormalizer.create(allocator, DeviceChoice.AUTO)) {
      System.out.printf(
          Locale.ROOT,
          "width %d, %s, ordinary Arrow memory, median of %d calls each%n" + "cpu: %s%ngpu: %s%n%n",
          width,
          op.sqlName(),
          repeats,
          cpu.engineDescription(),
          gpu.engineDescription());
      System.out.println("| call | rows | cpu ms | gpu ms | faster | auto ms | auto ran on |");
      System.out.println("|---|---|---|---|---|---|---|");
      for (long size : kibibytes) {
        int rows = (int) Math.max(1, size * 1024 / ((long) width * Float.BYTES));
        try (FieldVector batch = randomBatch(allocator, rows, width)) {
          double cpuMillis = medianMillis(cpu, batch, normalization, repeats);
          double gpuMillis = medianMillis(gpu, batch, normalization, repeats);
          double autoMillis = medianMillis(auto, batch, normalization, repeats);
          System.out.printf(
              Locale.ROOT,
              "| %s | %d | %.3f | %.3f | %s | %.3f | %s |%n",
              size >= 1024 ? (size / 1024) + " MiB" : size + " KiB",
              rows,
              cpuMillis,
              gpuMillis,
              cpuMillis <= gpuMillis ? "cpu" : "gpu",
              autoMillis,
              auto.deviceFor(batch).name().toLowerCase(Locale.ROOT));
        }
      }
    }
  }

  /** The median wall time of one call, after two calls that are not counted (warm-up). */
  private static double medianMillis(
      ArrowNormalizer normalizer, FieldVector batch, Normalization normalization, int repeats) {
    for (int warmUp = 0; warmUp < 2; warmUp++) {
      normalizer.normalize(batch, normalization).close();
    }
    double[] millis = new double[repeats];
    for (int repeat = 0; repeat < repeats; repeat++) {
      long started = System.nanoTime();
      normalizer.normalize(batch, normalization).close();
      millis[repeat] = (System.nanoTime() - started) / 1e6;
    }
    Arrays.sort(millis);
    return millis[repeats / 2];
  }

  private static FieldVector randomBatch(BufferAllocator allocator, int rows, int width) {
    Field element =
        new Field(
            "item",
            FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
            null);
    Field field =
        new Field(
            "embedding",
            FieldType.notNullable(new ArrowType.FixedSizeList(width)),
            List.of(element));
    FixedSizeListVector vector = (FixedSizeListVector) field.createVector(allocator);
    vector.setInitialCapacity(rows);
    vector.allocateNew();
    Float4Vector elements = (Float4Vector) vector.getDataVector();
    ArrowBuf data = elements.getDataBuffer();
    Random random = new Random(rows);
    for (long index = 0; index < (long) rows * width; index++) {
      data.setFloat(index * Float.BYTES, (float) random.nextGaussian());
    }
    vector.getValidityBuffer().setOne(0, vector.getValidityBuffer().capacity());
    elements.getValidityBuffer().setOne(0, elements.getValidityBuffer().capacity());
    vector.setValueCount(rows);
    return vector;
  }
}
