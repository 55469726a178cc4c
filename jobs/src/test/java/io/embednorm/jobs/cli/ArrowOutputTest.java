package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.TestSeeds;
import io.embednorm.jobs.JobReport;
import io.embednorm.jobs.JobSettings;
import io.embednorm.jobs.NormalizeJob;
import io.embednorm.jobs.internal.ArrowIpcFileFormat;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job's {@code --format arrow}, on a real {@code local[2]} session and real files: the Arrow
 * IPC files read back with Arrow Java's {@link ArrowFileReader} hold, row for row and bit for bit,
 * what the same job writes as Parquet, nulls and the other columns included.
 */
class ArrowOutputTest {
  private static SparkSession spark;

  @TempDir Path folder;

  @BeforeAll
  static void startSpark() {
    spark =
        SparkSession.builder()
            .master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.extensions", "io.embednorm.spark.EmbedNormExtensions")
            .getOrCreate();
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** Input splits of 256 KiB over files of one row group each make most tasks empty. */
  @Test
  void arrowFilesHoldTheParquetOutputBitForBit() throws IOException {
    spark.conf().set("spark.sql.files.maxPartitionBytes", "262144");
    try {
      bitForBit();
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
  }

  private void bitForBit() throws IOException {
    for (long seed : TestSeeds.seeds()) {
      for (int width : new int[] {2, 4096}) {
        String label = "seed " + seed + ", width " + width;
        System.out.println("ArrowOutputTest: " + label);
        Path input = folder.resolve("in-" + seed + "-" + width);
        Random random = new Random(TestSeeds.mix(seed, width));
        writeInput(input, random, width == 2 ? 300 : 120, width, DataTypes.FloatType);
        Map<Long, Row> parquet = runBoth(input, "rms_norm");
        Path arrow = input.resolveSibling(input.getFileName() + "-arrow");
        assertArrowEquals(arrow, parquet, "embedding", width, label);
        if (width == 4096) {
          int tasks = spark.read().parquet(input.toString()).rdd().getNumPartitions();
          assertThat(arrowFiles(arrow))
              .as("%s: files of %d tasks", label, tasks)
              .hasSizeLessThan(tasks);
        }
      }
    }
  }

  /**
   * One task of 1,100 rows of width 4096 writes three record batches (512 rows of 16 KiB fill the 8
   * MiB of one): what a batch leaves in the reused vectors must not show in the next.
   */
  @Test
  void laterRecordBatchesHoldTheirOwnRowsAndNulls() throws IOException {
    long seed = TestSeeds.seeds()[TestSeeds.seeds().length - 1];
    System.out.println("ArrowOutputTest: record batches, seed " + seed);
    Path input = folder.resolve("in");
    writeInput(input, new Random(seed), 1100, 4096, DataTypes.FloatType);
    Path output = folder.resolve("out");
    spark
        .read()
        .parquet(input.toString())
        .coalesce(1)
        .write()
        .format(ArrowIpcFileFormat.class.getName())
        .option(ArrowIpcFileFormat.COLUMN, "embedding")
        .option(ArrowIpcFileFormat.WIDTH, "4096")
        .save(output.toString());
    Map<Long, Row> rows = new HashMap<>();
    for (Row row : spark.read().parquet(input.toString()).collectAsList()) {
      rows.put(row.getLong(0), row);
    }
    assertArrowEquals(output, rows, "embedding", 4096, "seed " + seed);
    try (RootAllocator allocator = new RootAllocator();
        FileChannel channel = FileChannel.open(arrowFiles(output).get(0));
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      assertThat(reader.getRecordBlocks()).hasSize(3);
    }
  }

  @Test
  void doubleArraysBecomeFixedSizeListsOfFloat64() throws IOException {
    Path input = folder.resolve("in");
    writeInput(input, new Random(7), 40, 3, DataTypes.DoubleType);
    Map<Long, Row> parquet = runBoth(input, "softmax");
    assertArrowEquals(folder.resolve("in-arrow"), parquet, "embedding", 3, "double");
  }

  /** No row has an embedding: no width to fix, so the column is List<float>, every entry null. */
  @Test
  void aColumnWithoutValuesIsAListOfNulls() throws IOException {
    Path input = folder.resolve("in");
    List<Row> rows = new ArrayList<>();
    for (long id = 0; id < 5; id++) {
      rows.add(RowFactory.create(id, "n" + id, (Object) null, 1.0));
    }
    spark.createDataFrame(rows, schema(DataTypes.FloatType)).write().parquet(input.toString());
    Map<Long, Row> parquet = runBoth(input, "l2_normalize");
    List<Path> files = arrowFiles(folder.resolve("in-arrow"));
    int read = 0;
    for (Path file : files) {
      try (RootAllocator allocator = new RootAllocator();
          FileChannel channel = FileChannel.open(file);
          ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
        Field field = reader.getVectorSchemaRoot().getSchema().findField("embedding");
        assertThat(field.getType()).isInstanceOf(ArrowType.List.class);
        for (ArrowBlock block : reader.getRecordBlocks()) {
          reader.loadRecordBatch(block);
          ListVector embeddings = (ListVector) reader.getVectorSchemaRoot().getVector("embedding");
          for (int row = 0; row < embeddings.getValueCount(); row++) {
            assertThat(embeddings.isNull(row)).isTrue();
            read++;
          }
        }
      }
    }
    assertThat(read).isEqualTo(parquet.size()).isEqualTo(5);
  }

  /**
   * Each task fixes the width from its own first non-null row; a task of null embeddings only
   * writes List<float>, which the job then rewrites with the others' width: one schema, every row.
   */
  @Test
  void aTaskWithoutValuesTakesTheWidthTheOthersFound() throws IOException {
    Path input = folder.resolve("in");
    List<Row> nulls = new ArrayList<>();
    List<Row> values = new ArrayList<>();
    Random random = new Random(5);
    for (long id = 0; id < 40; id++) {
      nulls.add(RowFactory.create(id, "n", null, 0.5));
      values.add(RowFactory.create(100 + id, "v", floats(random, 6), 0.25));
    }
    spark
        .createDataFrame(nulls, schema(DataTypes.FloatType))
        .coalesce(1)
        .write()
        .parquet(input.toString());
    spark
        .createDataFrame(values, schema(DataTypes.FloatType))
        .coalesce(1)
        .write()
        .mode("append")
        .parquet(input.toString());
    spark.conf().set("spark.sql.files.maxPartitionBytes", "262144");
    Map<Long, Row> parquet;
    try {
      parquet = runBoth(input, "rms_norm");
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
    Path output = folder.resolve("in-arrow");
    assertThat(arrowFiles(output)).hasSize(2);
    assertArrowEquals(output, parquet, "embedding", 6, "a task of nulls beside one of values");
    assertThat(tree(output))
        .as("no file left of the rewrite")
        .noneMatch(name -> name.endsWith(".fixed") || name.endsWith(".list"));
  }

  /**
   * A task whose first record batch (65,536 rows) holds only null embeddings writes List<float>;
   * the job rewrites that file with the width its later rows and the other task have.
   */
  @Test
  void valuesAfterAFirstRecordBatchOfNullsTakeTheJobsWidth() throws IOException {
    Path input = writeLateValues(new Random(23), 65990, 3);
    spark.conf().set("spark.sql.files.maxPartitionBytes", "262144");
    Map<Long, Row> parquet;
    try {
      parquet = runBoth(input, "l2_normalize");
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
    assertArrowEquals(folder.resolve("in-arrow"), parquet, "embedding", 3, "late values");
  }

  /**
   * Writes two Parquet files, read as one task each: 66,000 rows whose embeddings are null up to
   * {@code firstValue} and of {@code lateWidth} after, then 10 rows of width 3; returns their
   * folder.
   */
  private Path writeLateValues(Random random, int firstValue, int lateWidth) {
    Path input = folder.resolve("in");
    spark
        .range(0, 66000, 1, 1)
        .selectExpr(
            "id",
            "CAST(NULL AS STRING) AS name",
            "IF(id < "
                + firstValue
                + ", NULL, transform(sequence(1, "
                + lateWidth
                + "), i -> CAST(randn("
                + random.nextInt()
                + ") AS FLOAT))) AS embedding",
            "1.0D AS score")
        .write()
        .parquet(input.toString());
    List<Row> early = new ArrayList<>();
    for (long id = 100000; id < 100010; id++) {
      early.add(RowFactory.create(id, "e", floats(random, 3), 2.0));
    }
    spark
        .createDataFrame(early, schema(DataTypes.FloatType))
        .coalesce(1)
        .write()
        .mode("append")
        .parquet(input.toString());
    return input;
  }

  /**
   * A List file's row of another width than the others' fails the job as tasks of different widths
   * do, naming the file and row; no output is left.
   */
  @Test
  void aLateRowOfAnotherWidthFailsTheJobAndLeavesNoOutput() throws IOException {
    Path input = writeLateValues(new Random(29), 65999, 5);
    Path output = folder.resolve("out");
    spark.conf().set("spark.sql.files.maxPartitionBytes", "262144");
    try {
      assertThatThrownBy(
              () -> NormalizeJob.run(spark, settings(input, output, "arrow", "rms_norm")))
          .satisfies(
              failure ->
                  assertThat(ErrorReporter.oneLine(failure))
                      .matches(
                          "Cannot write column 'embedding' as Arrow FixedSizeList: tasks found"
                              + " rows of different widths \\(3 in part-\\d+-.*\\.arrow, 5 in"
                              + " part-\\d+-.*\\.arrow \\(row 65999\\)\\), and an output"
                              + " takes one; the output was removed; --format parquet takes rows"
                              + " of any width"));
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
    assertThat(output).doesNotExist();
  }

  /**
   * 700 null rows come before the first value of width 4096, whose record batch holds 512 rows: the
   * batch that fixes the width holds all 701, the next the rest.
   */
  @Test
  void nullsBeforeTheFirstValueMayOutnumberARecordBatch() throws IOException {
    Path input = folder.resolve("in");
    List<Row> rows = new ArrayList<>();
    Random random = new Random(13);
    for (long id = 0; id < 1000; id++) {
      rows.add(RowFactory.create(id, "n", id < 700 ? null : floats(random, 4096), 1.5));
    }
    spark
        .createDataFrame(rows, schema(DataTypes.FloatType))
        .coalesce(1)
        .write()
        .parquet(input.toString());
    Path output = folder.resolve("out");
    spark
        .read()
        .parquet(input.toString())
        .coalesce(1)
        .write()
        .format(ArrowIpcFileFormat.class.getName())
        .option(ArrowIpcFileFormat.COLUMN, "embedding")
        .save(output.toString());
    Map<Long, Row> expected = new HashMap<>();
    for (Row row : spark.read().parquet(input.toString()).collectAsList()) {
      expected.put(row.getLong(0), row);
    }
    assertArrowEquals(output, expected, "embedding", 4096, "700 nulls first");
    try (RootAllocator allocator = new RootAllocator();
        FileChannel channel = FileChannel.open(arrowFiles(output).get(0));
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      List<Integer> batchRows = new ArrayList<>();
      for (ArrowBlock block : reader.getRecordBlocks()) {
        reader.loadRecordBatch(block);
        batchRows.add(reader.getVectorSchemaRoot().getRowCount());
      }
      assertThat(batchRows).containsExactly(701, 299);
    }
  }

  /**
   * A first record batch of null embeddings (65,536 rows) writes the column as List<float>; the
   * values after it are written as lists, element for element.
   */
  @Test
  void valuesAfterAFirstRecordBatchOfNullsAreWrittenAsLists() throws IOException {
    Path output = folder.resolve("out");
    spark
        .range(0, 70000, 1, 1)
        .selectExpr(
            "id", "IF(id < 66000, NULL, array(CAST(id AS FLOAT), CAST(-id AS FLOAT))) AS embedding")
        .write()
        .format(ArrowIpcFileFormat.class.getName())
        .option(ArrowIpcFileFormat.COLUMN, "embedding")
        .save(output.toString());
    try (RootAllocator allocator = new RootAllocator();
        FileChannel channel = FileChannel.open(arrowFiles(output).get(0));
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      assertThat(reader.getVectorSchemaRoot().getSchema().findField("embedding").getType())
          .isInstanceOf(ArrowType.List.class);
      long seen = 0;
      for (ArrowBlock block : reader.getRecordBlocks()) {
        reader.loadRecordBatch(block);
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        ListVector embeddings = (ListVector) root.getVector("embedding");
        for (int index = 0; index < root.getRowCount(); index++) {
          long id = ((BigIntVector) root.getVector("id")).get(index);
          assertThat(embeddings.isNull(index)).as("row %d", id).isEqualTo(id < 66000);
          if (id >= 66000) {
            assertThat(embeddings.getObject(index)).isEqualTo(List.of((float) id, (float) -id));
          }
          seen++;
        }
      }
      assertThat(seen).isEqualTo(70000);
    }
  }

  /**
   * Each task fixes its own width, so the check comes after the write: the job fails, no output.
   */
  @Test
  void tasksOfDifferentWidthsFailTheJobWithOneLineAndLeaveNoOutput() throws IOException {
    Path input = folder.resolve("in");
    Random random = new Random(17);
    for (int width : new int[] {4, 6}) {
      List<Row> rows = new ArrayList<>();
      for (long id = 0; id < 10; id++) {
        rows.add(RowFactory.create(width * 100 + id, "n", floats(random, width), 0.0));
      }
      spark
          .createDataFrame(rows, schema(DataTypes.FloatType))
          .coalesce(1)
          .write()
          .mode("append")
          .parquet(input.toString());
    }
    Path output = folder.resolve("out");
    spark.conf().set("spark.sql.files.maxPartitionBytes", "262144");
    try {
      assertThatThrownBy(
              () -> NormalizeJob.run(spark, settings(input, output, "arrow", "rms_norm")))
          .satisfies(
              failure ->
                  assertThat(ErrorReporter.oneLine(failure))
                      .matches(
                          "Cannot write column 'embedding' as Arrow FixedSizeList: tasks found"
                              + " rows of different widths \\(4 in part-\\d+-.*\\.arrow, 6 in"
                              + " part-\\d+-.*\\.arrow\\), and an output takes one; the output was"
                              + " removed; --format parquet takes rows of any width"));
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
    assertThat(output).doesNotExist();
  }

  @Test
  void anInputWithoutRowsWritesNoArrowFile() throws IOException {
    Path input = folder.resolve("in");
    spark.createDataFrame(List.of(), schema(DataTypes.FloatType)).write().parquet(input.toString());
    Path output = folder.resolve("out");
    JobReport report = NormalizeJob.run(spark, settings(input, output, "arrow", "rms_norm"));
    assertThat(report.rows()).isZero();
    assertThat(tree(output)).contains("_SUCCESS").noneMatch(name -> name.endsWith(".arrow"));
  }

  @Test
  void aNullElementFailsTheWriteWithOneLine() throws IOException {
    Path input = folder.resolve("in");
    StructType schema =
        new StructType()
            .add("id", DataTypes.LongType, false)
            .add("embedding", DataTypes.createArrayType(DataTypes.FloatType, true));
    List<Row> rows =
        List.of(
            RowFactory.create(0L, List.of(1.0f, 2.0f)),
            RowFactory.create(1L, java.util.Arrays.asList(3.0f, null)));
    spark.createDataFrame(rows, schema).coalesce(1).write().parquet(input.toString());
    Path output = folder.resolve("out");
    assertThatThrownBy(
            () ->
                spark
                    .read()
                    .parquet(input.toString())
                    .coalesce(1)
                    .write()
                    .format(ArrowIpcFileFormat.class.getName())
                    .option(ArrowIpcFileFormat.COLUMN, "embedding")
                    .save(output.toString()))
        .satisfies(
            failure ->
                assertThat(ErrorReporter.oneLine(failure))
                    .isEqualTo(
                        "Cannot write column 'embedding' as Arrow FixedSizeList of 2 elements:"
                            + " row 1 of Spark partition 0 has a null element; a fixed-size list"
                            + " holds nulls only as whole rows"));
  }

  private static List<Long> nullEmbeddingIds(ArrowFileReader reader) throws IOException {
    List<Long> ids = new ArrayList<>();
    for (ArrowBlock block : reader.getRecordBlocks()) {
      reader.loadRecordBatch(block);
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      for (int index = 0; index < root.getRowCount(); index++) {
        assertThat(root.getVector("embedding").isNull(index)).isTrue();
        ids.add(((BigIntVector) root.getVector("id")).get(index));
      }
    }
    return ids;
  }

  @Test
  void rowsOfAnotherWidthFailTheJobWithOneLineAndLeaveNoFile() throws IOException {
    Path input = folder.resolve("in");
    List<Row> rows = new ArrayList<>();
    Random random = new Random(11);
    // 600 rows of 4096 fill a record batch (512 rows) before the odd row arrives.
    for (long id = 0; id < 601; id++) {
      rows.add(RowFactory.create(id, "n", floats(random, id == 600 ? 4095 : 4096), 0.0));
    }
    spark
        .createDataFrame(rows, schema(DataTypes.FloatType))
        .coalesce(1)
        .write()
        .parquet(input.toString());
    Path output = folder.resolve("out");
    assertThatThrownBy(() -> NormalizeJob.run(spark, settings(input, output, "arrow", "rms_norm")))
        .satisfies(
            failure ->
                assertThat(ErrorReporter.oneLine(failure))
                    .isEqualTo(
                        "Cannot write column 'embedding' as Arrow FixedSizeList of 4096 elements:"
                            + " row 600 of Spark partition 0 has 4095 elements, not 4096 (the"
                            + " width of row 0, the task's first non-null row); --format parquet"
                            + " takes rows of any width"));
    assertThat(tree(output)).isEmpty();
  }

  @Test
  void anExistingOutputIsTreatedAsTheParquetPathTreatsIt() throws IOException {
    Path input = folder.resolve("in");
    writeInput(input, new Random(3), 20, 4, DataTypes.FloatType);
    Path output = folder.resolve("out");
    NormalizeJob.run(spark, settings(input, output, "parquet", "rms_norm"));
    assertThatThrownBy(() -> NormalizeJob.run(spark, settings(input, output, "arrow", "rms_norm")))
        .hasMessage(
            "Cannot write output '"
                + output
                + "': it exists; pass --mode overwrite to replace a previous output");

    JobSettings overwrite =
        new JobSettings(
            input.toString(),
            null,
            output.toString(),
            "arrow",
            "embedding",
            null,
            Normalization.of(Op.fromName("rms_norm")),
            DeviceChoice.CPU,
            "overwrite");
    JobReport report = NormalizeJob.run(spark, overwrite);
    assertThat(report.rows()).isEqualTo(20);
    assertThat(tree(output))
        .contains("_SUCCESS")
        .allMatch(name -> name.matches("\\.?(_SUCCESS|part-.*\\.arrow)(\\.crc)?"));
  }

  /** Runs the job on {@code input} to Parquet and to Arrow; the Parquet output's rows by id. */
  private static Map<Long, Row> runBoth(Path input, String op) {
    Path parquet = input.resolveSibling(input.getFileName() + "-parquet");
    Path arrow = input.resolveSibling(input.getFileName() + "-arrow");
    JobReport parquetReport = NormalizeJob.run(spark, settings(input, parquet, "parquet", op));
    JobReport arrowReport = NormalizeJob.run(spark, settings(input, arrow, "arrow", op));
    assertThat(arrowReport.rows()).isEqualTo(parquetReport.rows());
    Map<Long, Row> rows = new HashMap<>();
    for (Row row : spark.read().parquet(parquet.toString()).collectAsList()) {
      rows.put(row.getLong(0), row);
    }
    return rows;
  }

  private static JobSettings settings(Path input, Path output, String format, String op) {
    return new JobSettings(
        input.toString(),
        null,
        output.toString(),
        format,
        "embedding",
        null,
        Normalization.of(Op.fromName(op)),
        DeviceChoice.CPU,
        null);
  }

  /**
   * Checks that the Arrow files under {@code output} hold exactly {@code expected}: the same ids,
   * names, scores (bits) and embeddings (bits, nulls as null entries), the embedding column as a
   * fixed-size list of {@code width}.
   */
  private static void assertArrowEquals(
      Path output, Map<Long, Row> expected, String column, int width, String label)
      throws IOException {
    assertThat(output.resolve("_SUCCESS")).exists();
    int read = 0;
    for (Path file : arrowFiles(output)) {
      try (RootAllocator allocator = new RootAllocator();
          FileChannel channel = FileChannel.open(file);
          ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        Field field = root.getSchema().findField(column);
        assertThat(field.getType()).as(label).isEqualTo(new ArrowType.FixedSizeList(width));
        assertThat(field.getChildren().get(0).getName()).isEqualTo("item");
        for (ArrowBlock block : reader.getRecordBlocks()) {
          reader.loadRecordBatch(block);
          for (int index = 0; index < root.getRowCount(); index++) {
            long id = ((BigIntVector) root.getVector("id")).get(index);
            Row row = expected.get(id);
            assertThat(row).as("%s: row %d", label, id).isNotNull();
            assertRowEquals(root, index, row, column, label + ", row " + id);
            read++;
          }
        }
      }
    }
    assertThat(read).as(label).isEqualTo(expected.size());
  }

  private static void assertRowEquals(
      VectorSchemaRoot root, int index, Row row, String column, String label) {
    VarCharVector names = (VarCharVector) root.getVector("name");
    assertThat(names.isNull(index)).as(label).isEqualTo(row.isNullAt(1));
    if (!row.isNullAt(1)) {
      assertThat(new String(names.get(index), java.nio.charset.StandardCharsets.UTF_8))
          .isEqualTo(row.getString(1));
    }
    Float8Vector scores = (Float8Vector) root.getVector("score");
    assertThat(Double.doubleToRawLongBits(scores.get(index)))
        .as(label)
        .isEqualTo(Double.doubleToRawLongBits(row.getDouble(3)));
    FixedSizeListVector embeddings = (FixedSizeListVector) root.getVector(column);
    assertThat(embeddings.isNull(index)).as(label).isEqualTo(row.isNullAt(2));
    if (row.isNullAt(2)) {
      return;
    }
    List<Object> values = row.getList(2);
    int width = embeddings.getListSize();
    assertThat(values).hasSize(width);
    long[] actual = new long[width];
    long[] wanted = new long[width];
    for (int element = 0; element < width; element++) {
      int at = index * width + element;
      if (embeddings.getDataVector() instanceof Float4Vector floats) {
        assertThat(floats.isNull(at)).isFalse();
        actual[element] = Float.floatToRawIntBits(floats.get(at));
        wanted[element] = Float.floatToRawIntBits((Float) values.get(element));
      } else {
        Float8Vector doubles = (Float8Vector) embeddings.getDataVector();
        actual[element] = Double.doubleToRawLongBits(doubles.get(at));
        wanted[element] = Double.doubleToRawLongBits((Double) values.get(element));
      }
    }
    assertThat(actual).as(label).isEqualTo(wanted);
    ArrowType.FloatingPoint type =
        (ArrowType.FloatingPoint) embeddings.getDataVector().getField().getType();
    assertThat(type.getPrecision())
        .isEqualTo(
            row.getList(2).get(0) instanceof Float
                ? FloatingPointPrecision.SINGLE
                : FloatingPointPrecision.DOUBLE);
  }

  /**
   * Writes {@code rows} rows (id, name, embedding, score) of random values as Parquet, about one
   * row in eight with a null embedding and one in ten with a null name; the input's order is
   * shuffled so that files and tasks see ids out of order.
   */
  private static void writeInput(Path input, Random random, int rows, int width, DataType element) {
    List<Row> list = new ArrayList<>();
    for (long id = 0; id < rows; id++) {
      Object embedding =
          random.nextInt(8) == 0
              ? null
              : element.equals(DataTypes.FloatType)
                  ? floats(random, width)
                  : doubles(random, width);
      String name = random.nextInt(10) == 0 ? null : "name-" + random.nextInt(1000);
      list.add(RowFactory.create(id, name, embedding, random.nextGaussian()));
    }
    spark.createDataFrame(list, schema(element)).repartition(3).write().parquet(input.toString());
  }

  private static StructType schema(DataType element) {
    return new StructType()
        .add("id", DataTypes.LongType, false)
        .add("name", DataTypes.StringType)
        .add("embedding", DataTypes.createArrayType(element, false))
        .add("score", DataTypes.DoubleType, false);
  }

  private static List<Float> floats(Random random, int width) {
    List<Float> values = new ArrayList<>(width);
    for (int i = 0; i < width; i++) {
      values.add((float) (random.nextGaussian() * Math.exp(random.nextGaussian())));
    }
    return values;
  }

  private static List<Double> doubles(Random random, int width) {
    List<Double> values = new ArrayList<>(width);
    for (int i = 0; i < width; i++) {
      values.add(random.nextGaussian() * 3);
    }
    return values;
  }

  private static List<Path> arrowFiles(Path output) throws IOException {
    try (Stream<Path> files = Files.list(output)) {
      List<Path> found =
          files.filter(file -> file.getFileName().toString().endsWith(".arrow")).sorted().toList();
      assertThat(found).allMatch(file -> file.getFileName().toString().startsWith("part-"));
      return found;
    }
  }

  /** The names of every file and folder under {@code root}, or none when it does not exist. */
  private static List<String> tree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return List.of();
    }
    try (Stream<Path> paths = Files.walk(root)) {
      return paths
          .filter(path -> !path.equals(root))
          .map(path -> root.relativize(path).toString())
          .toList();
    }
  }
}
