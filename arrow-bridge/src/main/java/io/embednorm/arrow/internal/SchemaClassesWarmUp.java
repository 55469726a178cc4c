package io.embednorm.arrow.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Initializes Arrow's {@link Schema} and {@link Field} classes on two daemon threads, once per
 * process. Reading a file's schema needs them, and their initialization loads Jackson and the
 * logging back end: in a fresh JVM that took longer than the rest of the work before a file's first
 * output byte. Started early, it overlaps the command line's parsing, the engine's start (a CUDA
 * context on the GPU) and the output's checks. The two do not initialize each other, so neither
 * thread waits for the other; a thread that uses a class first waits for its initialization, as it
 * would for its own. A failure is ignored here and shows where the class is used. Owns nothing to
 * close.
 */
public final class SchemaClassesWarmUp {
  private static final AtomicBoolean STARTED = new AtomicBoolean();

  private SchemaClassesWarmUp() {}

  /** Starts the threads unless an earlier call did; returns at once. */
  public static void start() {
    if (STARTED.compareAndSet(false, true)) {
      initializeInBackground(Field.class);
      initializeInBackground(Schema.class);
    }
  }

  private static void initializeInBackground(Class<?> type) {
    Thread thread =
        new Thread(
            () -> {
              try {
                Class.forName(type.getName(), true, type.getClassLoader());
              } catch (ClassNotFoundException | LinkageError ignored) {
                // the first use of the class reports it
              }
            },
            "embednorm-warm-up-" + type.getSimpleName());
    thread.setDaemon(true);
    thread.start();
  }
}
