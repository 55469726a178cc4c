package io.embednorm.engine;

import java.util.function.Function;

/**
 * One internal switch of the engines: a JVM system property for tests and benchmarks, with its
 * default and what it does. Users never need one; every switch is listed in {@link
 * InternalSwitches} and in docs/CONFIGURATION.md, "Internal switches".
 *
 * @param <T> the value's type
 */
public final class InternalSwitch<T> {
  private final String name;
  private final T defaultValue;
  private final String description;
  private final Function<String, T> parser;

  InternalSwitch(String name, T defaultValue, String description, Function<String, T> parser) {
    this.name = name;
    this.defaultValue = defaultValue;
    this.description = description;
    this.parser = parser;
  }

  /** The system property, e.g. {@code embednorm.gpu.lanes}. */
  public String name() {
    return name;
  }

  public T defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }

  /**
   * The property's value now, or the default where it is unset.
   *
   * @throws EmbedNormException when the value does not parse
   */
  public T value() {
    String text = System.getProperty(name);
    if (text == null || text.isBlank()) {
      return defaultValue;
    }
    try {
      return parser.apply(text.trim());
    } catch (RuntimeException failure) {
      throw new EmbedNormException(
          "Cannot read internal switch " + name + ": '" + text + "' is not a valid value", failure);
    }
  }

  @Override
  public String toString() {
    return name + " (default " + defaultValue + "): " + description;
  }
}
