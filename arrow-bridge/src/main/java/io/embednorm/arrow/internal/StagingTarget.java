package io.embednorm.arrow.internal;

/**
 * Where the output bytes of staged GPU chunks go, by byte position: the caller's memory ({@link
 * HostAddresses#target}), or a file written at positions ({@link FileStaging}). Staging copies a
 * finished chunk out of its pinned slot in pieces from several threads at once, or whole on a
 * writer thread ({@link #writesOnOneThread()}).
 */
public interface StagingTarget {
  /**
   * Copies {@code bytes} from {@code address} to positions {@code [position, position + bytes)}.
   * Called from several threads at once, for pieces that do not overlap, unless the target {@link
   * #writesOnOneThread()}.
   */
  void copyFrom(long address, long position, long bytes);

  /**
   * Where the device may write {@code position} straight, the memory being pinned already, or
   * {@link HostAddresses#NOT_PINNED}: then the chunk goes through a slot.
   */
  default long pinnedAddress(long position) {
    return HostAddresses.NOT_PINNED;
  }

  /**
   * Whether one thread writes this target as fast as several: then staging writes each finished
   * chunk whole on a writer thread of its own, calling {@link #copyFrom} from that thread only,
   * while the staging's thread fills the next chunks. True of a file, whose writes the kernel
   * serializes; false of memory, which copies faster on several threads.
   */
  default boolean writesOnOneThread() {
    return false;
  }
}
