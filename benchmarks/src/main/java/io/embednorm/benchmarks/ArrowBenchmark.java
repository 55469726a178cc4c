package io.embednorm.benchmarks;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.Normalization;
import io.embednorm.kernels.Op;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The Arrow API end to end: {@link ArrowNormalizer#normalize(FieldVector, Normalization)} on a
 * {@code FixedSizeList<float>} of 256 MiB, allocating (and closing) the result vector each time, on
 * the default CPU engine (SIMD, one thread per processor).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "--add-modules=jdk.incubator.vector",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "-Xmx2g",
      "-XX:MaxDirectMemorySize=2g"
    })
public class ArrowBenchmark {
  @Param({"rms_norm", "softmax"})
  public String op;

  @Param({"768"})
  public int width;

  private BufferAllocator allocator;
  private FixedSizeListVector vector;
  private ArrowNormalizer normalizer;
  private Normalization normalization;

  @Setup
  public void setUp() {
    allocator = new RootAllocator();
    int rows = Workload.ELEMENTS / width;
    vector = FixedSizeListVector.empty("embedding", width, allocator);
    vector.addOrGetVector(
        FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    vector.setInitialCapacity(rows);
    vector.allocateNew();
    Float4Vector values = (Float4Vector) vector.getDataVector();
    values.allocateNew(rows * width);
    ByteBuffer data = Workload.input();
    for (int i = 0; i < rows * width; i++) {
      values.set(i, data.getFloat(i * Float.BYTES));
    }
    values.setValueCount(rows * width);
    for (int row = 0; row < rows; row++) {
      vector.setNotNull(row);
    }
    vector.setValueCount(rows);
    normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
    normalization = Normalization.of(Op.valueOf(op.toUpperCase(Locale.ROOT)));
    System.out.println("\n# engine: " + normalizer.engineDescription());
  }

  @TearDown
  public void tearDown() {
    vector.close();
    allocator.close();
  }

  @Benchmark
  public void normalize() {
    try (FieldVector result = normalizer.normalize(vector, normalization)) {
      if (result.getValueCount() != vector.getValueCount()) {
        throw new IllegalStateException("rows lost");
      }
    }
  }
}
