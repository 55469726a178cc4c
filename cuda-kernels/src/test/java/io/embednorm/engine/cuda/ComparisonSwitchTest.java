package io.embednorm.engine.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.EmbedNormException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ComparisonSwitchTest {
  private static final String NAME = "embednorm.gpu.comparisonSwitchTest";

  @AfterEach
  void clear() {
    System.clearProperty(NAME);
  }

  @Test
  void unsetGivesThePlannedValue() {
    assertThat(ComparisonSwitch.read(NAME, "planned", "perRow", "resident")).isEqualTo("planned");
    assertThat(ComparisonSwitch.readBoolean(NAME, true)).isTrue();
    assertThat(ComparisonSwitch.readBoolean(NAME, false)).isFalse();
  }

  @Test
  void listedValuesAreTakenAsGiven() {
    System.setProperty(NAME, "resident");
    assertThat(ComparisonSwitch.read(NAME, "planned", "perRow", "resident")).isEqualTo("resident");
    System.setProperty(NAME, "planned");
    assertThat(ComparisonSwitch.read(NAME, "planned", "perRow", "resident")).isEqualTo("planned");
    System.setProperty(NAME, "false");
    assertThat(ComparisonSwitch.readBoolean(NAME, true)).isFalse();
  }

  @Test
  void aMisspeltValueNamesThePropertyAndTheAcceptedValues() {
    System.setProperty(NAME, "perrow");
    assertThatThrownBy(() -> ComparisonSwitch.read(NAME, "planned", "perRow", "resident"))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot read -Dembednorm.gpu.comparisonSwitchTest=perrow:"
                + " expected planned or one of perRow, resident");
    System.setProperty(NAME, "TRUE");
    assertThatThrownBy(() -> ComparisonSwitch.readBoolean(NAME, true))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageContaining("=TRUE: expected true or one of false");
  }
}
