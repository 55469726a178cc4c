package io.embednorm.arrow.internal;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs tasks one at a time on a daemon thread of its own, so that the caller goes on while the last
 * one runs: a task's failure comes back from the next {@link #start} or from {@link #finish()}.
 * Owns its thread: {@link #close()} waits for the running task and stops it. Not thread-safe.
 */
public final class BackgroundTask implements AutoCloseable {
  private final String name;
  private final ExecutorService thread;
  private Future<?> pending;

  /** A task runner whose thread is called {@code name}. */
  public BackgroundTask(String name) {
    this.name = name;
    this.thread =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread worker = new Thread(runnable, name);
              worker.setDaemon(true);
              return worker;
            });
  }

  /** Whether a task is still running. */
  public boolean isBusy() {
    return pending != null && !pending.isDone();
  }

  /** Waits for the running task (rethrowing its failure), then starts {@code task}. */
  public void start(Runnable task) {
    finish();
    pending = thread.submit(task);
  }

  /** Waits for the running task, if any, and rethrows its failure. */
  public void finish() {
    if (pending == null) {
      return;
    }
    Future<?> waited = pending;
    pending = null;
    try {
      waited.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CancellationException("Interrupted while waiting for " + name);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(name + " failed", e.getCause());
    }
  }

  /** Waits for a running task (its failure no longer matters) and stops the thread. */
  @Override
  public void close() {
    try {
      if (pending != null) {
        pending.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException ignored) {
      // the caller is already failing for its own reason
    } finally {
      thread.shutdown();
    }
  }
}
