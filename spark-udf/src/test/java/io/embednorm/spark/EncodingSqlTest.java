package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.EncodingReference;
import io.embednorm.engine.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.ExplainMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The encoding functions in SQL: {@code quantize_int8(l2_normalize(x))} and the others run fused in
 * the columnar operator (one operator, one chain) and give, row by row, the encoding of the float32
 * {@code l2_normalize(x)} (float64 reference of the encodings) and the same rows as the row path;
 * alone on a column they encode the column; {@code dequantize_int8} inverts int8 within half a
 * step.
 */
class EncodingSqlTest {
  private static final String FUSED =
      "SELECT id, l2_normalize(x) AS y, quantize_int8(l2_normalize(x)) AS q,"
          + " quantize_binary(l2_normalize(x)) AS b, to_float16(l2_normalize(x)) AS h,"
          + " to_bfloat16(l2_normalize(x)) AS bh FROM rows";

  private static SparkSession spark;

  @BeforeAll
  static void startSpark(@TempDir Path directory) {
    spark = TestSessions.create(true);
    long seed = TestSeeds.seeds()[TestSeeds.seeds().length - 1];
    System.out.println("EncodingSqlTest seed " + seed);
    Random random = new Random(seed);
    List<Double[]> rows = new ArrayList<>();
    for (int row = 0; row < 40; row++) {
      Double[] values = new Double[1 + random.nextInt(70)];
      for (int i = 0; i < values.length; i++) {
        values[i] = random.nextGaussian() * Math.pow(10, random.nextInt(5) - 2);
      }
      rows.add(values);
    }
    rows.add(null);
    rows.add(new Double[0]);
    rows.add(new Double[] {1.0, null, 2.0});
    rows.add(new Double[] {0.0, -0.0, 0.0});
    rows.add(new Double[] {1.0, Double.NaN, -1.0});
    TestData.parquetView(
        spark, TestData.frame(spark, "float", rows), directory.resolve("rows"), "rows");
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  @Test
  void fusedInOneOperatorAndEqualToTheRowPathAndTheReference() {
    spark.conf().set(EmbedNormConfig.EXPLAIN.name(), "true");
    spark.conf().set(EmbedNormConfig.DEVICE.name(), "cpu");
    try {
      Dataset<Row> fused = spark.sql(FUSED);
      String plan = fused.queryExecution().explainString(ExplainMode.fromString("simple"));
      assertThat(plan)
          .contains("EmbedNormProject")
          .contains("l2_normalize + int8 over x")
          .contains("l2_normalize + binary over x")
          .doesNotContain("CPU row path");
      List<Row> fusedRows = sorted(fused);
      check(fusedRows, 1);
      spark.conf().set(EmbedNormConfig.COLUMNAR.name(), "false");
      List<Row> rowPath = sorted(spark.sql(FUSED));
      check(rowPath, 1);
      for (int row = 0; row < rowPath.size(); row++) {
        Row fusedInt8 = fusedRows.get(row).getStruct(2);
        Row rowInt8 = rowPath.get(row).getStruct(2);
        if (fusedInt8 != null || rowInt8 != null) {
          assertThat((byte[]) rowInt8.get(0)).isEqualTo((byte[]) fusedInt8.get(0));
          assertThat(Float.floatToIntBits(rowInt8.getFloat(1)))
              .isEqualTo(Float.floatToIntBits(fusedInt8.getFloat(1)));
        }
        for (int column = 3; column <= 5; column++) {
          assertThat((byte[]) rowPath.get(row).get(column))
              .as("row %d column %d", row, column)
              .isEqualTo((byte[]) fusedRows.get(row).get(column));
        }
      }
    } finally {
      spark.conf().unset(EmbedNormConfig.EXPLAIN.name());
      spark.conf().unset(EmbedNormConfig.DEVICE.name());
      spark.conf().unset(EmbedNormConfig.COLUMNAR.name());
    }
  }

  @Test
  void plainArraysAreEncodedAsTheyAre() {
    List<Row> rows =
        spark
            .sql(
                "SELECT id, x, quantize_int8(x), quantize_binary(x), to_float16(x),"
                    + " to_bfloat16(x) FROM rows ORDER BY id")
            .collectAsList();
    check(rows, 1);
  }

  @Test
  void dequantizeInt8IsWithinHalfAStep() {
    List<Row> rows =
        spark
            .sql(
                "SELECT x, quantize_int8(x).scale, dequantize_int8(quantize_int8(x)) FROM rows"
                    + " WHERE x IS NOT NULL AND NOT exists(x, v -> v IS NULL OR isnan(v))")
            .collectAsList();
    assertThat(rows).hasSizeGreaterThan(40);
    for (Row row : rows) {
      List<Float> x = row.getList(0);
      float scale = row.getFloat(1);
      List<Float> back = row.getList(2);
      assertThat(back).hasSameSizeAs(x);
      for (int i = 0; i < x.size(); i++) {
        assertThat(Math.abs((double) back.get(i) - x.get(i)))
            .as("%s element %d", x, i)
            .isLessThanOrEqualTo(scale * 0.5000001 + Math.ulp(x.get(i)));
      }
    }
    assertThat(
            spark
                .sql("SELECT dequantize_int8(CAST(NULL AS struct<values: binary, scale: float>))")
                .first()
                .isNullAt(0))
        .isTrue();
  }

  private static List<Row> sorted(Dataset<Row> rows) {
    List<Row> result = new ArrayList<>(rows.collectAsList());
    result.sort(java.util.Comparator.comparingInt(row -> row.getInt(0)));
    return result;
  }

  /**
   * Columns after {@code first}: int8 struct, binary, float16, bfloat16 of the float column first.
   */
  private static void check(List<Row> rows, int first) {
    assertThat(rows).hasSize(45);
    Encoding[] encodings = {Encoding.INT8, Encoding.BINARY, Encoding.FLOAT16, Encoding.BFLOAT16};
    for (Row row : rows) {
      String context = "id " + row.getInt(0);
      List<Float> y = row.isNullAt(first) ? null : row.getList(first);
      for (int k = 0; k < encodings.length; k++) {
        int column = first + 1 + k;
        if (y == null || y.contains(null)) {
          assertThat(row.isNullAt(column)).as(context + " " + encodings[k]).isTrue();
          continue;
        }
        float[] values = new float[y.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = y.get(i);
        }
        byte[] bytes;
        float scale = 1f;
        if (encodings[k] == Encoding.INT8) {
          Row struct = row.getStruct(column);
          bytes = (byte[]) struct.get(0);
          scale = struct.getFloat(1);
        } else {
          bytes = (byte[]) row.get(column);
        }
        assertThat((long) bytes.length).isEqualTo(encodings[k].rowBytes(values.length));
        EncodingReference.assertRow(
            encodings[k],
            values,
            0,
            values.length,
            ByteBuffer.wrap(bytes),
            0,
            scale,
            context + " " + encodings[k]);
      }
    }
  }
}
