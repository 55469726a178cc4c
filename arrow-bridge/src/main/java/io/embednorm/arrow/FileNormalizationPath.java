package io.embednorm.arrow;

/** How {@link ArrowFiles#normalizeFile} went through a file. */
public enum FileNormalizationPath {
  /**
   * The path for Arrow IPC files whose column it can take (see {@link ArrowFiles}): the input
   * copied in the kernel, the column's values normalized from the input straight into the output
   * (on a GPU through its pinned staging slots); no Arrow vectors.
   */
  MAPPED,

  /**
   * Record batches read into Arrow vectors, normalized into new vectors and written by Arrow's file
   * writer: any input, any device.
   */
  RECORD_BATCH
}
