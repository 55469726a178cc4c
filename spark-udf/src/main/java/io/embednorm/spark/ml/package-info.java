/**
 * Spark ML stages: {@link io.embednorm.spark.ml.EmbeddingNormalizer} normalizes an embedding column
 * ({@code array<float>}, {@code array<double>} or {@code Vector}) inside a Pipeline, with
 * save/load.
 */
package io.embednorm.spark.ml;
