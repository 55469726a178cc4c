package io.embednorm.arrow;

import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuSettings;
import io.embednorm.engine.NormalizationEngine;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The engines of one normalizer and why: the CPU engine, or one GPU engine per device of a list, in
 * the list's order, each GPU with its pool of pinned staging slots. Owns the engines and the pools:
 * {@link #close()} closes them all.
 */
final class DeviceEngines implements AutoCloseable {
  private final List<NormalizationEngine> engines;
  private final List<Integer> gpuOrdinals;
  private final String reason;

  /** Each GPU's staging slots, null where the process has no pinned memory. */
  private final StagingPool[] staging;

  private DeviceEngines(
      List<NormalizationEngine> engines,
      List<Integer> gpuOrdinals,
      String reason,
      StagingPool[] staging) {
    this.engines = List.copyOf(engines);
    this.gpuOrdinals = List.copyOf(gpuOrdinals);
    this.reason = reason;
    this.staging = staging.clone();
  }

  private DeviceEngines(
      List<NormalizationEngine> engines, List<Integer> gpuOrdinals, String reason) {
    this(engines, gpuOrdinals, reason, stagingFor(gpuOrdinals.size()));
  }

  /** The engine of {@code selection}, on GPU {@code ordinal} when it is a GPU engine. */
  static DeviceEngines of(EngineSelection selection, int ordinal) {
    boolean gpu = selection.engine().copiesToDevice();
    return new DeviceEngines(
        List.of(selection.engine()), gpu ? List.of(ordinal) : List.of(), selection.reason());
  }

  /**
   * GPU engines taken as GPUs 0, 1, ... in order (tests' engines without CUDA), with the pinned
   * memory of this process's GPU engine where it has one.
   */
  static DeviceEngines ofGpus(List<NormalizationEngine> engines, String reason) {
    return new DeviceEngines(engines, IntStream.range(0, engines.size()).boxed().toList(), reason);
  }

  /**
   * GPU engines taken as GPUs 0, 1, ... in order, staging through {@code staging} (one pool a GPU,
   * owned from here on; tests' engines and host memory without CUDA).
   */
  static DeviceEngines ofGpus(
      List<NormalizationEngine> engines, String reason, List<StagingPool> staging) {
    return new DeviceEngines(
        engines,
        IntStream.range(0, engines.size()).boxed().toList(),
        reason,
        staging.toArray(new StagingPool[0]));
  }

  /** A pool of staging slots per GPU, over the process's pinned memory; none without it. */
  private static StagingPool[] stagingFor(int gpus) {
    StagingPool[] pools = new StagingPool[gpus];
    if (Engines.gpuUnavailableReason() == null) {
      for (int gpu = 0; gpu < gpus; gpu++) {
        pools[gpu] = StagingPool.withDefaults(Engines.hostMemory());
      }
    }
    return pools;
  }

  /**
   * The engines for {@code choice} on the GPUs {@code ordinals} names (null: every GPU of this
   * process), each with {@code gpu}'s limit of sessions. {@code cpu}, or {@code auto} without a
   * usable GPU, gives the CPU engine alone; the caller closes the result.
   *
   * @throws EmbedNormException when a GPU is to be used and the list names one this host lacks, or
   *     {@code gpu} is asked for and no GPU is usable, or a listed GPU's engine cannot start
   */
  static DeviceEngines open(DeviceChoice choice, GpuSettings gpu, List<Integer> ordinals) {
    if (choice == DeviceChoice.CPU || Engines.gpuUnavailableReason() != null) {
      return of(Engines.select(choice, gpu), gpu.ordinal());
    }
    int count = Engines.gpuCount();
    List<Integer> listed = ordinals == null ? IntStream.range(0, count).boxed().toList() : ordinals;
    checkOnHost(listed, count);
    EngineSelection first = Engines.select(choice, gpu.withOrdinal(listed.get(0)));
    if (first.device() != Device.GPU || listed.size() == 1) {
      return of(first, listed.get(0));
    }
    List<NormalizationEngine> opened = new ArrayList<>(List.of(first.engine()));
    try {
      for (int ordinal : listed.subList(1, listed.size())) {
        opened.add(Engines.select(DeviceChoice.GPU, gpu.withOrdinal(ordinal)).engine());
      }
    } catch (RuntimeException | Error failure) {
      opened.forEach(NormalizationEngine::close);
      throw failure;
    }
    String chose = choice == DeviceChoice.GPU ? "gpu was requested: " : "auto chose ";
    return new DeviceEngines(opened, listed, chose + describe(opened));
  }

  /**
   * Checks a list of GPU ordinals as given: not empty, none negative, none twice.
   *
   * @throws EmbedNormException naming the list and what is wrong with it
   */
  static List<Integer> checkList(List<Integer> ordinals) {
    List<Integer> list = List.copyOf(Objects.requireNonNull(ordinals, "ordinals"));
    if (list.isEmpty()) {
      throw new EmbedNormException(
          "Cannot use GPUs []: the list is empty (name at least one GPU, or all GPUs)");
    }
    Set<Integer> seen = new HashSet<>();
    for (int ordinal : list) {
      if (ordinal < 0) {
        throw new EmbedNormException("Cannot use GPUs " + list + ": ordinals start at 0");
      }
      if (!seen.add(ordinal)) {
        throw new EmbedNormException(
            "Cannot use GPUs " + list + ": GPU " + ordinal + " is listed twice");
      }
    }
    return list;
  }

  /**
   * Checks that this host has every GPU of {@code ordinals}, of {@code count}.
   *
   * @throws EmbedNormException e.g. {@code Cannot use GPUs [0, 3]: this host has 2}
   */
  static void checkOnHost(List<Integer> ordinals, int count) {
    for (int ordinal : ordinals) {
      if (ordinal >= count) {
        throw new EmbedNormException("Cannot use GPUs " + ordinals + ": this host has " + count);
      }
    }
  }

  Device device() {
    return engines.get(0).device();
  }

  /** Why these engines, e.g. {@code auto chose gpu 0 (...), gpu 1 (...)}. */
  String reason() {
    return reason;
  }

  /** What runs, every device named, e.g. {@code gpu 0 (...), gpu 1 (...)}. */
  String description() {
    return describe(engines);
  }

  /** The engine of the first device: the CPU engine, or the first GPU's. */
  NormalizationEngine first() {
    return engines.get(0);
  }

  /** The GPUs in list order, or none when the engine is the CPU's. */
  List<GpuDevice> gpus() {
    List<GpuDevice> gpus = new ArrayList<>();
    for (int index = 0; index < gpuOrdinals.size(); index++) {
      gpus.add(new GpuDevice(gpuOrdinals.get(index), engines.get(index), staging[index]));
    }
    return gpus;
  }

  /**
   * Closes every engine and staging pool, even when one fails to close (that failure is thrown
   * after).
   */
  @Override
  public void close() {
    for (StagingPool pool : staging) {
      if (pool != null) {
        pool.close();
      }
    }
    RuntimeException failure = null;
    for (NormalizationEngine engine : engines) {
      try {
        engine.close();
      } catch (RuntimeException closing) {
        if (failure == null) {
          failure = closing;
        } else {
          failure.addSuppressed(closing);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static String describe(List<NormalizationEngine> engines) {
    return engines.stream().map(NormalizationEngine::description).collect(Collectors.joining(", "));
  }
}
