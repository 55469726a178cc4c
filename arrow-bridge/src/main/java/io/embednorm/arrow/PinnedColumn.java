package io.embednorm.arrow;

import io.embednorm.arrow.internal.HostAddresses;
import io.embednorm.arrow.internal.HostAddresses.Pinning;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.arrow.internal.StagingSource;
import io.embednorm.arrow.internal.StagingTarget;
import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.Engines;
import io.embednorm.engine.HostPin;
import io.embednorm.engine.InternalSwitches;
import org.apache.arrow.vector.FieldVector;

/**
 * How one call's input and output element ranges reach every GPU the call's chunks go to, and the
 * column's shape, worked out once so that every chunk on every device runs the same kernels. Memory
 * that is pinned already (embednorm's pinned allocator) is copied by the device in place; other
 * memory goes through the GPUs' staging slots ({@link io.embednorm.arrow.internal.StagedChunks}),
 * or, without slots (no pinned memory in this process, or {@code embednorm.gpu.staging=false}), is
 * registered with the driver for the call, with pageable copies where that fails. The call closes
 * it after every pipeline using it has closed, so that no copy reads or writes memory that is no
 * longer registered.
 */
final class PinnedColumn implements AutoCloseable {
  private final ListColumn input;
  private final Side inputSide;
  private final Side outputSide;
  private final long inputBase;
  private final long outputBase;
  private ColumnShape shape;

  private PinnedColumn(
      ListColumn input, Side inputSide, Side outputSide, long inputBase, long outputBase) {
    this.input = input;
    this.inputSide = inputSide;
    this.outputSide = outputSide;
    this.inputBase = inputBase;
    this.outputBase = outputBase;
  }

  /**
   * Makes the rows of {@code input} and the elements of {@code output} ready for the device:
   * through {@code staging}'s slots where it is given (and staging is on), else registered. The
   * caller closes it.
   */
  static PinnedColumn pin(
      ListColumn input, FieldVector output, NormalizationMetrics metrics, StagingPool staging) {
    int byteWidth = input.type().byteWidth();
    long base = input.boundary(0);
    long bytes = (input.boundary(input.rows()) - base) * byteWidth;
    long inputData = input.elements().getDataBuffer().memoryAddress();
    long outputData = ListColumn.elementsOf(output).getDataBuffer().memoryAddress();
    long inputAddress = inputData + base * byteWidth;
    // Positions are byte offsets of elements in the input's data buffer, for both sides.
    long outputBase = outputData - base * byteWidth;
    if (staging != null && InternalSwitches.GPU_STAGING.value()) {
      return new PinnedColumn(
          input,
          Side.staged(staging.isPinned(inputAddress, bytes)),
          Side.staged(staging.isPinned(outputData, bytes)),
          inputData,
          outputBase);
    }
    Side inputSide = Side.registered(pin(inputAddress, bytes, metrics));
    try {
      return new PinnedColumn(
          input,
          inputSide,
          Side.registered(pin(outputData, bytes, metrics)),
          inputData,
          outputBase);
    } catch (RuntimeException | Error failure) {
      inputSide.close();
      throw failure;
    }
  }

  /** Whether a side goes through staging slots (the other may be pinned). */
  boolean staged() {
    return inputSide.pinning == Pinning.STAGED || outputSide.pinning == Pinning.STAGED;
  }

  /** The input by position (a byte offset into the input's element data buffer). */
  StagingSource source() {
    return HostAddresses.source(inputBase, inputSide.pinning);
  }

  /** The output by the same positions as {@link #source()}. */
  StagingTarget target() {
    return HostAddresses.target(outputBase, outputSide.pinning);
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

  /** Counts {@code bytes} copied each way as pinned, staged or pageable, by how each side goes. */
  void countCopies(long bytes, NormalizationMetrics metrics) {
    inputSide.count(bytes, metrics);
    outputSide.count(bytes, metrics);
  }

  @Override
  public void close() {
    try {
      inputSide.close();
    } finally {
      outputSide.close();
    }
  }

  /**
   * Pins a range, or returns null where this process has no pinned memory (an engine that copies to
   * a device of its own without CUDA, as tests' engines do): the copies are then pageable.
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

  /** How one side reaches the device: pinned in place (maybe by a pin), staged, or pageable. */
  private record Side(Pinning pinning, HostPin pin, boolean pageable) {
    static Side staged(boolean pinned) {
      return new Side(pinned ? Pinning.PINNED : Pinning.STAGED, null, false);
    }

    static Side registered(HostPin pin) {
      return new Side(Pinning.PINNED, pin, pin == null || !pin.isPinned());
    }

    void count(long bytes, NormalizationMetrics metrics) {
      if (pageable) {
        metrics.addPageable(bytes);
      } else if (pinning == Pinning.STAGED) {
        metrics.addStaged(bytes);
      } else {
        metrics.addPinned(bytes);
      }
    }

    void close() {
      if (pin != null) {
        pin.close();
      }
    }
  }
}
