package io.embednorm.engine;

import java.util.Locale;

/**
 * What the user asked for: {@code auto} takes the GPU when one is usable and falls back to the CPU
 * saying why; {@code gpu} without a usable GPU is an error that says why; {@code cpu} is the CPU.
 */
public enum DeviceChoice {
  AUTO,
  CPU,
  GPU;

  /** Parses {@code auto}, {@code cpu} or {@code gpu} (case-insensitive). */
  public static DeviceChoice fromName(String name) {
    String wanted = name == null ? "" : name.trim().toUpperCase(Locale.ROOT);
    for (DeviceChoice choice : values()) {
      if (choice.name().equals(wanted)) {
        return choice;
      }
    }
    throw new EmbedNormException(
        "Cannot parse device '" + name + "': expected one of auto, cpu, gpu");
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
