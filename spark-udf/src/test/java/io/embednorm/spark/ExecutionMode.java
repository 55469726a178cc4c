package io.embednorm.spark;

import org.apache.spark.sql.SparkSession;

/** The two CPU paths of an expression: interpreted {@code eval} and generated code. */
enum ExecutionMode {
  /** No code generation at all: projections run {@code Expression.eval}. */
  INTERPRETED("false", "NO_CODEGEN"),
  /** Whole-stage code generation, with no silent fallback to the interpreter. */
  CODEGEN("true", "CODEGEN_ONLY");

  private final String wholeStage;
  private final String factoryMode;

  ExecutionMode(String wholeStage, String factoryMode) {
    this.wholeStage = wholeStage;
    this.factoryMode = factoryMode;
  }

  void apply(SparkSession spark) {
    spark.conf().set("spark.sql.codegen.wholeStage", wholeStage);
    spark.conf().set("spark.sql.codegen.factoryMode", factoryMode);
    spark.conf().set("spark.sql.codegen.fallback", "false");
  }
}
