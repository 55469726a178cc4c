package io.embednorm.jobs;

/**
 * What a run of the normalize job did: rows written, where, the wall-clock seconds of the
 * read-normalize-write pass, and where the work ran and why.
 */
public record JobReport(long rows, String output, double seconds, String device) {

  /** Rows per second of the whole pass (read, normalize, write). */
  public double rowsPerSecond() {
    return seconds > 0 ? rows / seconds : 0;
  }
}
