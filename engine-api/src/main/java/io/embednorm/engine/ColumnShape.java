package io.embednorm.engine;

/**
 * What the launch plan of ragged rows depends on, fixed for a whole column so that every chunk of
 * it runs the same kernels: chunking then changes no output bit.
 *
 * @param widestRow the widest row of the column
 * @param vectorAligned whether every row starts on a 16-byte boundary and holds a whole number of
 *     16-byte packs (see {@link #fitsVectors})
 */
public record ColumnShape(int widestRow, boolean vectorAligned) {
  private static final int VECTOR_BYTES = 16;

  /** Whether a row at host {@code address} of {@code width} elements allows 16-byte access. */
  public static boolean fitsVectors(ElementType type, long address, int width) {
    return (address & (VECTOR_BYTES - 1)) == 0
        && (long) width * type.byteWidth() % VECTOR_BYTES == 0;
  }
}
