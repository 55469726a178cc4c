package io.embednorm.jobs.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.SeekableReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * After an Arrow output's write: the files whose embedding column is a {@code List} (their task met
 * no non-null row in its first record batch) take the fixed-size list of the width the other files
 * found, so that every file of the output has one schema, as readers of a dataset expect. Each such
 * file is rewritten beside itself (a hidden file) and then put in its place; its rows, validity and
 * other columns stay as they were.
 */
final class ListFiles {
  private ListFiles() {}

  /**
   * Rewrites every {@code .arrow} file in {@code output} but {@code fixedNames} whose {@code
   * column} is a {@code List}, as a fixed-size list of {@code width}.
   *
   * @return null, or where a row of another width is, e.g. {@code 5 in part-00003-...arrow (row
   *     70000)}: that file is then left as it was
   */
  static String fixAll(
      Path output, String column, int width, Set<String> fixedNames, Configuration configuration)
      throws IOException {
    FileSystem files = ArrowIpcFiles.fileSystem(output, configuration);
    for (FileStatus status : files.listStatus(output)) {
      String name = status.getPath().getName();
      if (status.isFile()
          && name.endsWith(".arrow")
          && !name.startsWith(".")
          && !name.startsWith("_")
          && !fixedNames.contains(name)) {
        String mismatch = fix(files, status, column, width, configuration);
        if (mismatch != null) {
          return mismatch;
        }
      }
    }
    return null;
  }

  private static String fix(
      FileSystem files, FileStatus status, String column, int width, Configuration configuration)
      throws IOException {
    Path file = status.getPath();
    Path rewritten = new Path(file.getParent(), "." + file.getName() + ".fixed");
    boolean done = false;
    try (BufferAllocator allocator =
            ArrowUtils.rootAllocator().newChildAllocator("embednorm list file", 0, Long.MAX_VALUE);
        ArrowFileReader reader =
            new ArrowFileReader(
                new SeekableReadChannel(new HadoopReadChannel(files.open(file), status.getLen())),
                allocator)) {
      VectorSchemaRoot read = reader.getVectorSchemaRoot();
      List<Field> fields = new ArrayList<>(read.getSchema().getFields());
      int index = fields.indexOf(read.getSchema().findField(column));
      if (index < 0 || !(fields.get(index).getType() instanceof ArrowType.List)) {
        return null;
      }
      Field element = fields.get(index).getChildren().get(0);
      fields.set(
          index,
          new Field(
              column,
              FieldType.nullable(new ArrowType.FixedSizeList(width)),
              List.of(new Field("item", FieldType.nullable(element.getType()), null))));
      try (FixedSizeListVector fixed =
          (FixedSizeListVector) fields.get(index).createVector(allocator)) {
        List<FieldVector> vectors = new ArrayList<>(read.getFieldVectors());
        vectors.set(index, fixed);
        // Borrows the reader's vectors and this one; they are closed by their owners.
        VectorSchemaRoot written = new VectorSchemaRoot(fields, vectors);
        long fileRow = 0;
        try (ArrowFileWriter writer =
            ArrowIpcFiles.open(rewritten.toString(), written, configuration)) {
          for (ArrowBlock block : reader.getRecordBlocks()) {
            reader.loadRecordBatch(block);
            int rows = read.getRowCount();
            Mismatch mismatch =
                copy((ListVector) read.getVector(index), fixed, width, rows, fileRow);
            if (mismatch != null) {
              return mismatch.width() + " in " + file.getName() + " (row " + mismatch.row() + ")";
            }
            written.setRowCount(rows);
            writer.writeBatch();
            fileRow += rows;
          }
          writer.end();
        }
      }
      replace(files, file, rewritten);
      done = true;
      return null;
    } finally {
      if (!done) {
        files.delete(rewritten, false);
      }
    }
  }

  /** A non-null list of another width, at a row counted from the file's start. */
  private record Mismatch(int width, long row) {}

  /**
   * Copies a batch's lists into {@code fixed}; returns the first non-null list not {@code width}
   * long, or null.
   */
  private static Mismatch copy(
      ListVector lists, FixedSizeListVector fixed, int width, int rows, long fileRow) {
    fixed.setInitialCapacity(rows);
    fixed.allocateNew();
    FieldVector items = fixed.getDataVector();
    for (int row = 0; row < rows; row++) {
      if (lists.isNull(row)) {
        fixed.setNull(row);
        continue;
      }
      int start = lists.getElementStartIndex(row);
      int length = lists.getElementEndIndex(row) - start;
      if (length != width) {
        return new Mismatch(length, fileRow + row);
      }
      fixed.setNotNull(row);
      for (int item = 0; item < width; item++) {
        items.copyFromSafe(start + item, row * width + item, lists.getDataVector());
      }
    }
    fixed.setValueCount(rows);
    return null;
  }

  /**
   * Puts {@code rewritten} in the place of {@code file}, keeping {@code file} until it is there.
   */
  private static void replace(FileSystem files, Path file, Path rewritten) throws IOException {
    Path kept = new Path(file.getParent(), "." + file.getName() + ".list");
    if (!files.rename(file, kept)) {
      throw new IOException("cannot move '" + file + "' aside to '" + kept + "'");
    }
    if (!files.rename(rewritten, file)) {
      files.rename(kept, file);
      throw new IOException("cannot move '" + rewritten + "' to '" + file + "'");
    }
    files.delete(kept, false);
  }
}
