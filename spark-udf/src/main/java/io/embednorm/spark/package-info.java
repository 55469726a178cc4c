/**
 * embednorm for Spark: the SQL functions ({@link io.embednorm.spark.EmbedNormExtensions}) and the
 * DataFrame functions ({@link io.embednorm.spark.EmbedNormFunctions}) that normalize embedding
 * columns.
 */
package io.embednorm.spark;
