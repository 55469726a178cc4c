package io.embednorm.engine;

/**
 * Element types of the matrices the engines read and write; output type always equals input type.
 */
public enum ElementType {
  FLOAT16(2),
  BFLOAT16(2),
  FLOAT32(4),
  FLOAT64(8);

  private final int byteWidth;

  ElementType(int byteWidth) {
    this.byteWidth = byteWidth;
  }

  /** Bytes per element. */
  public int byteWidth() {
    return byteWidth;
  }
}
