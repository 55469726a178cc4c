package io.embednorm.arrow;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.Normalization;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * {@link ArrowFiles#normalizeFileEncoded}: the record-batch path with the column replaced by its
 * encoding ({@link ArrowNormalizer#normalizeEncoded}), so the output schema is the input's with
 * that one field changed. The output file is created once the first batch's encoded field is known.
 */
final class EncodedFiles {
  private EncodedFiles() {}

  static NormalizeResult run(
      Path input,
      Path output,
      String column,
      Normalization normalization,
      Encoding encoding,
      DeviceChoice device,
      LongConsumer progress) {
    ArrowFiles.checkOutput(input, output);
    return ArrowFiles.withOwnNormalizer(
        FileDevices.select(input, device),
        device,
        (normalizer, allocator) ->
            encodeBatches(
                input, output, column, normalization, encoding, normalizer, allocator, progress));
  }

  private static NormalizeResult encodeBatches(
      Path input,
      Path output,
      String column,
      Normalization normalization,
      Encoding encoding,
      ArrowNormalizer normalizer,
      BufferAllocator allocator,
      LongConsumer progress) {
    long started = System.nanoTime();
    NormalizationMetrics metrics = new NormalizationMetrics();
    ArrowOutputFile target = null;
    try (ArrowInput source = ArrowInput.open(input, allocator)) {
      VectorSchemaRoot batch = source.root();
      int columnIndex =
          EmbeddingColumn.require(
              batch.getSchema().getFields(), column, "the file '" + input + "'");
      long rows = 0;
      int batches = 0;
      boolean loaded;
      // An empty file still gets the encoded schema: its empty column is encoded once.
      while ((loaded = source.loadNextBatch()) || batches == 0) {
        try (VectorSchemaRoot encoded =
            encodedBatch(batch, columnIndex, normalization, encoding, normalizer, metrics)) {
          if (target == null) {
            target =
                ArrowOutputFile.create(
                    output, encoded.getSchema(), allocator, source.dictionaries());
          }
          if (loaded) {
            target.write(encoded);
          }
        }
        batches++;
        if (!loaded) {
          batches = 0;
          break;
        }
        rows += batch.getRowCount();
        progress.accept(rows);
      }
      long outputBytes = target.commit();
      target = null;
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
          "an encoding runs on record batches",
          metrics.cpuFallbackCalls(),
          metrics.cpuFallbackReason());
    } finally {
      if (target != null) {
        target.close();
      }
    }
  }

  /** {@code batch} with column {@code columnIndex} encoded; the other columns transferred. */
  private static VectorSchemaRoot encodedBatch(
      VectorSchemaRoot batch,
      int columnIndex,
      Normalization normalization,
      Encoding encoding,
      ArrowNormalizer normalizer,
      NormalizationMetrics metrics) {
    FieldVector encoded =
        normalizer.normalizeEncoded(
            batch.getVector(columnIndex), List.of(normalization), encoding, metrics);
    List<Field> fields = new ArrayList<>();
    List<FieldVector> vectors = new ArrayList<>();
    for (int index = 0; index < batch.getFieldVectors().size(); index++) {
      FieldVector vector;
      if (index == columnIndex) {
        vector = encoded;
      } else {
        FieldVector from = batch.getVector(index);
        vector = from.getField().createVector(from.getAllocator());
        from.makeTransferPair(vector).transfer();
      }
      fields.add(vector.getField());
      vectors.add(vector);
    }
    VectorSchemaRoot result =
        new VectorSchemaRoot(new Schema(fields, batch.getSchema().getCustomMetadata()), vectors, 0);
    result.setRowCount(batch.getRowCount());
    return result;
  }
}
