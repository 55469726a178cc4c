/**
 * embednorm for Spark: the SQL functions ({@link io.embednorm.spark.EmbedNormExtensions}), the
 * DataFrame functions ({@link io.embednorm.spark.EmbedNormFunctions}) that normalize embedding
 * columns, and the typed {@code spark.embednorm.*} settings ({@link
 * io.embednorm.spark.EmbedNormConfig}, listed in docs/CONFIGURATION.md).
 */
package io.embednorm.spark;
