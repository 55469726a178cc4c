package io.embednorm.engine;

/**
 * The GPU ran out of memory. Retryable: the same work split into smaller batches, or on the CPU,
 * can succeed.
 */
public class GpuOutOfMemoryException extends EmbedNormException {
  private static final long serialVersionUID = 1L;

  public GpuOutOfMemoryException(String message, Throwable cause) {
    super(message, cause);
  }
}
