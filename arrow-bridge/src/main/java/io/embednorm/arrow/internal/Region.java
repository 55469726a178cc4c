package io.embednorm.arrow.internal;

/** A range of bytes of a file: {@code [position, position + length)}. */
record Region(long position, long length) {
  long end() {
    return position + length;
  }

  boolean isEmpty() {
    return length == 0;
  }

  /** Whether the two share a byte (an empty region shares none). */
  boolean overlaps(Region other) {
    return !isEmpty() && !other.isEmpty() && position < other.end() && other.position < end();
  }
}
