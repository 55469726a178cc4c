package io.embednorm.jobs.internal;

import io.embednorm.engine.InternalSwitches;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;

/**
 * Progress of a command's Spark stages, one line a running stage on stderr at most every interval
 * ({@code embednorm job: stage 3: 12/48 tasks, 1.2M rows}), so that a long command is not minutes
 * of silence. Rows are those the finished tasks read or wrote, whichever is more. Nothing is
 * printed for a command whose stages end within the first interval. The caller closes it.
 */
public final class SparkProgress implements AutoCloseable {
  private final SparkContext context;
  private final Listener listener;
  private final ScheduledExecutorService timer;

  /** Prints {@code context}'s progress as {@code command} to {@code err} every {@code millis}. */
  SparkProgress(SparkContext context, String command, long millis, PrintStream err) {
    this.context = context;
    this.listener = new Listener();
    context.addSparkListener(listener);
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "embednorm progress");
              thread.setDaemon(true);
              return thread;
            });
    timer.scheduleAtFixedRate(
        () -> listener.print(command, err), millis, millis, TimeUnit.MILLISECONDS);
  }

  private SparkProgress() {
    this.context = null;
    this.listener = null;
    this.timer = null;
  }

  /**
   * Starts printing the progress of {@code spark}'s stages as {@code command} to System.err every
   * {@code embednorm.progressMillis} (nothing where it is 0).
   */
  public static SparkProgress start(SparkSession spark, String command) {
    int millis = InternalSwitches.PROGRESS_MILLIS.value();
    if (millis <= 0) {
      return new SparkProgress();
    }
    return new SparkProgress(spark.sparkContext(), command, millis, System.err);
  }

  /** Stops printing; no line follows. */
  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
      context.removeSparkListener(listener);
    }
  }

  /** What the running stages have done, from the listener bus's thread. */
  private static final class Listener extends SparkListener {
    private final Map<Integer, Stage> running = new ConcurrentSkipListMap<>();

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      running.put(submitted.stageInfo().stageId(), new Stage(submitted.stageInfo().numTasks()));
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted completed) {
      running.remove(completed.stageInfo().stageId());
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      Stage stage = running.get(end.stageId());
      if (stage == null || !end.taskInfo().successful()) {
        return;
      }
      stage.finished.incrementAndGet();
      TaskMetrics metrics = end.taskMetrics();
      if (metrics != null) {
        stage.rows.addAndGet(
            Math.max(
                metrics.inputMetrics().recordsRead(), metrics.outputMetrics().recordsWritten()));
      }
    }

    void print(String command, PrintStream err) {
      running.forEach(
          (id, stage) ->
              err.printf(
                  Locale.ROOT,
                  "%s: stage %d: %d/%d tasks, %s rows%n",
                  command,
                  id,
                  stage.finished.get(),
                  stage.tasks,
                  count(stage.rows.get())));
    }
  }

  private static final class Stage {
    final int tasks;
    final AtomicInteger finished = new AtomicInteger();
    final AtomicLong rows = new AtomicLong();

    Stage(int tasks) {
      this.tasks = tasks;
    }
  }

  /** 950, 12.3k, 1.2M, 3.4G. */
  static String count(long rows) {
    if (rows < 1000) {
      return Long.toString(rows);
    }
    String[] units = {"k", "M", "G", "T"};
    double value = rows;
    int unit = -1;
    while (value >= 1000 && unit < units.length - 1) {
      value /= 1000;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f%s", value, units[unit]);
  }
}
