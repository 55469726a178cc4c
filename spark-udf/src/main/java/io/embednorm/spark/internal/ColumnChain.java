package io.embednorm.spark.internal;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import io.embednorm.spark.internal.SparkArrays.ElementWidth;
import java.io.Serializable;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One normalized output column of the columnar operator: a chain of normalizations (innermost
 * first, as in {@code l2_normalize(rms_norm(x))} = [rms_norm, l2_normalize]) over the input column
 * at {@code inputOrdinal} of the child's batches. Planned on the driver, run on executors.
 *
 * @param inputOrdinal the input column's position in the child's output
 * @param inputName the input column's name, for messages
 * @param width the element type of the input (and output)
 * @param steps the normalizations, innermost first
 * @param encoding the encoding the last step writes in the same pass ({@code
 *     quantize_int8(l2_normalize(x))}), or null for float rows
 */
public record ColumnChain(
    int inputOrdinal,
    String inputName,
    ElementWidth width,
    List<Normalization> steps,
    Encoding encoding)
    implements Serializable {
  public ColumnChain {
    steps = List.copyOf(steps);
  }

  /** A chain whose result is rows of the input's element type. */
  public ColumnChain(
      int inputOrdinal, String inputName, ElementWidth width, List<Normalization> steps) {
    this(inputOrdinal, inputName, width, steps, null);
  }

  /** This chain with its last step written in {@code newEncoding}. */
  public ColumnChain encoded(Encoding newEncoding) {
    return new ColumnChain(inputOrdinal, inputName, width, steps, newEncoding);
  }

  /** The SQL names of the steps, outermost last, e.g. {@code rms_norm, l2_normalize}. */
  public String functions() {
    String ops = steps.stream().map(step -> step.op().sqlName()).collect(Collectors.joining(", "));
    return encoding == null ? ops : ops + " + " + encoding.optionName();
  }
}
