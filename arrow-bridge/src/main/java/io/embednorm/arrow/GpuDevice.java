package io.embednorm.arrow;

import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.NormalizationEngine;

/**
 * A GPU a normalizer spreads chunks over: its CUDA ordinal (metrics count chunks by it), its engine
 * and its pinned staging slots for memory that is not pinned (null where the process has no pinned
 * memory: the driver then stages), all owned by the normalizer.
 */
record GpuDevice(int ordinal, NormalizationEngine engine, StagingPool staging) {}
