package io.embednorm.spark.internal;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * The executor's normalizers: one {@link ArrowNormalizer} per device setting, GPU ordinal and
 * concurrency, shared by all tasks of the executor so that a GPU's engine (context, streams, pooled
 * buffers) and its limit of concurrent tasks are shared too. They live as long as the executor.
 * Results come from one shared allocator; the operator moves them to the task's allocator.
 */
public final class Normalizers {
  /** The name of the GPU resource in Spark's resource scheduling. */
  public static final String GPU_RESOURCE = "gpu";

  private static final ConcurrentMap<Key, ArrowNormalizer> NORMALIZERS = new ConcurrentHashMap<>();
  private static final Placements PLACEMENTS = new Placements();

  /** The executor id of the driver, the only executor in local mode. */
  private static final String DRIVER = "driver";

  private Normalizers() {}

  /**
   * The normalizer for {@code device} on the GPU Spark assigned to {@code task} (GPU 0 when it
   * assigned none), letting {@code concurrentGpuTasks} tasks use that GPU at once.
   *
   * @throws EmbedNormException when {@code gpu} is asked for and this executor has no usable GPU
   */
  public static ArrowNormalizer forTask(
      DeviceChoice device, int concurrentGpuTasks, TaskContext task) {
    int ordinal = device == DeviceChoice.CPU ? 0 : gpuOrdinal(task);
    return NORMALIZERS.computeIfAbsent(
        new Key(device, ordinal, concurrentGpuTasks),
        key ->
            PLACEMENTS.announce(
                executorId(),
                ArrowNormalizer.builder(Results.ALLOCATOR)
                    .device(key.device())
                    .gpuOrdinal(key.ordinal())
                    .gpuConcurrency(key.concurrentGpuTasks())
                    .build()));
  }

  /**
   * The CUDA ordinal of the first GPU address Spark assigned to {@code task} ({@code
   * spark.task.resource.gpu.amount}), or 0 when it assigned none.
   *
   * @throws EmbedNormException when the address is not a CUDA ordinal
   */
  public static int gpuOrdinal(TaskContext task) {
    if (task == null) {
      return 0;
    }
    Option<ResourceInformation> gpu = task.resources().get(GPU_RESOURCE);
    if (gpu.isEmpty() || gpu.get().addresses().length == 0) {
      return 0;
    }
    String address = gpu.get().addresses()[0];
    try {
      return Integer.parseInt(address.trim());
    } catch (NumberFormatException notAnOrdinal) {
      throw new EmbedNormException(
          "Cannot use the GPU address '"
              + address
              + "' that Spark assigned to task "
              + task.taskAttemptId()
              + ": it is not a CUDA device ordinal; make the discovery script print ordinals");
    }
  }

  /**
   * Says at WARN where an executor normalizes ({@link DevicePolicy#executorPlacement}), once per
   * engine it uses: executors are where the Vector API module or a GPU may be missing, and a
   * cluster's users otherwise see neither. Not in local mode, whose driver is its only executor:
   * there the commands print their device choice themselves. The executors' normalizers use one;
   * tests their own.
   */
  public static final class Placements {
    private static final Logger LOG = LoggerFactory.getLogger(Normalizers.class);
    private final Set<String> announced = ConcurrentHashMap.newKeySet();

    /**
     * Logs where {@code normalizer} runs on executor {@code executorId} unless its engine was
     * announced or the executor is the driver; returns {@code normalizer}.
     */
    public ArrowNormalizer announce(String executorId, ArrowNormalizer normalizer) {
      if (!DRIVER.equals(executorId) && announced.add(normalizer.engineDescription())) {
        LOG.warn(DevicePolicy.executorPlacement(executorId, normalizer));
      }
      return normalizer;
    }
  }

  /** This executor's id, {@code driver} in local mode or outside Spark. */
  private static String executorId() {
    SparkEnv environment = SparkEnv.get();
    return environment == null ? DRIVER : environment.executorId();
  }

  private record Key(DeviceChoice device, int ordinal, int concurrentGpuTasks) {}

  /** The allocator of every normalizer's results, a child of the executor's root. */
  private static final class Results {
    static final BufferAllocator ALLOCATOR =
        TaskAllocators.root().newChildAllocator("embednorm-results", 0, Long.MAX_VALUE);
  }
}
