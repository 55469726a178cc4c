package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.embednorm.engine.Device;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.cpu.CpuEngine;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Device choice through the engines found on the class path (both are, in this module's tests). */
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
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why != null, "a GPU is usable here");
    assertThatThrownBy(() -> Engines.select(DeviceChoice.GPU))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot use device gpu: " + why + "; use device auto or cpu");
  }

  @Test
  void autoFallsBackToTheCpuAndSaysWhy() {
    String why = Engines.gpuUnavailableReason();
    assumeTrue(why != null, "a GPU is usable here");
    assertThat(why).isNotBlank();
    try (EngineSelection selection = Engines.select(DeviceChoice.AUTO)) {
      assertThat(selection.device()).isEqualTo(Device.CPU);
      assertThat(selection.reason()).isEqualTo("auto chose cpu: " + why);
    }
  }

  @Test
  @Tag("gpu")
  void autoAndGpuChooseTheGpuWhereOneIsUsable() {
    assumeTrue(Engines.gpuUnavailableReason() == null, "no usable GPU here");
    try (EngineSelection auto = Engines.select(DeviceChoice.AUTO);
        EngineSelection gpu = Engines.select(DeviceChoice.GPU)) {
      assertThat(auto.device()).isEqualTo(Device.GPU);
      assertThat(auto.reason()).startsWith("auto chose gpu 0 (");
      assertThat(gpu.device()).isEqualTo(Device.GPU);
      assertThat(gpu.reason()).startsWith("gpu was requested: gpu 0 (");
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
