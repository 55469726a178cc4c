package io.embednorm.arrow;

import io.embednorm.engine.Device;
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
 * @param device where the rows were normalized
 * @param deviceReason why there, e.g. {@code cpu was requested}
 * @param path how the file was gone through
 * @param pathReason why that way, e.g. {@code FixedSizeList<float32>(768) in 43 uncompressed record
 *     batches} or {@code the input is not in the Arrow IPC file format}
 * @param cpuFallbackBatches batches that failed on the GPU and ran again, whole, on the CPU engine
 *     (their rows are the CPU engine's; docs/SEMANTICS.md, Devices)
 * @param cpuFallbackReason why the first of them left the GPU, or null when none did
 */
public record NormalizeResult(
    long rows,
    int batches,
    long inputBytes,
    long outputBytes,
    ArrowFormat inputFormat,
    Duration elapsed,
    Device device,
    String deviceReason,
    FileNormalizationPath path,
    String pathReason,
    long cpuFallbackBatches,
    String cpuFallbackReason) {}
