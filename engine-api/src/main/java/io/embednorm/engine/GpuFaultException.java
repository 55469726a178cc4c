package io.embednorm.engine;

/**
 * The GPU failed in a way that smaller chunks will not fix: a driver or kernel error, a lost
 * device. Not retryable on the GPU; the same work can run on the CPU engine, which is what the
 * surfaces do with it (docs/SEMANTICS.md, Devices).
 */
public class GpuFaultException extends EmbedNormException {
  private static final long serialVersionUID = 1L;

  public GpuFaultException(String message) {
    super(message);
  }

  public GpuFaultException(String message, Throwable cause) {
    super(message, cause);
  }
}
