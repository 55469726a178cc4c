package io.embednorm.arrow.internal;

/**
 * Where one record batch of an Arrow IPC file keeps the buffers of the column being normalized, as
 * regions of the file, and what its field nodes say.
 *
 * @param index the record batch's number in the file, from 0
 * @param firstRow the index of its first row in the file
 * @param rows its rows
 * @param rowValidity the list's validity bitmap (empty when the writer left it out)
 * @param rowNullCount the list node's null count
 * @param offsets the list's offsets, or null for a FixedSizeList
 * @param elementValidity the element vector's validity bitmap (possibly empty)
 * @param elementNullCount the element node's null count
 * @param elementNullCountPosition where the file holds the element node's null count
 * @param elements the element node's length
 * @param values the element vector's data buffer
 * @param blockStart where the record batch's block (metadata, then body) starts: Arrow's file
 *     reader reads a block into one buffer of its own, so a value at file position {@code p} lies
 *     at {@code p - blockStart} modulo 16 in the record-batch path's memory (whose buffers start on
 *     16-byte boundaries)
 */
record ColumnBatch(
    int index,
    long firstRow,
    int rows,
    Region rowValidity,
    long rowNullCount,
    Region offsets,
    Region elementValidity,
    long elementNullCount,
    long elementNullCountPosition,
    long elements,
    Region values,
    long blockStart) {}
