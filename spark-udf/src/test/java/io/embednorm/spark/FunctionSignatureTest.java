package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Op;
import io.embednorm.spark.internal.FunctionDocumentation;
import io.embednorm.spark.internal.FunctionSignature;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FunctionSignatureTest {
  @Test
  void formsListTheOptionalArguments() {
    assertThat(FunctionSignature.form(Op.RMS_NORM)).isEqualTo("rms_norm(x [, eps [, weight]])");
    assertThat(FunctionSignature.form(Op.LAYER_NORM))
        .isEqualTo("layer_norm(x [, eps [, gamma [, beta]]])");
    assertThat(FunctionSignature.form(Op.SOFTMAX)).isEqualTo("softmax(x)");
    assertThat(FunctionSignature.form(Op.LOG_SOFTMAX)).isEqualTo("log_softmax(x)");
    assertThat(FunctionSignature.form(Op.L2_NORMALIZE)).isEqualTo("l2_normalize(x [, eps])");
  }

  /** Spark's constructor validates group, source and the examples text (with -ea, as here). */
  @ParameterizedTest
  @EnumSource(Op.class)
  void documentationFollowsSparkFormat(Op op) {
    ExpressionInfo info = FunctionDocumentation.describe(op);
    assertThat(info.getName()).isEqualTo(op.sqlName());
    assertThat(info.getUsage()).startsWith(FunctionSignature.form(op) + " - ");
    assertThat(info.getArguments()).startsWith("\n    Arguments:\n").endsWith("\n  ");
    assertThat(info.getExamples()).startsWith("\n    Examples:\n").endsWith("\n  ");
    assertThat(info.getOriginalExamples()).contains("> SELECT _FUNC_(");
    assertThat(info.getSince()).isEqualTo("0.1.0");
  }
}
