package io.embednorm.engine;

import java.util.Locale;

/**
 * How an op's float32 result is stored for a vector store (docs/SEMANTICS.md, Encodings): every
 * encoding is computed from the float32 result of the op, so it equals encoding that result.
 *
 * <ul>
 *   <li>{@link #FLOAT16}, {@link #BFLOAT16}: each element rounded to nearest, ties to even, 2 bytes
 *       little-endian (the bytes of an Arrow {@code float16} buffer).
 *   <li>{@link #INT8}: symmetric, one float32 scale a row: {@code scale = max|y| / 127}, {@code q =
 *       round-half-even(y / scale)}, both divisions in float32; a row of zeros gives scale 0 and q
 *       0; a row holding NaN or an infinity gives scale NaN and q 0.
 *   <li>{@link #BINARY}: one bit an element, {@code y >= 0} gives 1 (so -0.0 gives 1, NaN 0), bit
 *       {@code i % 8} of byte {@code i / 8} holds element {@code i}; the last byte's unused bits
 *       are 0.
 * </ul>
 */
public enum Encoding {
  FLOAT16,
  BFLOAT16,
  INT8,
  BINARY;

  /** The bytes that encode a row of {@code width} elements. */
  public long rowBytes(int width) {
    switch (this) {
      case FLOAT16:
      case BFLOAT16:
        return 2L * width;
      case INT8:
        return width;
      default:
        return (width + 7L) / 8;
    }
  }

  /** Whether rows carry a float32 scale beside their bytes. */
  public boolean hasScales() {
    return this == INT8;
  }

  /** The lower-case name options and messages use, e.g. {@code int8}. */
  public String optionName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The encoding named {@code name} (any case).
   *
   * @throws EmbedNormException when no encoding has that name
   */
  public static Encoding named(String name) {
    for (Encoding encoding : values()) {
      if (encoding.optionName().equalsIgnoreCase(name.trim())) {
        return encoding;
      }
    }
    throw new EmbedNormException(
        "Cannot choose encoding: '" + name + "' is not one of float16, bfloat16, int8, binary");
  }
}
