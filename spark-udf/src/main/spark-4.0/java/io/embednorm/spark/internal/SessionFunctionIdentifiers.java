package io.embednorm.spark.internal;

import org.apache.spark.sql.catalyst.FunctionIdentifier;

/**
 * Spark 4.0 shim: the identifier of a function in a session's function registry, the one {@code
 * SparkSessionExtensions.injectFunction} registers under. Spark 4.0 keys them by the bare name.
 */
public final class SessionFunctionIdentifiers {
  private SessionFunctionIdentifiers() {}

  public static FunctionIdentifier of(String name) {
    return FunctionIdentifier.apply(name);
  }
}
