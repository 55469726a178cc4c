package io.embednorm.engine.cuda;

import jcuda.Pointer;

/** A JCuda pointer to a raw host address (JCuda's own constructor for one is protected). */
final class HostPointer extends Pointer {
  /** A pointer the driver fills in, e.g. by {@code cuMemHostAlloc}. */
  HostPointer() {
    super();
  }

  HostPointer(long address) {
    super(address);
  }

  long address() {
    return getNativePointer() + getByteOffset();
  }
}
