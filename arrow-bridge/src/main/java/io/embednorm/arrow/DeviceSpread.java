package io.embednorm.arrow;

import io.embednorm.arrow.ChunkedNormalization.RunSink;
import io.embednorm.arrow.internal.StagingPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Spreads the runs of one call over a normalizer's GPUs: consecutive runs in equal shares (runs are
 * of equal bytes but the last), one share a device, each through its own pipeline (session, lanes,
 * staging) from its own thread: the caller's for the first share, a pool thread for each of the
 * others. A call of fewer runs than devices uses that many, starting from the next device in turn,
 * so that small calls spread too. Every run goes exactly where it would on one GPU, so the output
 * is bit for bit one GPU's.
 *
 * <p>The calling thread opens the shares' pipelines in the order of the device list before any
 * runs: a call waiting for a session then never holds one that an earlier call waits for, so calls
 * sharing devices at their limit of sessions never wait on each other in a circle.
 *
 * <p>A share that fails stops the others before their next run: all of them for a GPU failure (the
 * call goes to the CPU engine anyway), only the later ones (in row order) for the caller's error,
 * so that the error named is that of the first row that fails, as on one device. Every share closes
 * its pipeline, waiting for its chunks in flight, before {@link #run} returns or throws.
 *
 * <p>Owns its pool threads (daemons, started as needed); {@link #close()} stops them, never the
 * engines (the normalizer closes those).
 */
final class DeviceSpread implements AutoCloseable {
  private final List<GpuDevice> devices;
  private final ExecutorService helpers;
  private final AtomicInteger turn = new AtomicInteger();

  DeviceSpread(List<GpuDevice> devices) {
    this.devices = List.copyOf(devices);
    this.helpers =
        this.devices.size() > 1
            ? Executors.newCachedThreadPool(
                task -> {
                  Thread thread = new Thread(task, "embednorm-gpu-spread");
                  thread.setDaemon(true);
                  return thread;
                })
            : null;
  }

  /**
   * Runs {@code runs} (in row order) through pipelines that {@code open} makes, one per device
   * used; throws what the call should throw when a share fails (see the class comment).
   */
  void run(List<RowRuns.Run> runs, Function<GpuDevice, RunSink> open) {
    if (runs.isEmpty()) {
      return;
    }
    int shares = Math.min(devices.size(), runs.size());
    int first = devices.size() == 1 ? 0 : Math.floorMod(turn.getAndIncrement(), devices.size());
    RunSink[] sinks = openInListOrder(shares, first, open);
    Outcomes outcomes = new Outcomes(shares);
    List<CompletableFuture<Void>> others = new ArrayList<>();
    for (int share = 1; share < shares; share++) {
      int index = share;
      List<RowRuns.Run> part = share(runs, share, shares);
      try {
        others.add(
            CompletableFuture.runAsync(
                () -> runShare(index, sinks[index], part, outcomes), helpers));
      } catch (RejectedExecutionException closed) {
        outcomes.fail(index, closed);
        try {
          sinks[index].close();
        } catch (RuntimeException | Error closing) {
          outcomes.fail(index, closing);
        }
      }
    }
    runShare(0, sinks[0], share(runs, 0, shares), outcomes);
    for (CompletableFuture<Void> other : others) {
      other.join();
    }
    outcomes.rethrow();
  }

  /**
   * The first GPU's staging slots (every GPU has its own, over the same pinned memory), or null
   * where there are none.
   */
  StagingPool staging() {
    return devices.isEmpty() ? null : devices.get(0).staging();
  }

  /** Stops the pool threads; calls in progress finish first. */
  @Override
  public void close() {
    if (helpers != null) {
      helpers.shutdown();
    }
  }

  /** The pipelines of shares 0 to {@code shares - 1}, opened in the order of the device list. */
  private RunSink[] openInListOrder(int shares, int first, Function<GpuDevice, RunSink> open) {
    RunSink[] sinks = new RunSink[shares];
    try {
      for (int device = 0; device < devices.size(); device++) {
        int share = Math.floorMod(device - first, devices.size());
        if (share < shares) {
          sinks[share] = open.apply(devices.get(device));
        }
      }
      return sinks;
    } catch (RuntimeException | Error failure) {
      for (RunSink sink : sinks) {
        if (sink != null) {
          try {
            sink.close();
          } catch (RuntimeException | Error closing) {
            failure.addSuppressed(closing);
          }
        }
      }
      throw failure;
    }
  }

  private static List<RowRuns.Run> share(List<RowRuns.Run> runs, int share, int shares) {
    int size = runs.size();
    return runs.subList(
        (int) ((long) share * size / shares), (int) ((long) (share + 1) * size / shares));
  }

  /** Runs one share through its pipeline and closes it; records a failure instead of throwing. */
  private static void runShare(int share, RunSink sink, List<RowRuns.Run> runs, Outcomes outcomes) {
    try (sink) {
      for (RowRuns.Run run : runs) {
        if (outcomes.stops(share)) {
          return;
        }
        sink.run(run.from(), run.to());
      }
      sink.finish();
    } catch (RuntimeException | Error failure) {
      outcomes.fail(share, failure);
    }
  }

  /** How each share ended: when the others stop, and what the call throws. */
  private static final class Outcomes {
    private final Throwable[] failures;
    private final AtomicInteger stopAfter = new AtomicInteger(Integer.MAX_VALUE);

    Outcomes(int shares) {
      this.failures = new Throwable[shares];
    }

    boolean stops(int share) {
      return share > stopAfter.get();
    }

    /** Records a share's failure, stopping the shares after it, or all for a GPU failure. */
    void fail(int share, Throwable failure) {
      if (failures[share] == null) {
        failures[share] = failure;
      } else {
        failures[share].addSuppressed(failure);
      }
      int last = stopsAll(failure) ? -1 : share;
      stopAfter.accumulateAndGet(last, Math::min);
    }

    /**
     * Throws an Error if a share had one, else the first GPU failure (the call then reruns on the
     * CPU engine), else the failure of the first share that failed; the others are suppressed.
     */
    void rethrow() {
      Throwable chosen = null;
      for (Throwable failure : failures) {
        if (failure != null && rank(failure) < (chosen == null ? 3 : rank(chosen))) {
          chosen = failure;
        }
      }
      if (chosen == null) {
        return;
      }
      for (Throwable failure : failures) {
        if (failure != null && failure != chosen) {
          chosen.addSuppressed(failure);
        }
      }
      if (chosen instanceof Error error) {
        throw error;
      }
      throw (RuntimeException) chosen;
    }

    private static int rank(Throwable failure) {
      if (failure instanceof Error) {
        return 0;
      }
      return stopsAll(failure) ? 1 : 2;
    }

    private static boolean stopsAll(Throwable failure) {
      return !(failure instanceof RuntimeException runtime)
          || ChunkedNormalization.isGpuFailure(runtime);
    }
  }
}
