package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.ElementType;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compare.VectorEqualsVisitor;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Arrow IPC files for the tests of the two paths of {@link ArrowFiles#normalizeFile}: random
 * batches of {@code (id bigint, label utf8, embedding, score double)} written with Arrow's own
 * writers, and a comparison of two output files as Arrow reads them back.
 */
final class TestFiles {
  private TestFiles() {}

  /** What goes into a random file. */
  record Shape(
      Layout layout, ElementType type, int width, int batches, int rowsPerBatch, double nullRows) {}

  /**
   * Writes batches of random rows: Gaussian values, a share of null rows, and for a List rows of
   * random widths from 0 to {@code width}; returns the embedding rows of each batch.
   */
  static List<Double[][]> write(
      BufferAllocator allocator, Path path, Shape shape, Random random, ArrowFormat format)
      throws IOException {
    Field field = TestColumns.field("embedding", shape.layout(), shape.type(), shape.width());
    List<Double[][]> batches = new ArrayList<>();
    List<VectorSchemaRoot> roots = new ArrayList<>();
    try {
      long id = 0;
      for (int batch = 0; batch < shape.batches(); batch++) {
        int rows = shape.rowsPerBatch() + random.nextInt(3);
        Double[][] embedding =
            TestColumns.gaussianRows(
                random,
                shape.type(),
                rows,
                row ->
                    shape.layout() == Layout.LIST
                        ? random.nextInt(shape.width() + 1)
                        : shape.width());
        for (int row = 0; row < rows; row++) {
          if (random.nextDouble() < shape.nullRows()) {
            embedding[row] = null;
          }
        }
        batches.add(embedding);
        FieldVector column =
            shape.layout() == Layout.LIST
                ? TestColumns.list(allocator, field, embedding, 0, 0)
                : TestColumns.fixedSizeList(allocator, field, embedding);
        roots.add(root(allocator, id, column, random));
        id += rows;
      }
      if (format == ArrowFormat.FILE) {
        ArrowFiles.writeFile(path, allocator, roots.toArray(new VectorSchemaRoot[0]));
      } else {
        writeStream(path, allocator, roots);
      }
    } finally {
      roots.forEach(VectorSchemaRoot::close);
    }
    return batches;
  }

  /** A batch of id, label, the given embedding column and score; takes the column over. */
  private static VectorSchemaRoot root(
      BufferAllocator allocator, long firstId, FieldVector embedding, Random random) {
    int rows = embedding.getValueCount();
    BigIntVector ids = new BigIntVector("id", allocator);
    VarCharVector labels = new VarCharVector("label", allocator);
    Float8Vector scores = new Float8Vector("score", allocator);
    ids.allocateNew(rows);
    labels.allocateNew(rows);
    scores.allocateNew(rows);
    for (int row = 0; row < rows; row++) {
      ids.set(row, firstId + row);
      if (random.nextInt(5) == 0) {
        labels.setNull(row);
      } else {
        labels.setSafe(row, ("row " + (firstId + row)).getBytes(StandardCharsets.UTF_8));
      }
      scores.set(row, random.nextDouble());
    }
    ids.setValueCount(rows);
    labels.setValueCount(rows);
    scores.setValueCount(rows);
    return new VectorSchemaRoot(List.of(ids, labels, embedding, scores));
  }

  static void writeStream(Path path, BufferAllocator allocator, List<VectorSchemaRoot> roots)
      throws IOException {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(roots.get(0).getSchema(), allocator);
        FileChannel channel =
            FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowStreamWriter writer = new ArrowStreamWriter(root, null, channel)) {
      for (VectorSchemaRoot batch : roots) {
        try (ArrowRecordBatch recordBatch = new VectorUnloader(batch).getRecordBatch()) {
          new VectorLoader(root).load(recordBatch);
        }
        writer.writeBatch();
      }
      writer.end();
    }
  }

  /**
   * Writes an Arrow IPC file of {@code batches} copies of one batch: a dictionary-encoded {@code
   * label} column (dictionary id 7, "cat" and "dog") holding {@code labels}, then the {@code
   * embedding} column of {@code rows}.
   */
  static void writeWithDictionary(
      BufferAllocator allocator,
      Path path,
      Layout layout,
      Double[][] rows,
      String[] labels,
      int batches)
      throws IOException {
    Dictionary dictionary =
        new Dictionary(
            TestColumns.varChars(allocator, "dictionary", "cat", "dog"),
            new DictionaryEncoding(7L, false, null));
    try (VarCharVector plain = TestColumns.varChars(allocator, "label", labels);
        FieldVector encoded = (FieldVector) DictionaryEncoder.encode(plain, dictionary);
        FieldVector embedding =
            TestColumns.build(allocator, "embedding", layout, ElementType.FLOAT32, rows);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(encoded, embedding));
        FileChannel channel =
            FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowFileWriter writer =
            new ArrowFileWriter(
                root, new DictionaryProvider.MapDictionaryProvider(dictionary), channel)) {
      for (int batch = 0; batch < batches; batch++) {
        writer.writeBatch();
      }
      writer.end();
    } finally {
      dictionary.getVector().close();
    }
  }

  /**
   * Asserts that Arrow reads {@code actual} back exactly as {@code expected}: the same schema,
   * dictionaries and batches, every vector equal, and for the list column {@code column} the same
   * row and element validity, element count and element bytes (those under null rows included).
   */
  static void assertSameContents(
      BufferAllocator allocator, Path expected, Path actual, String column, String context)
      throws IOException {
    try (ArrowFileReader want = reader(expected, allocator);
        ArrowFileReader got = reader(actual, allocator)) {
      VectorSchemaRoot wanted = want.getVectorSchemaRoot();
      VectorSchemaRoot gotten = got.getVectorSchemaRoot();
      assertThat(gotten.getSchema()).as("%s: schema", context).isEqualTo(wanted.getSchema());
      assertThat(got.getRecordBlocks()).as(context).hasSameSizeAs(want.getRecordBlocks());
      for (int batch = 0; batch < want.getRecordBlocks().size(); batch++) {
        String where = context + ", batch " + batch;
        assertThat(want.loadNextBatch()).isTrue();
        assertThat(got.loadNextBatch()).isTrue();
        assertThat(gotten.getRowCount()).as(where).isEqualTo(wanted.getRowCount());
        assertSameColumn(wanted.getVector(column), gotten.getVector(column), where);
        assertThat(gotten.equals(wanted)).as("%s: every vector equal", where).isTrue();
      }
      assertThat(got.getDictionaryVectors().keySet())
          .isEqualTo(want.getDictionaryVectors().keySet());
      for (Long id : want.getDictionaryVectors().keySet()) {
        assertThat(
                VectorEqualsVisitor.vectorEquals(
                    got.getDictionaryVectors().get(id).getVector(),
                    want.getDictionaryVectors().get(id).getVector()))
            .as("%s: dictionary %d", context, id)
            .isTrue();
      }
    }
  }

  private static void assertSameColumn(FieldVector wanted, FieldVector gotten, String where) {
    assertThat(gotten.getValueCount()).as("%s: rows", where).isEqualTo(wanted.getValueCount());
    assertThat(gotten.getNullCount()).as("%s: null rows", where).isEqualTo(wanted.getNullCount());
    for (int row = 0; row < wanted.getValueCount(); row++) {
      assertThat(gotten.isNull(row))
          .as("%s: row %d null", where, row)
          .isEqualTo(wanted.isNull(row));
    }
    BaseFixedWidthVector want = (BaseFixedWidthVector) wanted.getChildrenFromFields().get(0);
    BaseFixedWidthVector got = (BaseFixedWidthVector) gotten.getChildrenFromFields().get(0);
    int elements = want.getValueCount();
    assertThat(got.getValueCount()).as("%s: elements", where).isEqualTo(elements);
    assertThat(got.getNullCount()).as("%s: null elements", where).isEqualTo(want.getNullCount());
    for (int element = 0; element < elements; element++) {
      assertThat(got.isNull(element))
          .as("%s: element %d null", where, element)
          .isEqualTo(want.isNull(element));
    }
    assertThat(bytes(got.getDataBuffer(), (long) elements * got.getTypeWidth()))
        .as("%s: element bits", where)
        .isEqualTo(bytes(want.getDataBuffer(), (long) elements * want.getTypeWidth()));
  }

  private static byte[] bytes(ArrowBuf buffer, long length) {
    byte[] bytes = new byte[(int) length];
    buffer.getBytes(0, bytes);
    return bytes;
  }

  private static ArrowFileReader reader(Path path, BufferAllocator allocator) throws IOException {
    return new ArrowFileReader(FileChannel.open(path, StandardOpenOption.READ), allocator);
  }

  /** The names of the regular files in {@code directory}, sorted. */
  static List<String> files(Path directory) throws IOException {
    try (Stream<Path> entries = Files.list(directory)) {
      return entries
          .filter(Files::isRegularFile)
          .map(entry -> entry.getFileName().toString())
          .sorted()
          .collect(Collectors.toList());
    }
  }
}
