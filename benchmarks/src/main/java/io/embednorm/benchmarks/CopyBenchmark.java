package io.embednorm.benchmarks;

import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
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
 * The yardstick: a bulk copy of the same 256 MiB between the same kind of buffers (a memmove), on 1
 * or 2 threads splitting the bytes as the engine splits rows. No normalization can beat it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx2g", "-XX:MaxDirectMemorySize=2g"})
public class CopyBenchmark {
  @Param({"1", "2"})
  public int threads;

  private ByteBuffer input;
  private ByteBuffer output;
  private ExecutorService pool;

  @Setup
  public void setUp() {
    input = Workload.input();
    output = Workload.output();
    pool = Executors.newFixedThreadPool(Math.max(1, threads - 1));
  }

  @TearDown
  public void tearDown() {
    pool.shutdown();
  }

  @Benchmark
  public void copy() throws Exception {
    if (threads == 1) {
      output.put(0, input, 0, Workload.BYTES);
      return;
    }
    int share = Workload.BYTES / threads;
    Future<?>[] others = new Future<?>[threads - 1];
    for (int part = 1; part < threads; part++) {
      int start = part * share;
      int length = part == threads - 1 ? Workload.BYTES - start : share;
      others[part - 1] = pool.submit(() -> output.put(start, input, start, length));
    }
    output.put(0, input, 0, share);
    for (Future<?> other : others) {
      other.get();
    }
  }
}
