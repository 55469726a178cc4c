package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.util.DataSizeRoundingUtil;

/**
 * A FixedSizeList or List vector seen as rows of elements in its child vector. Row {@code r} holds
 * the child elements {@code [boundary(r), boundary(r + 1))}.
 */
abstract class ListColumn {
  private final String name;
  private final ElementType type;
  private final BaseFixedWidthVector elements;

  ListColumn(String name, ElementType type, BaseFixedWidthVector elements) {
    this.name = name;
    this.type = type;
    this.elements = elements;
  }

  /** Views a supported vector; throws the user-facing type error for any other. */
  static ListColumn of(FieldVector vector) {
    String name = vector.getField().getName();
    ElementType type = EmbeddingColumn.elementType(vector.getField(), name);
    if (vector instanceof FixedSizeListVector) {
      return new FixedSizeListColumn(name, type, (FixedSizeListVector) vector);
    }
    if (vector instanceof ListVector) {
      return new VariableListColumn(name, type, (ListVector) vector);
    }
    throw new EmbedNormException(
        "Cannot normalize column '"
            + name
            + "': it is a "
            + vector.getClass().getSimpleName()
            + "; "
            + EmbeddingColumn.EXPECTED_TYPE);
  }

  String name() {
    return name;
  }

  ElementType type() {
    return type;
  }

  /** The child vector that holds the elements of all rows. */
  BaseFixedWidthVector elements() {
    return elements;
  }

  abstract int rows();

  /**
   * The child index where row {@code row} starts, or where the last row ends for {@code rows()}.
   */
  abstract long boundary(int row);

  abstract boolean isNullRow(int row);

  /** The boundaries of rows {@code [from, to]} counted from row {@code from}'s start. */
  int[] offsets(int from, int to) {
    int[] offsets = new int[to - from + 1];
    long start = boundary(from);
    for (int row = from; row <= to; row++) {
      offsets[row - from] = (int) (boundary(row) - start);
    }
    return offsets;
  }

  /** How many rows are null (from the validity buffer, a word at a time). */
  abstract int nullRows();

  /** The width of every row, or -1 where rows may differ in width. */
  abstract int fixedWidth();

  /**
   * A new vector with the column's field and row layout (row boundaries shifted to start at 0),
   * {@code elementCount} allocated elements and its value counts set; every row and element is null
   * until the caller sets validity bits.
   */
  final FieldVector allocateOutput(BufferAllocator allocator, int elementCount) {
    return allocateOutput(allocator, elementCount, BufferAllocator::buffer);
  }

  /**
   * As {@link #allocateOutput(BufferAllocator, int)}, the element buffer from {@code elements}
   * (e.g. pinned memory accounted to {@code allocator}).
   */
  abstract FieldVector allocateOutput(
      BufferAllocator allocator, int elementCount, ElementMemory elements);

  /** Where an output's element buffer comes from; the buffer is the caller's to close. */
  @FunctionalInterface
  interface ElementMemory {
    ArrowBuf buffer(BufferAllocator allocator, long bytes);
  }

  /**
   * Gives {@code vector} its own buffers for {@code count} entries, loaded as an IPC reader would:
   * a list's validity zeroed (all null, set by the caller), an element vector's validity and all
   * other buffers left as the allocator hands them out (the caller writes every element's bit).
   * Zeroing would cost as much as a pass over the data, and every element of an output is written
   * (normalized, or zeroed under an invalid row) before anyone reads it.
   *
   * @param bufferBytes the sizes of the buffers after the validity buffer
   */
  static void loadUnzeroed(
      FieldVector vector, BufferAllocator allocator, int count, long... bufferBytes) {
    loadUnzeroed(vector, allocator, BufferAllocator::buffer, count, bufferBytes);
  }

  /** As {@link #loadUnzeroed}, the buffers after the validity buffer from {@code memory}. */
  static void loadUnzeroed(
      FieldVector vector,
      BufferAllocator allocator,
      ElementMemory memory,
      int count,
      long... bufferBytes) {
    List<ArrowBuf> buffers = new ArrayList<>();
    try {
      // Not BitVectorHelper.getValidityBufferSize: Arrow 19 (Spark 4.2) renamed it.
      ArrowBuf validity = allocator.buffer(DataSizeRoundingUtil.divideBy8Ceil(count));
      buffers.add(validity);
      if (!(vector instanceof BaseFixedWidthVector)) {
        validity.setZero(0, validity.capacity());
      }
      for (long bytes : bufferBytes) {
        buffers.add(memory.buffer(allocator, bytes));
      }
      vector.loadFieldBuffers(new ArrowFieldNode(count, count), buffers);
    } finally {
      buffers.forEach(ArrowBuf::close);
    }
  }

  /** The element vector of an output made by {@link #allocateOutput}. */
  static BaseFixedWidthVector elementsOf(FieldVector output) {
    return (BaseFixedWidthVector) output.getChildrenFromFields().get(0);
  }
}
