package io.embednorm.spark.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Device;
import org.junit.jupiter.api.Test;

/**
 * The executor's placement line where this JVM cannot show it: on a GPU, and on the scalar kernels
 * for want of the Vector API module (the cluster tests' executors show that one for real).
 */
class DevicePolicyPlacementTest {
  @Test
  void aGpuExecutorNamesItsDeviceAndTheSetting() {
    String gpu = "gpu 0 (NVIDIA H100 80GB HBM3, sm_90)";
    assertThat(DevicePolicy.executorPlacement("3", Device.GPU, gpu, "auto chose " + gpu, true))
        .isEqualTo(
            "embednorm: executor 3 normalizes on gpu 0 (NVIDIA H100 80GB HBM3, sm_90)"
                + " (spark.embednorm.device=auto)");
    assertThat(
            DevicePolicy.executorPlacement("3", Device.GPU, gpu, "gpu was requested: " + gpu, true))
        .endsWith("sm_90) (spark.embednorm.device=gpu)");
  }

  @Test
  void scalarKernelsForWantOfTheVectorModuleSayHowToGetSimd() {
    assertThat(
            DevicePolicy.executorPlacement(
                "1",
                Device.CPU,
                "cpu (java scalar)",
                "auto chose cpu: the CUDA driver library (libcuda.so.1) could not be loaded",
                false))
        .isEqualTo(
            "embednorm: executor 1 normalizes on cpu (java scalar) (auto chose cpu: the CUDA"
                + " driver library (libcuda.so.1) could not be loaded): scalar kernels, since"
                + " jdk.incubator.vector is not loaded; add --add-modules=jdk.incubator.vector to"
                + " spark.executor.extraJavaOptions for the SIMD ones");
  }
}
