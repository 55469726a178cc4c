package io.embednorm.arrow.internal;

import io.embednorm.engine.PinnedBlock;

/**
 * One pinned bounce buffer of a {@link StagingPool}: an input half that a chunk is copied into and
 * uploaded from, and an output half it is downloaded into and copied out of. The pool owns it; the
 * staging that took it gives it back.
 */
record StagingSlot(PinnedBlock block, long halfBytes, boolean pooled) {
  long input() {
    return block.address();
  }

  long output() {
    return block.address() + halfBytes;
  }

  /** Bytes a half holds at an offset of up to 15 (the chunk's alignment). */
  long capacity() {
    return halfBytes - 16;
  }
}
