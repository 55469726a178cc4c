package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.EmbedNormException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The planner against the kernels, without a GPU: it reads the tables the kernels export (as the
 * build printed them), plans a fixed set of batches on three model devices ({@link PlanDigest}),
 * and must pick exactly the launches pinned below, and between them every kernel the fatbin holds
 * and no other. A change to the tuning (tuning.cuh) that moves a launch changes a digest here:
 * update it in the same commit, saying which launches moved and why.
 */
class LaunchPlanTest {
  /**
   * The digests of the planner's decisions, by model device: those of the planner before the tuning
   * moved into the kernels, which had every number in Java.
   */
  private static final Map<String, String> DIGESTS =
      Map.of(
          "a100", "ad432dd9d0539f4265c3d18aa8a035a1ccb4cc6c9b9e3ef28121cf6d5cd149a0",
          "h100", "e59acfb74b669c680fa20c7c6ac5d32c3a43f8cde931ea16fc5ac3689a9d46e9",
          "h200", "b1d96928d05a7c1251daf04959d2ab2b636059ffa7958b42459d04c6bd5726ab");

  private static final Map<String, String> digests = new HashMap<>();
  private static final Set<String> planned = new TreeSet<>();

  /** A model device planned for with the kernels' tuning. */
  record Model(PlanDigest.ModelDevice device, KernelTuning tuning) implements LaunchTarget {
    @Override
    public int computeCapability() {
      return device.computeCapability();
    }

    @Override
    public int multiprocessors() {
      return device.multiprocessors();
    }

    @Override
    public long memoryBandwidth() {
      return device.bandwidth();
    }

    @Override
    public int occupancy(String kernel, int block, int dynamicSharedBytes) {
      return device.occupancy(kernel, block, dynamicSharedBytes);
    }

    @Override
    public int dynamicSharedMemoryLimit(String kernel) {
      return device.dynamicSharedMemoryLimit(kernel);
    }
  }

  @BeforeAll
  static void planEveryBatchOnEveryModelDevice() {
    assumeTrue(KernelDescription.present(), "no kernels in this build (-Dembednorm.cpuOnly)");
    KernelTuning tuning = KernelDescription.tuning();
    for (PlanDigest.ModelDevice device : PlanDigest.DEVICES) {
      Model model = new Model(device, tuning);
      digests.put(
          device.name(),
          PlanDigest.digest(
              (d, op, type, width, rows, vectorizable, ragged) -> {
                LaunchPlan plan =
                    LaunchPlan.planBatch(op, type, width, rows, vectorizable, ragged, model);
                planned.add(plan.kernel());
                return PlanDigest.describe(plan);
              },
              device,
              null));
    }
  }

  @Test
  void everyLaunchIsThePinnedOne() {
    for (PlanDigest.ModelDevice device : PlanDigest.DEVICES) {
      assertThat(digests.get(device.name()))
          .as("the digest of the launches planned on the model %s", device.name())
          .isEqualTo(DIGESTS.get(device.name()));
    }
  }

  @Test
  void thePlannerPicksEveryKernelTheFatbinHoldsAndNoOther() {
    Set<String> built = KernelDescription.kernels();
    assertThat(built).as("kernels built").hasSizeGreaterThan(400);
    assertThat(planned).as("kernels planned but not built").isSubsetOf(built);
    assertThat(built).as("kernels built but never planned").isSubsetOf(planned);
  }

  @Test
  void tablesOfAnotherLayoutAreRefusedNamingTheTable() {
    assumeTrue(KernelDescription.present(), "no kernels in this build (-Dembednorm.cpuOnly)");
    assertThatThrownBy(
            () ->
                KernelTuning.of(
                    name ->
                        name.equals("embednorm_warp_plans")
                            ? new int[7]
                            : KernelDescription.table(name)))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot read the kernels' tuning: embednorm_warp_plans has 7 values, not a multiple"
                + " of 112");
    assertThatThrownBy(
            () ->
                KernelTuning.of(
                    name ->
                        name.equals("embednorm_tuning_scalars")
                            ? new int[] {2, 256, 4000, 90, 64}
                            : KernelDescription.table(name)))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot read the kernels' tuning: its tables have format 2, this jar reads format 1");
  }
}
