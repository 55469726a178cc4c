package io.embednorm.spark.internal;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry$;

/**
 * Spark 4.2 shim: the identifier of a function in a session's function registry, the one {@code
 * SparkSessionExtensions.injectFunction} registers under. Spark 4.2 keys them as {@code
 * system.builtin.<name>} and refuses to look up a bare name; Spark's own helper is {@code
 * private[sql]} in Scala, public to Java.
 */
public final class SessionFunctionIdentifiers {
  private SessionFunctionIdentifiers() {}

  public static FunctionIdentifier of(String name) {
    return FunctionRegistry$.MODULE$.builtinFunctionIdentifier(name);
  }
}
