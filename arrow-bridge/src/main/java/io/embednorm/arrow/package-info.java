/**
 * embednorm for Arrow Java: {@link io.embednorm.arrow.ArrowNormalizer} normalizes an embedding
 * column ({@code FixedSizeList} or {@code List} of float32, float64 or float16) into a new,
 * caller-owned vector, reading and writing the vectors' buffers in place; {@link
 * io.embednorm.arrow.ArrowFiles} does the same for Arrow IPC files, batch by batch.
 *
 * <p>Ownership: whoever allocates a vector closes it. Results come from the allocator given to
 * {@code ArrowNormalizer.create}; inputs are never modified or closed.
 */
package io.embednorm.arrow;
