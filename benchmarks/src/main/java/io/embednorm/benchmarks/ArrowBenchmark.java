package io.embednorm.benchmarks;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
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
 * The Arrow API end to end: {@link ArrowNormalizer#normalize(FieldVector, Normalization)} over 256
 * MiB of {@code FixedSizeList<float>}, allocating (and closing) each result vector, on the default
 * CPU engine (SIMD, one thread per processor). {@code batchRows} 0 is one vector of 256 MiB, whose
 * result is fresh memory from the operating system every time (page faults dominate); a positive
 * value splits the same rows into vectors of that many rows, as an IPC reader hands them over,
 * whose results the allocator can reuse.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
// Long enough for the engine to finish its scalar-first warm-up (SimdWarmUp) before the
// measurement, which then shows the steady state of a long-lived process.
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "--add-modules=jdk.incubator.vector",
      "-XX:PerMethodTrapLimit=1000",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "-Xmx2g",
      "-XX:MaxDirectMemorySize=2g"
    })
public class ArrowBenchmark {
  @Param({"rms_norm", "softmax"})
  public String op;

  @Param({"768"})
  public int width;

  @Param({"0", "4096"})
  public int batchRows;

  private BufferAllocator allocator;
  private final List<FixedSizeListVector> vectors = new ArrayList<>();
  private ArrowNormalizer normalizer;
  private Normalization normalization;

  @Setup
  public void setUp() {
    allocator = new RootAllocator();
    int rows = Workload.ELEMENTS / width;
    int perVector = batchRows > 0 ? batchRows : rows;
    ByteBuffer data = Workload.input();
    for (int first = 0; first < rows; first += perVector) {
      vectors.add(vector(data, first, Math.min(perVector, rows - first)));
    }
    normalizer = ArrowNormalizer.create(allocator, DeviceChoice.CPU);
    normalization = Normalization.of(Op.valueOf(op.toUpperCase(Locale.ROOT)));
    System.out.println("\n# engine: " + normalizer.engineDescription());
  }

  /** Rows [first, first + rows) of the workload as a vector of their own. */
  private FixedSizeListVector vector(ByteBuffer data, int first, int rows) {
    FixedSizeListVector vector = FixedSizeListVector.empty("embedding", width, allocator);
    vector.addOrGetVector(
        FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    vector.setInitialCapacity(rows);
    vector.allocateNew();
    Float4Vector values = (Float4Vector) vector.getDataVector();
    int elements = rows * width;
    values.allocateNew(elements);
    long base = (long) first * width;
    for (int i = 0; i < elements; i++) {
      values.set(i, data.getFloat((int) ((base + i) * Float.BYTES)));
    }
    values.setValueCount(elements);
    for (int row = 0; row < rows; row++) {
      vector.setNotNull(row);
    }
    vector.setValueCount(rows);
    return vector;
  }

  @TearDown
  public void tearDown() {
    normalizer.close();
    vectors.forEach(FixedSizeListVector::close);
    allocator.close();
  }

  @Benchmark
  public void normalize() {
    for (FixedSizeListVector vector : vectors) {
      try (FieldVector result = normalizer.normalize(vector, normalization)) {
        if (result.getValueCount() != vector.getValueCount()) {
          throw new IllegalStateException("rows lost");
        }
      }
    }
  }
}
