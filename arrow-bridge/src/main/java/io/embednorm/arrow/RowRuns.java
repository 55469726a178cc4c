package io.embednorm.arrow;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a column's rows into runs of at most a byte limit, in row order, leaving out the invalid
 * rows whose width does not fit a step's weight or bias (so that a null row never raises a width
 * error). A row wider than the limit goes alone.
 */
final class RowRuns {
  /** Rows [from, to) of the column. */
  record Run(int from, int to) {}

  private final ListColumn input;
  private final List<Normalization> steps;

  /** Null when every row fits every step (then validity does not matter here). */
  private final boolean[] valid;

  private final int rows;
  private final long firstRowIndex;
  private final long limit;
  private final int byteWidth;

  RowRuns(
      ListColumn input,
      List<Normalization> steps,
      boolean[] valid,
      long limit,
      long firstRowIndex) {
    this.input = input;
    this.steps = steps;
    this.rows = input.rows();
    this.valid = valid;
    this.firstRowIndex = firstRowIndex;
    this.limit = limit;
    this.byteWidth = input.type().byteWidth();
  }

  /** Hands each run to {@code sink}, in row order. */
  void submitAll(ChunkedNormalization.RunSink sink) {
    for (Run run : list()) {
      sink.run(run.from(), run.to());
    }
  }

  /**
   * The runs, in row order; runs of no bytes (empty rows only) are left out.
   *
   * @throws EmbedNormException when a run holds more bytes than one buffer view can
   */
  List<Run> list() {
    List<Run> runs = new ArrayList<>();
    int runStart = 0;
    for (int row = 0; row < rows; row++) {
      if (valid != null && !valid[row] && !fits(width(row))) {
        add(runs, runStart, row);
        runStart = row + 1;
      } else if (row > runStart && bytes(runStart, row + 1) > limit) {
        add(runs, runStart, row);
        runStart = row;
      }
    }
    add(runs, runStart, rows);
    return runs;
  }

  private void add(List<Run> runs, int from, int to) {
    long bytes = bytes(from, to);
    if (bytes == 0) {
      return;
    }
    if (bytes > Integer.MAX_VALUE) {
      throw new EmbedNormException(
          "Cannot normalize row "
              + (firstRowIndex + from)
              + " of column '"
              + input.name()
              + "': it holds "
              + bytes
              + " bytes, more than one buffer view can hold ("
              + Integer.MAX_VALUE
              + ")");
    }
    runs.add(new Run(from, to));
  }

  private long bytes(int from, int to) {
    return (input.boundary(to) - input.boundary(from)) * byteWidth;
  }

  private int width(int row) {
    return (int) (input.boundary(row + 1) - input.boundary(row));
  }

  private boolean fits(int width) {
    if (width == 0) {
      return true;
    }
    for (Normalization step : steps) {
      if ((step.hasWeight() && step.weight().length != width)
          || (step.hasBias() && step.bias().length != width)) {
        return false;
      }
    }
    return true;
  }
}
