package io.embednorm.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.kernels.cpu.CpuEngine;
import org.junit.jupiter.api.Test;

class EnginesTest {

  @Test
  void cpuGivesTheCpuEngineAndSaysItWasRequested() {
    try (EngineSelection selection = Engines.select(DeviceChoice.CPU)) {
      assertThat(selection.engine()).isInstanceOf(CpuEngine.class);
      assertThat(selection.device()).isEqualTo(Device.CPU);
      assertThat(selection.reason()).contains("cpu").contains("requested");
    }
  }

  @Test
  void gpuWithoutAUsableGpuIsAnErrorThatSaysWhy() {
    assertThatThrownBy(() -> Engines.select(DeviceChoice.GPU))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageStartingWith("Cannot use device gpu: ")
        .hasMessageContaining(Engines.NO_GPU_REASON);
  }

  @Test
  void autoFallsBackToTheCpuAndSaysWhy() {
    try (EngineSelection selection = Engines.select(DeviceChoice.AUTO)) {
      assertThat(selection.device()).isEqualTo(Device.CPU);
      assertThat(selection.reason()).isEqualTo("auto chose cpu: " + Engines.NO_GPU_REASON);
    }
  }

  @Test
  void theSelectedEngineNormalizes() {
    try (EngineSelection selection = Engines.select(DeviceChoice.fromName(" Auto "))) {
      java.nio.ByteBuffer data =
          java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      data.putFloat(0, 3f).putFloat(4, 4f);
      selection
          .engine()
          .normalize(
              Normalization.of(Op.L2_NORMALIZE),
              RowBatch.fixedWidth(ElementType.FLOAT32, 1, 2, data, data));
      assertThat(data.getFloat(0)).isEqualTo(0.6f);
      assertThat(data.getFloat(4)).isEqualTo(0.8f);
    }
  }
}
