package io.embednorm.arrow;

import io.embednorm.arrow.internal.BackgroundTask;
import io.embednorm.arrow.internal.MappedColumnPlan;
import io.embednorm.arrow.internal.MappedFileNormalization;
import io.embednorm.arrow.internal.MappedGpuNormalization;
import io.embednorm.arrow.internal.MappedPathUnavailable;
import io.embednorm.arrow.internal.OutputFileCheck;
import io.embednorm.arrow.internal.SchemaClassesWarmUp;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.EngineSelection;
import io.embednorm.engine.Engines;
import io.embednorm.engine.HostMemory;
import io.embednorm.engine.Normalization;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Arrow IPC files for the command line: normalize a column of a file into a new file, and read and
 * write whole files. Inputs may be in the IPC file or stream format (told apart by the {@code
 * ARROW1} magic); outputs are always in the file format, written to a temporary file and moved into
 * place only on success (see {@link ArrowOutputFile} for the temporary file and interruptions).
 *
 * <p>A file goes one of two ways ({@link FileNormalizationPath}). The record-batch path reads each
 * batch into Arrow vectors, normalizes the column into a new vector and writes the batch with
 * Arrow's file writer; it takes any input on any device. The mapped path, on the CPU or on a GPU
 * (through its pinned staging slots, the values going from the file to the device and back to the
 * output file with no Arrow vector), takes Arrow IPC files (not streams) that are uncompressed and
 * little-endian, whose column is a {@code FixedSizeList} or {@code List} (offsets from 0) of
 * float16, float32 or float64, whose rows that are not null hold no null elements, and whose rows
 * all fit the weight and bias: it copies the input to the output in the kernel and normalizes the
 * column's values from a mapping of the input straight into the output, with no Arrow allocator.
 * Both write files that Arrow reads back alike: the same schema, rows, validity and value bits.
 */
public final class ArrowFiles {
  private ArrowFiles() {}

  /**
   * Normalizes {@code column} of {@code input} into {@code output} on {@code device}, taking the
   * mapped path where it applies (see {@link ArrowFiles}) and the record-batch path otherwise, with
   * an Arrow allocator of its own (pinned where a GPU runs). The result says which path ran and
   * why. Otherwise as {@link #normalizeFile(Path, Path, String, Normalization, ArrowNormalizer,
   * BufferAllocator, LongConsumer)}: the column is checked before any output is created, and on any
   * failure no output file is left behind.
   *
   * @param progress called after each batch with the rows done so far
   * @throws EmbedNormException as the record-batch path, and "Cannot use device gpu ..." when
   *     {@code gpu} is asked for and no GPU is usable
   */
  public static NormalizeResult normalizeFile(
      Path input,
      Path output,
      String column,
      Normalization normalization,
      DeviceChoice device,
      LongConsumer progress) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(column, "column");
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(device, "device");
    Objects.requireNonNull(progress, "progress");
    SchemaClassesWarmUp.start();
    checkOutput(input, output);
    long started = System.nanoTime();
    EngineSelection selection = FileDevices.select(input, device);
    HostMemory pinned =
        selection.engine().copiesToDevice() && Engines.gpuUnavailableReason() == null
            ? Engines.hostMemory()
            : null;
    return normalizeFile(
        new FileJob(input, output, column, normalization, progress),
        device,
        selection,
        pinned,
        started);
  }

  /**
   * Takes the mapped path where it applies (on a GPU only with pinned memory for its staging slots)
   * and the record-batch path otherwise; closes the selection.
   *
   * @param pinned the memory of the GPU's staging slots, or null
   */
  static NormalizeResult normalizeFile(
      FileJob job,
      DeviceChoice device,
      EngineSelection selection,
      HostMemory pinned,
      long started) {
    boolean gpu = selection.engine().copiesToDevice();
    MappedColumnPlan plan = null;
    String notMapped = "the rows run on the GPU, which has no pinned memory to stage them";
    if (!gpu || pinned != null) {
      try {
        plan = MappedColumnPlan.open(job.input(), job.column(), job.normalization());
      } catch (MappedPathUnavailable unavailable) {
        notMapped = unavailable.reason();
      } catch (RuntimeException | Error failure) {
        selection.close();
        throw failure;
      }
    }
    if (plan != null) {
      return gpu
          ? normalizeMappedOnGpu(plan, selection, pinned, job, started)
          : normalizeMapped(plan, selection, job, started);
    }
    return normalizeWithOwnAllocator(
        selection, device, "the mapped path does not apply: " + notMapped, job);
  }

  /**
   * As {@link #normalizeFile(Path, Path, String, Normalization, DeviceChoice, LongConsumer)}, with
   * {@code column} written as the {@code encoding} of the op's float32 result (docs/SEMANTICS.md,
   * Encodings): {@code FixedSizeBinary} for a fixed-size list column, {@code Binary} for a list
   * column, int8 a {@code Struct<values, scale: float32>}, as {@link
   * ArrowNormalizer#normalizeEncoded} gives them. Always the record-batch path; on a GPU, its fused
   * kernels.
   *
   * @throws EmbedNormException as that method, and "Cannot encode column ..." for a column that is
   *     not float32
   */
  public static NormalizeResult normalizeFileEncoded(
      Path input,
      Path output,
      String column,
      Normalization normalization,
      Encoding encoding,
      DeviceChoice device,
      LongConsumer progress) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(column, "column");
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(encoding, "encoding");
    Objects.requireNonNull(device, "device");
    Objects.requireNonNull(progress, "progress");
    return EncodedFiles.run(input, output, column, normalization, encoding, device, progress);
  }

  /** Runs the mapped path on the GPU; closes the plan and the selection. */
  private static NormalizeResult normalizeMappedOnGpu(
      MappedColumnPlan plan,
      EngineSelection selection,
      HostMemory pinned,
      FileJob job,
      long started) {
    try (selection;
        plan;
        StagingPool staging = StagingPool.withDefaults(pinned)) {
      String fallback =
          MappedGpuNormalization.run(
              plan,
              job.output(),
              job.normalization(),
              selection.engine(),
              staging,
              Runtime.getRuntime().availableProcessors(),
              job.progress());
      return new NormalizeResult(
          plan.rows(),
          plan.batchCount(),
          plan.size(),
          plan.size(),
          ArrowFormat.FILE,
          Duration.ofNanos(System.nanoTime() - started),
          selection.device(),
          selection.reason(),
          FileNormalizationPath.MAPPED,
          plan.description() + ", staged from the file to the GPU and back",
          fallback == null ? 0 : plan.batchCount(),
          fallback);
    } catch (IOException failure) {
      throw ArrowOutputFile.failure(job.output(), failure);
    }
  }

  /** Runs the mapped path; closes the plan and the selection. */
  private static NormalizeResult normalizeMapped(
      MappedColumnPlan plan, EngineSelection selection, FileJob job, long started) {
    try (selection;
        plan) {
      int threads = selection.engine().threads();
      MappedFileNormalization.run(plan, job.output(), job.normalization(), threads, job.progress());
      return new NormalizeResult(
          plan.rows(),
          plan.batchCount(),
          plan.size(),
          plan.size(),
          ArrowFormat.FILE,
          Duration.ofNanos(System.nanoTime() - started),
          selection.device(),
          selection.reason(),
          FileNormalizationPath.MAPPED,
          plan.description(),
          0, // the mapped path runs on the CPU: no batch falls back
          null);
    } catch (IOException failure) {
      throw ArrowOutputFile.failure(job.output(), failure);
    }
  }

  /** Runs the record-batch path with an allocator of its own; closes the selection. */
  private static NormalizeResult normalizeWithOwnAllocator(
      EngineSelection selection, DeviceChoice device, String pathReason, FileJob job) {
    return withOwnNormalizer(
        selection,
        device,
        (normalizer, allocator) -> normalizeBatches(job, normalizer, allocator, pathReason));
  }

  /** Work on a file's batches with a normalizer and the allocator it draws from. */
  interface BatchWork {
    NormalizeResult run(ArrowNormalizer normalizer, BufferAllocator allocator);
  }

  /**
   * Runs {@code work} with a root allocator for {@code device} and a normalizer over {@code
   * selection}, and closes all three (the selection also when the allocator cannot be made).
   */
  static NormalizeResult withOwnNormalizer(
      EngineSelection selection, DeviceChoice device, BatchWork work) {
    BufferAllocator allocator;
    try {
      allocator = PinnedAllocators.newRootAllocatorFor(device, Long.MAX_VALUE);
    } catch (RuntimeException | Error failure) {
      selection.close();
      throw failure;
    }
    try (allocator;
        ArrowNormalizer normalizer =
            new ArrowNormalizer(allocator, selection, ArrowNormalizer.DEFAULT_CHUNK_BYTES)) {
      return work.run(normalizer, allocator);
    }
  }

  /** What to normalize: a column of a file into another file. */
  record FileJob(
      Path input, Path output, String column, Normalization normalization, LongConsumer progress) {}

  /**
   * As {@link #normalizeFile(Path, Path, String, Normalization, ArrowNormalizer, BufferAllocator,
   * LongConsumer)}, without progress.
   */
  public static NormalizeResult normalizeFile(
      Path input,
      Path output,
      String column,
      Normalization normalization,
      ArrowNormalizer normalizer,
      BufferAllocator allocator) {
    return normalizeFile(input, output, column, normalization, normalizer, allocator, rows -> {});
  }

  /**
   * Reads {@code input} batch by batch, normalizes {@code column} of each batch and writes {@code
   * output} with the same schema: the column replaced, every other column passed through unchanged.
   * The column is checked before any output is created; on any failure no output file is left
   * behind and an existing {@code output} stays untouched. {@code output} must be absent or a
   * regular file other than {@code input}: a device, a FIFO, a directory, a link to one of them or
   * the input by any name (hard links included) is refused before anything is read or written. Row
   * numbers in messages count from the start of the file. This always takes the record-batch path,
   * on the normalizer's device.
   *
   * @param allocator where the read and written batches live; it must share its root allocator with
   *     the normalizer's. Everything allocated is freed before this returns or throws.
   * @param progress called after each batch with the rows done so far
   * @throws EmbedNormException "Cannot write output ..." for a refused output, "Cannot read Arrow
   *     file ..." for a missing or unreadable input, "Cannot normalize column ..." for a missing or
   *     unsupported column, the engine's message when a weight or bias does not fit a row, "Cannot
   *     write Arrow file ..." for write failures
   */
  public static NormalizeResult normalizeFile(
      Path input,
      Path output,
      String column,
      Normalization normalization,
      ArrowNormalizer normalizer,
      BufferAllocator allocator,
      LongConsumer progress) {
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(column, "column");
    Objects.requireNonNull(normalization, "normalization");
    Objects.requireNonNull(normalizer, "normalizer");
    Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(progress, "progress");
    checkOutput(input, output);
    if (normalizer.allocator().getRoot() != allocator.getRoot()) {
      throw new EmbedNormException(
          "Cannot normalize file '"
              + input
              + "': the allocator and the normalizer's allocator must share one root allocator");
    }
    return normalizeBatches(
        new FileJob(input, output, column, normalization, progress),
        normalizer,
        allocator,
        "the record-batch path was asked for");
  }

  /**
   * Refuses an output that is no regular file (a device, a FIFO, a directory, a link to one of them
   * or to nothing) or that is the input file by any name, hard links included.
   *
   * @throws EmbedNormException "Cannot write output '&lt;path&gt;': &lt;why&gt;"
   */
  static void checkOutput(Path input, Path output) {
    OutputFileCheck.requireNotInput(input, output);
  }

  private static NormalizeResult normalizeBatches(
      FileJob job, ArrowNormalizer normalizer, BufferAllocator allocator, String pathReason) {
    Path input = job.input();
    Path output = job.output();
    String column = job.column();
    Normalization normalization = job.normalization();
    LongConsumer progress = job.progress();
    long started = System.nanoTime();
    try (ArrowInput source = ArrowInput.open(input, allocator)) {
      VectorSchemaRoot batch = source.root();
      int columnIndex =
          EmbeddingColumn.require(
              batch.getSchema().getFields(), column, "the file '" + input + "'");
      try (ArrowOutputFile target =
              ArrowOutputFile.create(output, batch.getSchema(), allocator, source.dictionaries());
          BackgroundWriter writer = new BackgroundWriter(target)) {
        NormalizationMetrics metrics = new NormalizationMetrics();
        long rows = 0;
        int batches = 0;
        while (source.loadNextBatch()) {
          VectorSchemaRoot normalizedBatch = VectorSchemaRoot.create(batch.getSchema(), allocator);
          try (FieldVector normalized =
              normalizer.normalize(
                  batch.getVector(columnIndex), List.of(normalization), metrics, rows)) {
            moveInto(batch, columnIndex, normalized, normalizedBatch);
          } catch (RuntimeException | Error failure) {
            normalizedBatch.close();
            throw failure;
          }
          // The first batch is written here, before the reader moves on: the writer's start
          // writes the dictionaries, which the reader holds.
          if (batches == 0) {
            try (normalizedBatch) {
              target.write(normalizedBatch);
            }
          } else {
            writer.write(normalizedBatch);
          }
          rows += batch.getRowCount();
          batches++;
          progress.accept(rows);
        }
        writer.finish();
        long outputBytes = target.commit();
        return new NormalizeResult(
            rows,
            batches,
            source.size(),
            outputBytes,
            source.format(),
            Duration.ofNanos(System.nanoTime() - started),
            normalizer.device(),
            normalizer.deviceReason(),
            FileNormalizationPath.RECORD_BATCH,
            pathReason,
            metrics.cpuFallbackCalls(),
            metrics.cpuFallbackReason());
      }
    }
  }

  /**
   * Reads every batch of an Arrow IPC file or stream into its own root allocated from {@code
   * allocator}. The caller closes every returned root. Dictionary-encoded columns come back as
   * their indices.
   *
   * @throws EmbedNormException "Cannot read Arrow file '&lt;path&gt;': &lt;why&gt;"
   */
  public static List<VectorSchemaRoot> readFile(Path input, BufferAllocator allocator) {
    List<VectorSchemaRoot> batches = new ArrayList<>();
    try (ArrowInput source = ArrowInput.open(input, allocator)) {
      VectorSchemaRoot batch = source.root();
      while (source.loadNextBatch()) {
        VectorSchemaRoot copy = VectorSchemaRoot.create(batch.getSchema(), allocator);
        batches.add(copy);
        moveInto(batch, -1, null, copy);
      }
      return batches;
    } catch (RuntimeException | Error failure) {
      batches.forEach(VectorSchemaRoot::close);
      throw failure;
    }
  }

  /**
   * Writes {@code batches} (at least one, all with the first one's schema) as an Arrow IPC file,
   * sharing their buffers; the batches stay the caller's. Replaces {@code output} atomically.
   *
   * @param allocator must share its root allocator with the batches' vectors
   * @return the size of the file in bytes
   */
  public static long writeFile(
      Path output, BufferAllocator allocator, VectorSchemaRoot... batches) {
    if (batches.length == 0) {
      throw new EmbedNormException(
          "Cannot write Arrow file '" + output + "': no batches given to take the schema from");
    }
    try (ArrowOutputFile target =
        ArrowOutputFile.create(output, batches[0].getSchema(), allocator)) {
      for (VectorSchemaRoot batch : batches) {
        target.write(batch);
      }
      return target.commit();
    }
  }

  /**
   * Writes batches to an {@link ArrowOutputFile} on a thread of its own, one at a time, so that
   * writing batch n into the page cache overlaps reading and normalizing batch n + 1. At most one
   * batch waits or is being written; a write failure comes back from the next call.
   */
  private static final class BackgroundWriter implements AutoCloseable {
    private final ArrowOutputFile target;
    private final BackgroundTask thread = new BackgroundTask("embednorm-arrow-writer");

    BackgroundWriter(ArrowOutputFile target) {
      this.target = target;
    }

    /** Takes {@code batch} over: writes it, then closes it, once the previous batch is written. */
    void write(VectorSchemaRoot batch) {
      try {
        thread.finish();
      } catch (RuntimeException | Error thrown) {
        batch.close();
        throw thrown;
      }
      thread.start(
          () -> {
            try (batch) {
              target.write(batch);
            }
          });
    }

    /** Waits for the batch being written, if any, and rethrows its failure. */
    void finish() {
      thread.finish();
    }

    /** Waits for a batch still being written (its failure no longer matters) and stops. */
    @Override
    public void close() {
      thread.close();
    }
  }

  /**
   * Transfers every vector of {@code from} into the same column of {@code to}, taking {@code
   * replacement} instead for column {@code replacedIndex}, and sets the row count.
   */
  private static void moveInto(
      VectorSchemaRoot from, int replacedIndex, FieldVector replacement, VectorSchemaRoot to) {
    for (int index = 0; index < from.getFieldVectors().size(); index++) {
      FieldVector vector = index == replacedIndex ? replacement : from.getVector(index);
      vector.makeTransferPair(to.getVector(index)).transfer();
    }
    to.setRowCount(from.getRowCount());
  }
}
