package io.embednorm.engine;

/** Where an engine runs. */
public enum Device {
  CPU,
  GPU
}
