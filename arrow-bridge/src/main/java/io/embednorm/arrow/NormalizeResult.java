package io.embednorm.arrow;

import java.time.Duration;

/**
 * What {@link ArrowFiles#normalizeFile} did.
 *
 * @param rows rows normalized, over all batches (null rows included)
 * @param batches record batches read and written
 * @param inputBytes size of the input file
 * @param outputBytes size of the output file
 * @param inputFormat the input's IPC format (the output is always the file format)
 * @param elapsed wall time from opening the input to moving the output into place
 */
public record NormalizeResult(
    long rows,
    int batches,
    long inputBytes,
    long outputBytes,
    ArrowFormat inputFormat,
    Duration elapsed) {}
