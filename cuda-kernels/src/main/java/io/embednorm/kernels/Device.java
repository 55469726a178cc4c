package io.embednorm.kernels;

/** Where an engine runs. */
public enum Device {
  CPU,
  GPU
}
