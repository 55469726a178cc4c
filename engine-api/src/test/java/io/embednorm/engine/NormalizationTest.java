package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Normalization refuses parameters that would silently turn results into NaN or infinity. */
class NormalizationTest {

  @Test
  void refusesNonFiniteWeightAndBias() {
    Normalization layerNorm = Normalization.of(Op.LAYER_NORM);
    for (double bad :
        new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
      assertThatThrownBy(() -> layerNorm.withWeight(new double[] {1, 2, bad}))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot configure layer_norm: weight element at index 2 is "
                  + bad
                  + "; it must be a finite number");
      assertThatThrownBy(() -> layerNorm.withBias(new double[] {bad}))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot configure layer_norm: bias element at index 0 is "
                  + bad
                  + "; it must be a finite number");
    }
    assertThat(layerNorm.withWeight(new double[] {-Double.MAX_VALUE, 0, 1e300}).weight())
        .containsExactly(-Double.MAX_VALUE, 0, 1e300);
  }

  @Test
  void messagesUseTheCallersNames() {
    Normalization named = Normalization.of(Op.LAYER_NORM).withParameterNames("gamma", "beta");
    assertThatThrownBy(() -> named.withBias(new double[] {Double.NaN}))
        .hasMessage(
            "Cannot configure layer_norm: beta element at index 0 is NaN; it must be a finite number");
    Normalization fitted = named.withWeight(new double[5]).withBias(new double[5]);
    assertThatThrownBy(() -> fitted.checkWidth(17, 768))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot apply layer_norm to row 17: gamma has 5 elements but the row has 768");
    assertThat(fitted)
        .isEqualTo(
            Normalization.of(Op.LAYER_NORM).withWeight(new double[5]).withBias(new double[5]));
  }

  @Test
  void refusesWeightBeyondFloat32ForFloat32Rows() {
    Normalization large = Normalization.of(Op.RMS_NORM).withWeight(new double[] {1, 1e39});
    assertThat(large.weight()).containsExactly(1, 1e39);
    assertThatThrownBy(large::floatWeight)
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot apply rms_norm to float32 rows: weight element at index 1 is 1.0E39, beyond"
                + " the float32 range");
  }

  @Test
  void lpNormalizeTakesPOneTwoOrInfinity() {
    assertThat(Op.lpNormalize(1)).isEqualTo(Op.L1_NORMALIZE);
    assertThat(Op.lpNormalize(2.0)).isEqualTo(Op.L2_NORMALIZE);
    assertThat(Op.lpNormalize(Double.POSITIVE_INFINITY)).isEqualTo(Op.LINF_NORMALIZE);
    for (Op op : new Op[] {Op.L1_NORMALIZE, Op.L2_NORMALIZE, Op.LINF_NORMALIZE}) {
      assertThat(Op.lpNormalize(op.normOrder())).isEqualTo(op);
      assertThat(op.defaultEpsilon()).isEqualTo(1e-12);
    }
    assertThat(Op.RMS_NORM.normOrder()).isNaN();
    for (double bad : new double[] {0, 1.5, 3, -1, Double.NEGATIVE_INFINITY, Double.NaN}) {
      assertThatThrownBy(() -> Op.lpNormalize(bad))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot configure lp_normalize: p must be 1, 2 or infinity, got " + bad);
    }
    assertThat(Op.fromName("LINF_normalize")).isEqualTo(Op.LINF_NORMALIZE);
  }
}
