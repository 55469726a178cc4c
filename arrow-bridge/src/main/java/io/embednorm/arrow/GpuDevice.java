package io.embednorm.arrow;

import io.embednorm.engine.NormalizationEngine;

/**
 * A GPU a normalizer spreads chunks over: its CUDA ordinal (metrics count chunks by it) and its
 * engine, which the normalizer owns.
 */
record GpuDevice(int ordinal, NormalizationEngine engine) {}
