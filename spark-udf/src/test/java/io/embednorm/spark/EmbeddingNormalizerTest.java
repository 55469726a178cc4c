package io.embednorm.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.spark.ml.EmbeddingNormalizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.linalg.DenseVector;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ML stage {@link EmbeddingNormalizer} against the float64 reference, on {@code array<float>},
 * {@code array<double>} and ML {@code Vector} columns, in a Pipeline, saved and loaded.
 */
class EmbeddingNormalizerTest {
  private static final int[] WIDTHS = {1, 2, 3, 31, 33, 768};
  private static final int WEIGHTED_WIDTH = 48;

  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestSessions.create(false);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** Each op on each input kind: float, double (arrays) and vector. */
  static Stream<Arguments> opsAndInputs() {
    List<Arguments> arguments = new ArrayList<>();
    for (String op : List.of("rms_norm", "l2_normalize", "layer_norm", "softmax", "log_softmax")) {
      for (String input : List.of("float", "double", "vector")) {
        arguments.add(Arguments.of(op, input));
      }
    }
    return arguments.stream();
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("opsAndInputs")
  void matchesTheFloat64Reference(String op, String input) {
    long seed = TestData.SEED + op.hashCode() + input.hashCode();
    List<Double[]> rows = randomRows(seed, input.equals("float"), WIDTHS);
    rows.add(null);
    rows.add(new Double[0]);
    if (!input.equals("vector")) {
      rows.add(new Double[] {1.0, null, 3.0});
    }
    Dataset<Row> frame = frame(input, rows);
    EmbeddingNormalizer normalizer =
        new EmbeddingNormalizer().setInputCol("x").setOutputCol("y").setOp(op);

    Dataset<Row> result = normalizer.transform(frame);

    assertThat(result.schema().apply("y").dataType()).isEqualTo(expectedType(input));
    assertThat(result.columns()).containsExactly("id", "x", "y");
    Map<Integer, List<Double>> actual = collect(result, "y");
    for (int id = 0; id < rows.size(); id++) {
      double[] expected =
          Reference.compute(op, rows.get(id), Reference.defaultEpsilon(op), null, null);
      accuracy(input)
          .assertRow(
              op + " on " + input + ", row " + id + ", seed " + seed, actual.get(id), expected);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("inputs")
  void appliesEpsilonAndWeight(String input) {
    long seed = TestData.SEED + 7;
    double[] weight = new Random(seed).doubles(WEIGHTED_WIDTH, 0.5, 1.5).toArray();
    List<Double[]> rows =
        randomRows(seed, input.equals("float"), new int[] {WEIGHTED_WIDTH, WEIGHTED_WIDTH});
    EmbeddingNormalizer normalizer =
        new EmbeddingNormalizer()
            .setInputCol("x")
            .setOutputCol("y")
            .setOp("rms_norm")
            .setEps(1e-2)
            .setWeight(weight);
    assertThat(normalizer.getEps()).isEqualTo(1e-2);
    assertThat(normalizer.getWeight()).containsExactly(weight);

    Map<Integer, List<Double>> actual = collect(normalizer.transform(frame(input, rows)), "y");

    for (int id = 0; id < rows.size(); id++) {
      double[] reference =
          Reference.compute("rms_norm", rows.get(id), 1e-2, roundedWeight(weight, input), null);
      accuracy(input)
          .assertRow(
              "weighted rms_norm on " + input + ", row " + id + ", seed " + seed,
              actual.get(id),
              reference);
    }
  }

  static Stream<String> inputs() {
    return Stream.of("float", "double", "vector");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("inputs")
  void worksInAPipelineAndItsSavedModel(String input, @TempDir Path directory) throws Exception {
    List<Double[]> rows = randomRows(TestData.SEED + 11, input.equals("float"), WIDTHS);
    Dataset<Row> frame = frame(input, rows);
    EmbeddingNormalizer first =
        new EmbeddingNormalizer().setInputCol("x").setOutputCol("unit").setOp("l2_normalize");
    EmbeddingNormalizer second =
        new EmbeddingNormalizer().setInputCol("unit").setOutputCol("scaled").setOp("rms_norm");
    Pipeline pipeline = new Pipeline().setStages(new PipelineStage[] {first, second});

    PipelineModel model = pipeline.fit(frame);
    Map<Integer, List<Double>> fitted = collect(model.transform(frame), "scaled");
    String path = directory.resolve("pipeline").toString();
    model.save(path);
    Map<Integer, List<Double>> loaded =
        collect(PipelineModel.load(path).transform(frame), "scaled");

    assertThat(loaded).isEqualTo(fitted);
    for (int id = 0; id < rows.size(); id++) {
      double[] unit = Reference.compute("l2_normalize", rows.get(id), 1e-12, null, null);
      accuracy(input)
          .assertRow(
              "l2_normalize then rms_norm on "
                  + input
                  + ", row "
                  + id
                  + ", seed "
                  + (TestData.SEED + 11),
              fitted.get(id),
              Reference.compute("rms_norm", unit, 1e-6, null, null));
    }
  }

  /** Sparse vectors are normalized as the dense rows they stand for, and come back dense. */
  @Test
  void sparseVectorsComeBackDense() {
    StructType schema =
        new StructType()
            .add("id", DataTypes.IntegerType, false)
            .add("x", SQLDataTypes.VectorType(), true);
    Dataset<Row> frame =
        spark.createDataFrame(
            List.of(
                RowFactory.create(0, Vectors.sparse(5, new int[] {1, 3}, new double[] {3, -4})),
                RowFactory.create(1, Vectors.sparse(3, new int[] {}, new double[] {}))),
            schema);
    EmbeddingNormalizer normalizer =
        new EmbeddingNormalizer().setInputCol("x").setOutputCol("y").setOp("l2_normalize");

    Dataset<Row> result = normalizer.transform(frame);

    assertThat(result.select("y").collectAsList())
        .allSatisfy(row -> assertThat(row.<Object>getAs("y")).isInstanceOf(DenseVector.class));
    Map<Integer, List<Double>> actual = collect(result, "y");
    Accuracy.DOUBLE.assertRow(
        "sparse row 0",
        actual.get(0),
        Reference.compute(
            "l2_normalize", new Double[] {0.0, 3.0, 0.0, -4.0, 0.0}, 1e-12, null, null));
    assertThat(actual.get(1)).containsExactly(0.0, 0.0, 0.0);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("inputs")
  void savedStageLoadsWithItsParamsAndTransformsIdentically(String input, @TempDir Path directory)
      throws Exception {
    double[] gamma = new Random(TestData.SEED + 13).doubles(WEIGHTED_WIDTH, 0.5, 1.5).toArray();
    EmbeddingNormalizer saved =
        new EmbeddingNormalizer()
            .setInputCol("x")
            .setOutputCol("y")
            .setOp("layer_norm")
            .setEps(1e-3)
            .setWeight(gamma);
    String path = directory.resolve("stage").toString();
    saved.save(path);

    EmbeddingNormalizer loaded = EmbeddingNormalizer.load(path);

    assertThat(loaded.uid()).isEqualTo(saved.uid());
    assertThat(loaded.getInputCol()).isEqualTo("x");
    assertThat(loaded.getOutputCol()).isEqualTo("y");
    assertThat(loaded.getOp()).isEqualTo("layer_norm");
    assertThat(loaded.getEps()).isEqualTo(1e-3);
    assertThat(loaded.getWeight()).containsExactly(gamma);
    Dataset<Row> frame =
        frame(
            input,
            randomRows(TestData.SEED + 13, input.equals("float"), new int[] {WEIGHTED_WIDTH}));
    assertThat(collect(loaded.transform(frame), "y"))
        .isEqualTo(collect(saved.transform(frame), "y"));
  }

  @Test
  void unsetEpsilonAndOutputColumnTakeTheirDefaults() {
    EmbeddingNormalizer normalizer = new EmbeddingNormalizer().setInputCol("x").setOp("softmax");
    assertThat(normalizer.getOutputCol()).isEqualTo(normalizer.uid() + "__output");
    assertThat(normalizer.getWeight()).isNull();
    assertThat(normalizer.setOp("RMS_norm").getOp()).isEqualTo("rms_norm");
    assertThat(normalizer.getEps()).isEqualTo(1e-6);
    EmbeddingNormalizer copy = normalizer.copy(new org.apache.spark.ml.param.ParamMap());
    assertThat(copy.uid()).isEqualTo(normalizer.uid());
    assertThat(copy.getOp()).isEqualTo("rms_norm");
  }

  @Test
  void failsClearlyOnAMissingColumn() {
    EmbeddingNormalizer normalizer =
        new EmbeddingNormalizer().setInputCol("embedding").setOutputCol("y").setOp("rms_norm");
    assertThatThrownBy(() -> normalizer.transform(frame("float", List.of())))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot normalize column 'embedding': there is no such column; the columns are id, x");
  }

  @Test
  void failsClearlyOnAWrongType() {
    StructType strings =
        new StructType()
            .add("x", DataTypes.createArrayType(DataTypes.StringType))
            .add("s", "string");
    EmbeddingNormalizer normalizer =
        new EmbeddingNormalizer().setInputCol("x").setOutputCol("y").setOp("rms_norm");
    assertThatThrownBy(() -> normalizer.transformSchema(strings))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot normalize column 'x': expected array<float>, array<double> or vector, got"
                + " array<string>");
    assertThatThrownBy(() -> normalizer.setInputCol("s").transformSchema(strings))
        .hasMessage(
            "Cannot normalize column 's': expected array<float>, array<double> or vector, got"
                + " string");
    assertThatThrownBy(() -> normalizer.setInputCol("x").setOutputCol("s").transformSchema(strings))
        .hasMessage("Cannot add column 's': the input already has a column of that name");
  }

  @Test
  void failsClearlyOnABadOrMissingOpAndParameters() {
    assertThatThrownBy(() -> new EmbeddingNormalizer().setOp("rmsnorm"))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot parse op 'rmsnorm': expected one of rms_norm, layer_norm, softmax, log_softmax,"
                + " l2_normalize, l1_normalize, linf_normalize");
    StructType schema = frame("float", List.of()).schema();
    EmbeddingNormalizer withoutOp = new EmbeddingNormalizer().setInputCol("x");
    assertThatThrownBy(() -> withoutOp.transformSchema(schema))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot configure "
                + withoutOp.uid()
                + ": op is not set; set it to one of rms_norm, layer_norm, softmax, log_softmax,"
                + " l2_normalize, l1_normalize, linf_normalize");
    assertThatThrownBy(() -> withoutOp.setOp("softmax").setEps(1e-3).transformSchema(schema))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot configure softmax: it takes no eps");
    assertThatThrownBy(
            () ->
                new EmbeddingNormalizer()
                    .setInputCol("x")
                    .setOp("l2_normalize")
                    .setWeight(new double[] {1})
                    .transformSchema(schema))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot configure l2_normalize: it takes no weight");
    assertThatThrownBy(() -> new EmbeddingNormalizer().setEps(-1))
        .isInstanceOf(EmbedNormException.class)
        .hasMessageEndingWith(": it must be a finite number >= 0, got -1.0");
  }

  private static Accuracy accuracy(String input) {
    return input.equals("float") ? Accuracy.FLOAT : Accuracy.DOUBLE;
  }

  private static DataType expectedType(String input) {
    switch (input) {
      case "float":
        return DataTypes.createArrayType(DataTypes.FloatType, false);
      case "double":
        return DataTypes.createArrayType(DataTypes.DoubleType, false);
      default:
        return SQLDataTypes.VectorType();
    }
  }

  /** A float column's weight is rounded to float32, as the SQL functions do. */
  private static double[] roundedWeight(double[] weight, String input) {
    return input.equals("float")
        ? Arrays.stream(weight).map(value -> (float) value).toArray()
        : weight;
  }

  /** Gaussian rows of the given widths, two per width, with scales from 1e-2 to 1e2. */
  private static List<Double[]> randomRows(long seed, boolean asFloat, int[] widths) {
    Random random = new Random(seed);
    List<Double[]> rows = new ArrayList<>();
    for (int width : widths) {
      for (int row = 0; row < 2; row++) {
        double scale = Math.pow(10, random.nextDouble() * 4 - 2);
        double offset = row == 0 ? 0 : random.nextGaussian() * scale;
        Double[] values = new Double[width];
        for (int i = 0; i < width; i++) {
          double value = offset + scale * random.nextGaussian();
          values[i] = asFloat ? (double) (float) value : value;
        }
        rows.add(values);
      }
    }
    return rows;
  }

  /** {@code (id int, x <input>)}: arrays via TestData, vectors dense (null rows stay null). */
  private static Dataset<Row> frame(String input, List<Double[]> rows) {
    if (!input.equals("vector")) {
      return TestData.frame(spark, input, rows);
    }
    StructType schema =
        new StructType()
            .add("id", DataTypes.IntegerType, false)
            .add("x", SQLDataTypes.VectorType(), true);
    List<Row> data = new ArrayList<>();
    for (int id = 0; id < rows.size(); id++) {
      Double[] row = rows.get(id);
      Vector vector =
          row == null
              ? null
              : Vectors.dense(Arrays.stream(row).mapToDouble(Double::doubleValue).toArray());
      data.add(RowFactory.create(id, vector));
    }
    return spark.createDataFrame(data, schema);
  }

  /** id → the output column as doubles (null where null), for arrays and vectors alike. */
  private static Map<Integer, List<Double>> collect(Dataset<Row> result, String column) {
    Map<Integer, List<Double>> values = new HashMap<>();
    for (Row row : result.select("id", column).collectAsList()) {
      Object value = row.get(1);
      List<Double> list = null;
      if (value instanceof Vector vector) {
        list = Arrays.stream(vector.toArray()).boxed().toList();
      } else if (value != null) {
        list = new ArrayList<>();
        for (Object element : row.getList(1)) {
          list.add(((Number) element).doubleValue());
        }
      }
      values.put(row.getInt(0), list);
    }
    return values;
  }
}
