package io.embednorm.engine;

/**
 * The root of every exception embednorm throws. Messages read "Cannot &lt;verb&gt; &lt;thing&gt;:
 * &lt;why&gt;" and carry the sizes, row index and limits that explain the failure.
 */
public class EmbedNormException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public EmbedNormException(String message) {
    super(message);
  }

  public EmbedNormException(String message, Throwable cause) {
    super(message, cause);
  }
}
