package io.embednorm.spark;

import io.embednorm.engine.CausalConvolutionReference;
import io.embednorm.engine.ConvolutionKernel;
import io.embednorm.engine.Engines;
import io.embednorm.spark.execution.EmbedNormProjectExec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.apache.logging.log4j.Level;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * As {@link FaultedGpuQuery}, for {@code causal_conv}: the main class of a JVM that {@link
 * GpuFallbackQueryTest} starts on the faulting "GPU", which runs {@code causal_conv} over {@link
 * FaultedGpuQuery#BATCHES} batches of sequences in one task and prints the same {@code RESULT}
 * line: each batch is one GPU call, so a failed call is one batch with the CPU engine's bits.
 */
public final class FaultedConvolutionQuery {
  private static final int STEPS = 6;
  private static final int CHANNELS = 4;

  private FaultedConvolutionQuery() {}

  public static void main(String[] arguments) {
    long seed = Long.parseLong(arguments[0]);
    Random random = new Random(seed);
    float[][] w = CausalConvolutionReference.randomKernel(random, CHANNELS, STEPS);
    List<Float[][]> sequences = new ArrayList<>();
    for (int row = 0; row < FaultedGpuQuery.BATCHES * FaultedGpuQuery.BATCH_ROWS; row++) {
      float[] values = CausalConvolutionReference.randomSequence(random, STEPS, CHANNELS);
      Float[][] sequence = new Float[STEPS][CHANNELS];
      for (int i = 0; i < values.length; i++) {
        sequence[i / CHANNELS][i % CHANNELS] = values[i];
      }
      sequences.add(sequence);
    }
    SparkSession spark = FaultedGpuQuery.session();
    Sequences.frame(spark, sequences).createOrReplaceTempView("sequences");
    Dataset<Row> result;
    Map<Integer, float[]> out;
    List<String> warnings;
    try (LogCapture log = LogCapture.of("io.embednorm", Level.WARN)) {
      result =
          spark.sql("SELECT id, causal_conv(s, " + Sequences.literal(w) + ") AS y FROM sequences");
      out = Sequences.byId(result.collectAsList(), 1);
      warnings = log.messages();
    }
    EmbedNormProjectExec operator =
        Results.find(result.queryExecution().executedPlan(), EmbedNormProjectExec.class);
    ConvolutionKernel kernel = ConvolutionKernel.of(w);
    TreeSet<Integer> cpuBatches = new TreeSet<>();
    TreeSet<Integer> otherBatches = new TreeSet<>();
    int offReference = 0;
    for (int id = 0; id < sequences.size(); id++) {
      float[] values = Sequences.floats(sequences.get(id));
      float[] expected = new float[values.length];
      Engines.causalConvolution().convolve(kernel, 0f, values, 0, STEPS, expected, 0);
      float[] y = out.get(id);
      boolean cpuBits = true;
      boolean flippedBits = true;
      for (int i = 0; i < values.length; i++) {
        int bits = Float.floatToRawIntBits(y[i]);
        int cpu = Float.floatToRawIntBits(expected[i]);
        cpuBits &= bits == cpu;
        flippedBits &= bits == (cpu ^ 1);
      }
      int batch = id / FaultedGpuQuery.BATCH_ROWS;
      if (cpuBits) {
        cpuBatches.add(batch);
      } else if (!flippedBits) {
        otherBatches.add(batch);
      }
      if (CausalConvolutionReference.firstOutsideBound(w, 0f, values, STEPS, y) >= 0) {
        offReference++;
      }
    }
    FaultedGpuQuery.report(spark, operator, warnings, cpuBatches, otherBatches, offReference);
  }
}
