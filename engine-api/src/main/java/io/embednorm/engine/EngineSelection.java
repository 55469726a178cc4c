package io.embednorm.engine;

/**
 * The engine that a {@link DeviceChoice} resolved to and why, e.g. "auto chose cpu: ...". Closing
 * the selection closes the engine.
 */
public record EngineSelection(NormalizationEngine engine, String reason) implements AutoCloseable {

  public Device device() {
    return engine.device();
  }

  @Override
  public void close() {
    engine.close();
  }
}
