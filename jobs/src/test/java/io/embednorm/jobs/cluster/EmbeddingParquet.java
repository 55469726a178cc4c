package io.embednorm.jobs.cluster;

import io.embednorm.jobs.internal.SampleRows;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/**
 * Parquet files of {@code id: bigint, embedding: array<float>} read and written with the Parquet
 * library alone, so that a test needs no Spark session of its own for its input and output.
 */
final class EmbeddingParquet {
  private static final MessageType SCHEMA =
      MessageTypeParser.parseMessageType(
          "message spark_schema { required int64 id; optional group embedding (LIST) {"
              + " repeated group list { required float element; } } }");

  private EmbeddingParquet() {}

  /** What receives the rows read. */
  interface RowConsumer {
    void accept(long id, float[] embedding);
  }

  /** Writes {@link SampleRows} {@code first} to {@code first + rows - 1} of {@code seed}. */
  static void writeSample(Path file, long first, int rows, int width, long seed) {
    SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
    try (ParquetWriter<Group> writer =
        ExampleParquetWriter.builder(new LocalOutputFile(file))
            .withType(SCHEMA)
            .withCompressionCodec(CompressionCodecName.UNCOMPRESSED)
            .build()) {
      for (long id = first; id < first + rows; id++) {
        Group row = groups.newGroup().append("id", id);
        Group embedding = row.addGroup("embedding");
        for (float value : SampleRows.row(seed, id, width)) {
          embedding.addGroup("list").append("element", value);
        }
        writer.write(row);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /** Reads every {@code *.parquet} file of {@code folder}; returns how many rows it read. */
  static long read(Path folder, RowConsumer consumer) {
    long count = 0;
    try (Stream<Path> listing = Files.list(folder)) {
      List<Path> files =
          listing.filter(file -> file.getFileName().toString().endsWith(".parquet")).toList();
      for (Path file : files) {
        count += readFile(file, consumer);
      }
      return count;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + folder + ": " + e.getMessage(), e);
    }
  }

  private static long readFile(Path file, RowConsumer consumer) throws IOException {
    long count = 0;
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file))) {
      MessageType schema = reader.getFooter().getFileMetaData().getSchema();
      ColumnIOFactory columns = new ColumnIOFactory();
      for (PageReadStore pages = reader.readNextRowGroup();
          pages != null;
          pages = reader.readNextRowGroup()) {
        RecordReader<Group> records =
            columns.getColumnIO(schema).getRecordReader(pages, new GroupRecordConverter(schema));
        for (long index = 0; index < pages.getRowCount(); index++) {
          Group row = records.read();
          Group embedding = row.getGroup("embedding", 0);
          float[] values = new float[embedding.getFieldRepetitionCount("list")];
          for (int i = 0; i < values.length; i++) {
            values[i] = embedding.getGroup("list", i).getFloat("element", 0);
          }
          consumer.accept(row.getLong("id", 0), values);
          count++;
        }
      }
    }
    return count;
  }
}
