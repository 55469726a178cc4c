/** Helpers of the Spark integration; not a public API. */
package io.embednorm.spark.internal;
