package io.embednorm.arrow;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Where the element buffer of a result of {@link ArrowNormalizer#normalize(
 * org.apache.arrow.vector.FieldVector, java.util.List, NormalizationMetrics, ResultMemory)} comes
 * from, for a caller that reuses memory across calls: a large buffer allocated afresh per call is
 * fresh pages, whose first touch by the engine costs about as much as the normalization on a CPU.
 */
@FunctionalInterface
public interface ResultMemory {
  /**
   * A buffer of {@code bytes} accounted to {@code allocator} (the normalizer's), whose contents
   * need not be zero. The result owns it: closing the result releases it.
   */
  ArrowBuf elements(BufferAllocator allocator, long bytes);
}
