package io.embednorm.benchmarks;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.cpu.CpuEngine;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
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
 * One op over 256 MiB of float32 rows through {@link CpuEngine} (buffer in, buffer out, as Arrow
 * hands it over). The subclasses fix the JVM options, and with them the loops: SIMD or scalar.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public abstract class EngineBenchmark {
  @Param({"rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"})
  public String op;

  @Param({"32", "128", "768", "4096", "32768"})
  public int width;

  @Param({"1", "2"})
  public int threads;

  private CpuEngine engine;
  private Normalization normalization;
  private RowBatch batch;

  @Setup
  public void setUp() {
    engine = new CpuEngine(threads);
    normalization = Normalization.of(Op.valueOf(op.toUpperCase(Locale.ROOT)));
    ByteBuffer input = Workload.input();
    ByteBuffer output = Workload.output();
    batch =
        RowBatch.fixedWidth(ElementType.FLOAT32, Workload.ELEMENTS / width, width, input, output);
    System.out.println("\n# engine: " + engine.description());
  }

  @TearDown
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public void normalize() {
    engine.normalize(normalization, batch);
  }
}
