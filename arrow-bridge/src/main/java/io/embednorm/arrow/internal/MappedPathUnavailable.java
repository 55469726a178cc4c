package io.embednorm.arrow.internal;

import io.embednorm.engine.EmbedNormException;

/**
 * Why the mapped path cannot normalize a file (it is a stream, compressed, holds element nulls,
 * ...); the caller then takes the record-batch path, which reports any real error in the file
 * itself.
 */
public final class MappedPathUnavailable extends EmbedNormException {
  private static final long serialVersionUID = 1L;
  private final String reason;

  MappedPathUnavailable(String reason) {
    super("Cannot normalize the file on the mapped path: " + reason);
    this.reason = reason;
  }

  MappedPathUnavailable(String reason, Throwable cause) {
    super("Cannot normalize the file on the mapped path: " + reason, cause);
    this.reason = reason;
  }

  /** The reason alone, e.g. {@code record batch 3 is compressed}. */
  public String reason() {
    return reason;
  }
}
