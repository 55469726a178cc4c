package io.embednorm.arrow.internal;

/** A range of bytes of a file: {@code [position, position + length)}. */
record Region(long position, long length) {
  long end() {
    return position + length;
  }

  boolean isEmpty() {
    return length == 0;
  }
}
