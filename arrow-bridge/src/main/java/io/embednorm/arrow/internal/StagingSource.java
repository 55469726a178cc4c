package io.embednorm.arrow.internal;

/**
 * Where the input bytes of staged GPU chunks come from, by byte position: the caller's memory
 * ({@link HostAddresses#source}), and later a mapped file. Staging copies a chunk into a pinned
 * slot in pieces, from several threads at once.
 */
public interface StagingSource {
  /**
   * Copies bytes {@code [position, position + bytes)} to {@code address}. Called from several
   * threads at once, for pieces that do not overlap.
   */
  void copyTo(long position, long address, long bytes);

  /**
   * Where the device may read {@code position} straight, the memory being pinned already, or {@link
   * HostAddresses#NOT_PINNED}: then the chunk goes through a slot.
   */
  default long pinnedAddress(long position) {
    return HostAddresses.NOT_PINNED;
  }

  /**
   * The offset modulo 16 that the byte at {@code position} has where its rows live (as an Arrow
   * buffer): the slot places it at the same offset, since the kernels pick 16-byte loads by a row's
   * address, so a staged row gives the same bits as the row read in place.
   */
  default int alignment(long position) {
    return (int) (position & 15);
  }
}
