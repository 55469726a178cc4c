package io.embednorm.arrow;

import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.Engines;
import io.embednorm.engine.HostPin;
import org.apache.arrow.vector.FieldVector;

/**
 * One call's input and output element ranges, pinned once for every GPU the call's chunks go to
 * (pinned memory is pinned for all devices), and the column's shape, worked out once so that every
 * chunk on every device runs the same kernels. Nothing to do for pinned Arrow memory; registration
 * otherwise; pageable copies where neither works. The call closes it after every pipeline using it
 * has closed, so that no copy reads or writes memory that is no longer pinned.
 */
final class PinnedColumn implements AutoCloseable {
  private final ListColumn input;
  private final HostPin inputPin;
  private final HostPin outputPin;
  private ColumnShape shape;

  private PinnedColumn(ListColumn input, HostPin inputPin, HostPin outputPin) {
    this.input = input;
    this.inputPin = inputPin;
    this.outputPin = outputPin;
  }

  /** Pins the rows of {@code input} and the elements of {@code output}; the caller closes it. */
  static PinnedColumn pin(ListColumn input, FieldVector output, NormalizationMetrics metrics) {
    int byteWidth = input.type().byteWidth();
    long base = input.boundary(0);
    long bytes = (input.boundary(input.rows()) - base) * byteWidth;
    long inputAddress = input.elements().getDataBuffer().memoryAddress() + base * byteWidth;
    long outputAddress = ListColumn.elementsOf(output).getDataBuffer().memoryAddress();
    HostPin inputPin = pin(inputAddress, bytes, metrics);
    try {
      return new PinnedColumn(input, inputPin, pin(outputAddress, bytes, metrics));
    } catch (RuntimeException | Error failure) {
      unpin(inputPin);
      throw failure;
    }
  }

  /** The widest row and the alignment of all rows: one plan for every chunk of the column. */
  synchronized ColumnShape shape() {
    if (shape == null) {
      int byteWidth = input.type().byteWidth();
      int widest = 0;
      boolean aligned = true;
      long address = input.elements().getDataBuffer().memoryAddress();
      for (int row = 0; row < input.rows(); row++) {
        int width = (int) (input.boundary(row + 1) - input.boundary(row));
        widest = Math.max(widest, width);
        aligned &=
            ColumnShape.fitsVectors(input.type(), address + input.boundary(row) * byteWidth, width);
      }
      shape = new ColumnShape(widest, aligned);
    }
    return shape;
  }

  /** Counts {@code bytes} copied each way as pinned or staged, by how the memory was pinned. */
  void countCopies(long bytes, NormalizationMetrics metrics) {
    count(inputPin, bytes, metrics);
    count(outputPin, bytes, metrics);
  }

  @Override
  public void close() {
    try {
      unpin(inputPin);
    } finally {
      unpin(outputPin);
    }
  }

  private static void count(HostPin pin, long bytes, NormalizationMetrics metrics) {
    if (pin != null && pin.isPinned()) {
      metrics.addPinned(bytes);
    } else {
      metrics.addStaged(bytes);
    }
  }

  /**
   * Pins a range, or returns null where this process has no pinned memory (an engine that copies to
   * a device of its own without CUDA, as tests' engines do): the copies are then staged.
   */
  private static HostPin pin(long address, long bytes, NormalizationMetrics metrics) {
    if (Engines.gpuUnavailableReason() != null) {
      return null;
    }
    HostPin pin = Engines.hostMemory().pin(address, bytes);
    if (pin.kind() == HostPin.Kind.REGISTERED) {
      metrics.addRegistered(bytes, pin.registrationNanos());
    }
    return pin;
  }

  private static void unpin(HostPin pin) {
    if (pin != null) {
      pin.close();
    }
  }
}
