package io.embednorm.arrow.internal;

import java.util.function.BooleanSupplier;

/**
 * Waiting on an object's monitor until a condition holds. The staging threads wait for work that is
 * already under way and must not be abandoned (a device copy, a write into a slot): an interrupt is
 * kept for the caller to see afterwards instead of cutting the wait short.
 */
final class Monitors {
  private Monitors() {}

  /**
   * Waits on {@code monitor}, whose lock the caller holds, until {@code done} holds (checked before
   * each wait and after each wake-up); then sets the thread's interrupt flag again if it was
   * interrupted meanwhile.
   */
  static void awaitUninterruptibly(Object monitor, BooleanSupplier done) {
    boolean interrupted = false;
    while (!done.getAsBoolean()) {
      try {
        monitor.wait();
      } catch (InterruptedException stop) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
