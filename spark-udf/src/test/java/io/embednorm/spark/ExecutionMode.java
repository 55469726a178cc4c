package io.embednorm.spark;

import org.apache.spark.sql.SparkSession;

/**
 * The paths of an expression: the CPU row path interpreted ({@code eval}) or as generated code, and
 * the columnar operator (on this machine's device, the CPU engine without a GPU).
 */
enum ExecutionMode {
  /** No code generation at all: projections run {@code Expression.eval}. */
  INTERPRETED("false", "NO_CODEGEN", "false"),
  /** Whole-stage code generation, with no silent fallback to the interpreter. */
  CODEGEN("true", "CODEGEN_ONLY", "false"),
  /** The columnar operator, where the projection is eligible (needs the extension). */
  COLUMNAR("true", "CODEGEN_ONLY", "true");

  private final String wholeStage;
  private final String factoryMode;
  private final String columnar;

  ExecutionMode(String wholeStage, String factoryMode, String columnar) {
    this.wholeStage = wholeStage;
    this.factoryMode = factoryMode;
    this.columnar = columnar;
  }

  void apply(SparkSession spark) {
    spark.conf().set("spark.sql.codegen.wholeStage", wholeStage);
    spark.conf().set("spark.sql.codegen.factoryMode", factoryMode);
    spark.conf().set("spark.sql.codegen.fallback", "false");
    spark.conf().set(EmbedNormConfig.COLUMNAR.name(), columnar);
  }
}
