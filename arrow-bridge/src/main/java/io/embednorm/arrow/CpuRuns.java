package io.embednorm.arrow;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.RowBatch;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FieldVector;

/**
 * Hands runs of a column's rows to a CPU engine as views of the Arrow buffers, one step after
 * another (the first from the input to the output, the others in place). Owns nothing: the engine,
 * the column and the output stay the caller's.
 */
final class CpuRuns implements ChunkedNormalization.RunSink {
  private final NormalizationEngine engine;
  private final List<Normalization> steps;
  private final ListColumn input;
  private final long firstRowIndex;
  private final NormalizationMetrics metrics;
  private final long base;
  private final int byteWidth;
  private final ArrowBuf inputData;
  private final ArrowBuf outputData;

  CpuRuns(
      NormalizationEngine engine,
      List<Normalization> steps,
      ListColumn input,
      FieldVector output,
      long firstRowIndex,
      NormalizationMetrics metrics) {
    this.engine = engine;
    this.steps = steps;
    this.input = input;
    this.firstRowIndex = firstRowIndex;
    this.metrics = metrics;
    this.base = input.boundary(0);
    this.byteWidth = input.type().byteWidth();
    this.inputData = input.elements().getDataBuffer();
    this.outputData = ListColumn.elementsOf(output).getDataBuffer();
  }

  @Override
  public void run(int from, int to) {
    long started = System.nanoTime();
    long start = input.boundary(from);
    int bytes = (int) ((input.boundary(to) - start) * byteWidth);
    ByteBuffer out = outputData.nioBuffer((start - base) * byteWidth, bytes);
    ByteBuffer in = inputData.nioBuffer(start * byteWidth, bytes);
    for (Normalization step : steps) {
      int width = input.fixedWidth();
      RowBatch batch =
          width >= 0
              ? RowBatch.fixedWidth(input.type(), to - from, width, in, out)
              : RowBatch.ragged(input.type(), IntBuffer.wrap(input.offsets(from, to)), in, out);
      engine.normalize(step, batch.withFirstRowIndex(firstRowIndex + from));
      in = out;
    }
    metrics.addCpu(System.nanoTime() - started);
  }

  @Override
  public void finish() {}

  @Override
  public void close() {}
}
