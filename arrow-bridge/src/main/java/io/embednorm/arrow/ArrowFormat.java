package io.embednorm.arrow;

/** The two Arrow IPC formats. */
public enum ArrowFormat {
  /** The random-access file format: starts and ends with {@code ARROW1}. */
  FILE,
  /** The streaming format: a sequence of messages, without magic. */
  STREAM
}
