package io.embednorm.arrow.internal;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import java.util.Arrays;
import java.util.Objects;

/**
 * A column whose memory is not Arrow's, for {@link
 * io.embednorm.arrow.ArrowNormalizer#normalizeStaged}: the rows' layout (a fixed width, or offsets
 * from 0) and where their elements are read from and written to, by byte position (element {@code
 * i} at {@code i * byteWidth}), through the GPU's pinned staging slots. Used by embednorm's own
 * surfaces (the Spark operator reads and writes Spark's column vectors); not part of the Arrow API.
 * Owns nothing: the source's and target's memory stay the caller's and must stay alive until the
 * call returns.
 */
public final class StagedColumn {
  private final String name;
  private final ElementType type;
  private final int rows;
  private final int width;
  private final int[] offsets;
  private final StagingSource source;
  private final StagingTarget target;

  private StagedColumn(
      String name,
      ElementType type,
      int rows,
      int width,
      int[] offsets,
      StagingSource source,
      StagingTarget target) {
    this.name = Objects.requireNonNull(name, "name");
    this.type = Objects.requireNonNull(type, "type");
    this.rows = rows;
    this.width = width;
    this.offsets = offsets;
    this.source = Objects.requireNonNull(source, "source");
    this.target = Objects.requireNonNull(target, "target");
  }

  /**
   * {@code rows} rows of {@code width} elements each, row {@code r} at element {@code r * width}.
   */
  public static StagedColumn fixedWidth(
      String name,
      ElementType type,
      int rows,
      int width,
      StagingSource source,
      StagingTarget target) {
    if (rows < 0 || width < 0) {
      throw new IllegalArgumentException("rows " + rows + " and width " + width);
    }
    return new StagedColumn(name, type, rows, width, null, source, target);
  }

  /**
   * {@code offsets.length - 1} rows, row {@code r} holding elements {@code [offsets[r], offsets[r +
   * 1])}; the offsets start at 0 and never decrease. The array is kept, not copied.
   */
  public static StagedColumn ragged(
      String name, ElementType type, int[] offsets, StagingSource source, StagingTarget target) {
    if (offsets.length == 0 || offsets[0] != 0) {
      throw new IllegalArgumentException("offsets must start at 0: " + Arrays.toString(offsets));
    }
    return new StagedColumn(name, type, offsets.length - 1, -1, offsets, source, target);
  }

  /** The column's name, for messages. */
  public String name() {
    return name;
  }

  public ElementType type() {
    return type;
  }

  public int rows() {
    return rows;
  }

  /** The width of every row, or -1 where rows may differ in width. */
  public int fixedWidth() {
    return width;
  }

  /** The element where row {@code row} starts, or where the last row ends for {@code rows()}. */
  public long boundary(int row) {
    return offsets == null ? (long) row * width : offsets[row];
  }

  /** The boundaries of rows {@code [from, to]} counted from row {@code from}'s start. */
  public int[] offsets(int from, int to) {
    int[] relative = new int[to - from + 1];
    long start = boundary(from);
    for (int row = from; row <= to; row++) {
      relative[row - from] = (int) (boundary(row) - start);
    }
    return relative;
  }

  /** Bytes of all rows' elements. */
  public long bytes() {
    return boundary(rows) * type.byteWidth();
  }

  public StagingSource source() {
    return source;
  }

  public StagingTarget target() {
    return target;
  }

  /**
   * Throws when the rows hold more elements than one buffer view can hold, as Arrow columns may.
   */
  public void checkSize() {
    if (bytes() > Integer.MAX_VALUE * (long) type.byteWidth()) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + name
              + "': its rows hold "
              + boundary(rows)
              + " elements, more than one Arrow vector can hold ("
              + Integer.MAX_VALUE
              + ")");
    }
  }
}
