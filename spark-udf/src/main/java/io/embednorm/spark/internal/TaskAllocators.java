package io.embednorm.spark.internal;

import io.embednorm.arrow.PinnedAllocators;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;

/**
 * The Arrow memory of the columnar operator: one root allocator per executor (JVM), pinned where a
 * GPU is usable, and a child allocator per task. A task's allocator is closed when the task
 * completes; anything still allocated from it then is a leak and fails the task, naming the bytes,
 * so that tests catch it.
 */
public final class TaskAllocators {
  private static final ConcurrentMap<Long, BufferAllocator> BY_TASK = new ConcurrentHashMap<>();

  private TaskAllocators() {}

  /** The executor's root allocator; everything embednorm allocates in Spark descends from it. */
  public static BufferAllocator root() {
    return Root.ALLOCATOR;
  }

  /**
   * The allocator of {@code task}, created on first use and closed when the task completes. The
   * task's other completion listeners registered later run before it (Spark runs them in reverse
   * order), so iterators that register theirs after this call free their batches first.
   */
  public static BufferAllocator forTask(TaskContext task) {
    long id = task.taskAttemptId();
    BufferAllocator existing = BY_TASK.get(id);
    if (existing != null) {
      return existing;
    }
    BufferAllocator created = root().newChildAllocator("embednorm-task-" + id, 0, Long.MAX_VALUE);
    BY_TASK.put(id, created);
    TaskCompletionListener closer = completed -> close(id);
    task.addTaskCompletionListener(closer);
    return created;
  }

  /** Task allocators not closed yet: those of running tasks (tests check that none is left). */
  public static int openTaskAllocators() {
    return BY_TASK.size();
  }

  /** Bytes allocated by running tasks' allocators and the shared result allocator, for tests. */
  public static long allocatedBytes() {
    return root().getAllocatedMemory();
  }

  private static void close(long id) {
    BufferAllocator allocator = BY_TASK.remove(id);
    if (allocator == null) {
      return;
    }
    long leaked = allocator.getAllocatedMemory();
    try {
      allocator.close();
    } catch (IllegalStateException leak) {
      throw new EmbedNormException(
          "Cannot close the Arrow memory of task "
              + id
              + ": "
              + leaked
              + " bytes are still allocated (a leak)",
          leak);
    }
  }

  /**
   * Created on first use, so that a driver that never runs the operator allocates nothing. Pinned
   * where this JVM has a usable GPU, so that batches copy to it at full PCIe speed.
   */
  private static final class Root {
    static final BufferAllocator ALLOCATOR =
        PinnedAllocators.newRootAllocatorFor(DeviceChoice.AUTO, Long.MAX_VALUE);
  }
}
