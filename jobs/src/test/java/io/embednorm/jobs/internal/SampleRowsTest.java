package io.embednorm.jobs.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SampleRowsTest {
  @Test
  void rowsDependOnSeedAndIdOnly() {
    assertThat(SampleRows.row(7, 123, 16)).containsExactly(SampleRows.row(7, 123, 16));
    assertThat(SampleRows.row(7, 123, 16)).isNotEqualTo(SampleRows.row(7, 124, 16));
    assertThat(SampleRows.row(7, 123, 16)).isNotEqualTo(SampleRows.row(8, 123, 16));
  }

  @Test
  void rowsAreNotAlreadyNormalized() {
    float[] row = SampleRows.row(42, 0, 4096);
    double squares = 0;
    for (float value : row) {
      squares += value * (double) value;
    }
    assertThat(squares / row.length).isNotCloseTo(1.0, org.assertj.core.data.Offset.offset(0.01));
  }
}
