package io.embednorm.arrow.internal;

/**
 * Where the output bytes of staged GPU chunks go, by byte position: the caller's memory ({@link
 * HostAddresses#target}), and later a file written at positions. Staging copies a finished chunk
 * out of its pinned slot in pieces, from several threads at once.
 */
public interface StagingTarget {
  /**
   * Copies {@code bytes} from {@code address} to positions {@code [position, position + bytes)}.
   * Called from several threads at once, for pieces that do not overlap.
   */
  void copyFrom(long address, long position, long bytes);

  /**
   * Where the device may write {@code position} straight, the memory being pinned already, or
   * {@link HostAddresses#NOT_PINNED}: then the chunk goes through a slot.
   */
  default long pinnedAddress(long position) {
    return HostAddresses.NOT_PINNED;
  }
}
