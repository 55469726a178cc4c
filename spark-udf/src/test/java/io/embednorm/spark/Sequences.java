package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.CausalConvolutionReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Test data for {@code causal_conv} in SQL: random ragged sequences with nulls at every level, the
 * kernel as a SQL constant, and results read back step-major.
 */
final class Sequences {
  private Sequences() {}

  /**
   * {@code rows} random sequences of {@code channels} channels ({@code [step][channel]}), of 0 to
   * {@code kernelSteps} steps (a quarter of them 0 to 2, so that every batch holds empty, short and
   * long ones); one row in ten null, one in twenty with a null step, one in twenty with a null
   * element (the rows {@link #nulls} names, whose result is null).
   */
  static List<Float[][]> randomRows(Random random, int rows, int channels, int kernelSteps) {
    List<Float[][]> result = new ArrayList<>();
    for (int row = 0; row < rows; row++) {
      if (random.nextInt(10) == 0) {
        result.add(null);
        continue;
      }
      int steps = random.nextInt(4) == 0 ? random.nextInt(3) : random.nextInt(kernelSteps + 1);
      float[] values = CausalConvolutionReference.randomSequence(random, steps, channels);
      Float[][] sequence = new Float[steps][channels];
      for (int t = 0; t < steps; t++) {
        for (int c = 0; c < channels; c++) {
          sequence[t][c] = values[t * channels + c];
        }
      }
      if (steps > 0 && random.nextInt(20) == 0) {
        sequence[random.nextInt(steps)] = null;
      } else if (steps > 0 && random.nextInt(20) == 0) {
        sequence[random.nextInt(steps)][random.nextInt(channels)] = null;
      }
      result.add(sequence);
    }
    return result;
  }

  /** Whether a row gives null: a null sequence, step or element. */
  static boolean nulls(Float[][] sequence) {
    if (sequence == null) {
      return true;
    }
    for (Float[] step : sequence) {
      if (step == null) {
        return true;
      }
      for (Float value : step) {
        if (value == null) {
          return true;
        }
      }
    }
    return false;
  }

  /** The step-major floats of a sequence without nulls. */
  static float[] floats(Float[][] sequence) {
    int channels = sequence.length == 0 ? 0 : sequence[0].length;
    float[] values = new float[sequence.length * channels];
    for (int t = 0; t < sequence.length; t++) {
      for (int c = 0; c < channels; c++) {
        values[t * channels + c] = sequence[t][c];
      }
    }
    return values;
  }

  /**
   * A DataFrame {@code (id int, s array<array<float>>, x array<float>)}: the sequences and, for
   * mixed projections, each sequence's first step (or null).
   */
  static Dataset<Row> frame(SparkSession spark, List<Float[][]> sequences) {
    StructType schema =
        new StructType()
            .add("id", DataTypes.IntegerType, false)
            .add(
                "s",
                DataTypes.createArrayType(
                    DataTypes.createArrayType(DataTypes.FloatType, true), true),
                true)
            .add("x", DataTypes.createArrayType(DataTypes.FloatType, true), true);
    List<Row> data = new ArrayList<>();
    for (int id = 0; id < sequences.size(); id++) {
      Float[][] sequence = sequences.get(id);
      Float[] first = sequence == null || sequence.length == 0 ? null : sequence[0];
      data.add(RowFactory.create(id, sequence, first));
    }
    return spark.createDataFrame(data, schema);
  }

  /** {@code w} as a SQL constant of exactly its floats. */
  static String literal(float[][] w) {
    List<String> rows = new ArrayList<>();
    for (float[] row : w) {
      List<String> values = new ArrayList<>();
      for (float v : row) {
        values.add("cast('" + String.format(Locale.ROOT, "%s", v) + "' as float)");
      }
      rows.add("array(" + String.join(", ", values) + ")");
    }
    return "array(" + String.join(", ", rows) + ")";
  }

  /** Column {@code column} of each row by the row's id (column 0): step-major floats, or null. */
  static Map<Integer, float[]> byId(List<Row> rows, int column) {
    Map<Integer, float[]> values = new HashMap<>();
    for (Row row : rows) {
      values.put(row.getInt(0), row.isNullAt(column) ? null : floats(row.getList(column)));
    }
    return values;
  }

  private static float[] floats(List<Object> steps) {
    List<Float> values = new ArrayList<>();
    for (Object step : steps) {
      assertThat(step).as("a step of a result").isNotNull();
      for (Object value :
          scala.jdk.javaapi.CollectionConverters.asJava((scala.collection.Seq<?>) step)) {
        values.add((Float) value);
      }
    }
    float[] result = new float[values.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = values.get(i);
    }
    return result;
  }

  /** Asserts that every non-null row of {@code sequences} is within the reference's bound. */
  static void assertWithinReference(
      String context,
      List<Float[][]> sequences,
      Map<Integer, float[]> out,
      float[][] w,
      float eps) {
    for (int id = 0; id < sequences.size(); id++) {
      Float[][] sequence = sequences.get(id);
      if (nulls(sequence)) {
        assertThat(out.get(id)).as("%s, row %d is null", context, id).isNull();
        continue;
      }
      float[] k = floats(sequence);
      assertThat(out.get(id)).as("%s, row %d", context, id).hasSize(k.length);
      assertThat(
              CausalConvolutionReference.firstOutsideBound(w, eps, k, sequence.length, out.get(id)))
          .as("%s, row %d (%d steps): first output outside the bound", context, id, k.length)
          .isEqualTo(-1);
    }
  }
}
