package io.embednorm.spark.ml;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.spark.EmbedNormFunctions;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.apache.spark.ml.Transformer;
import org.apache.spark.ml.functions;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DefaultParamsReader;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A Spark ML stage that adds a normalized copy of an embedding column, for use in a {@code
 * Pipeline}:
 *
 * <pre>{@code
 * EmbeddingNormalizer normalizer = new EmbeddingNormalizer()
 *     .setInputCol("embedding").setOutputCol("normalized").setOp("rms_norm");
 * Dataset<Row> out = normalizer.transform(items);
 * }</pre>
 *
 * <p>Params: {@code inputCol} (required), {@code outputCol} (default {@code <uid>__output}), {@code
 * op} (required: {@code rms_norm}, {@code layer_norm}, {@code softmax}, {@code log_softmax} or
 * {@code l2_normalize}), {@code eps} (optional; the op's default when unset; softmax and
 * log_softmax take none) and {@code weight} (optional; RMSNorm's weight or LayerNorm's gamma, one
 * value per column).
 *
 * <p>Input and output types: {@code array<float>} gives {@code array<float>}, {@code array<double>}
 * gives {@code array<double>}, and an ML {@code Vector} gives a dense {@code Vector} (normalized in
 * float64, so sparse vectors come back dense). Null rows and rows with a null element give null, as
 * the SQL functions do. The computation is the embednorm SQL expression ({@link
 * EmbedNormFunctions#normalize}), so results equal those of {@code rms_norm(x)} and so on.
 *
 * <p>Saved and loaded with {@code save(path)} / {@link #load(String)} (Spark's default params
 * format), also inside a saved {@code PipelineModel}.
 */
public final class EmbeddingNormalizer extends Transformer implements DefaultParamsWritable {
  private static final long serialVersionUID = 1L;

  private final String uid;
  private final Param<String> inputCol;
  private final Param<String> outputCol;
  private final Param<String> op;
  private final DoubleParam eps;
  private final DoubleArrayParam weight;

  public EmbeddingNormalizer() {
    this(Identifiable.randomUID("embeddingNormalizer"));
  }

  /** Spark's reader re-creates saved stages through this constructor. */
  public EmbeddingNormalizer(String uid) {
    this.uid = uid;
    this.inputCol = new Param<>(this, "inputCol", "the embedding column to normalize");
    this.outputCol = new Param<>(this, "outputCol", "the column to add with the result");
    this.op =
        new Param<>(
            this,
            "op",
            "the normalization: " + opNames(),
            ParamValidators.inArray(
                Arrays.stream(Op.values()).map(Op::sqlName).toArray(String[]::new)));
    this.eps =
        new DoubleParam(
            this,
            "eps",
            "epsilon of rms_norm, layer_norm and l2_normalize; the op's default when unset",
            ParamValidators.gtEq(0));
    this.weight =
        new DoubleArrayParam(
            this,
            "weight",
            "per-column weight: RMSNorm's weight or LayerNorm's gamma; none when unset");
    setDefault(outputCol, uid + "__output");
  }

  @Override
  public String uid() {
    return uid;
  }

  public Param<String> inputCol() {
    return inputCol;
  }

  public Param<String> outputCol() {
    return outputCol;
  }

  public Param<String> op() {
    return op;
  }

  public DoubleParam eps() {
    return eps;
  }

  public DoubleArrayParam weight() {
    return weight;
  }

  public String getInputCol() {
    return $(inputCol);
  }

  public String getOutputCol() {
    return $(outputCol);
  }

  public String getOp() {
    return $(op);
  }

  /** The epsilon set on this stage; the op's default when unset. */
  public double getEps() {
    return isDefined(eps) ? (Double) $(eps) : Op.fromName(getOp()).defaultEpsilon();
  }

  /** The weight set on this stage, or null when unset. */
  public double[] getWeight() {
    return isDefined(weight) ? $(weight) : null;
  }

  public EmbeddingNormalizer setInputCol(String value) {
    return (EmbeddingNormalizer) set(inputCol, value);
  }

  public EmbeddingNormalizer setOutputCol(String value) {
    return (EmbeddingNormalizer) set(outputCol, value);
  }

  /**
   * Sets the op by its SQL name, e.g. {@code rms_norm}.
   *
   * @throws EmbedNormException naming the accepted ops when {@code value} is none of them
   */
  public EmbeddingNormalizer setOp(String value) {
    return (EmbeddingNormalizer) set(op, Op.fromName(value).sqlName());
  }

  public EmbeddingNormalizer setEps(double value) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new EmbedNormException(
          "Cannot set eps of " + uid + ": it must be a finite number >= 0, got " + value);
    }
    return (EmbeddingNormalizer) set(eps, value);
  }

  public EmbeddingNormalizer setWeight(double[] value) {
    return (EmbeddingNormalizer) set(weight, value.clone());
  }

  /**
   * The op with this stage's eps and weight.
   *
   * @throws EmbedNormException when op is unset, or eps or weight do not fit the op
   */
  public Normalization normalization() {
    if (!isDefined(op)) {
      throw new EmbedNormException(
          "Cannot configure " + uid + ": op is not set; set it to one of " + opNames());
    }
    Op chosen = Op.fromName(getOp());
    Normalization result = Normalization.of(chosen);
    if (isDefined(eps)) {
      result = result.withEpsilon((Double) $(eps));
    }
    if (isDefined(weight)) {
      result = result.withWeight($(weight));
    }
    return result;
  }

  @Override
  public StructType transformSchema(StructType schema) {
    normalization();
    if (!isDefined(inputCol)) {
      throw new EmbedNormException("Cannot configure " + uid + ": inputCol is not set");
    }
    String input = getInputCol();
    String output = getOutputCol();
    if (!Arrays.asList(schema.fieldNames()).contains(input)) {
      throw new EmbedNormException(
          "Cannot normalize column '"
              + input
              + "': there is no such column; the columns are "
              + String.join(", ", schema.fieldNames()));
    }
    if (Arrays.asList(schema.fieldNames()).contains(output)) {
      throw new EmbedNormException(
          "Cannot add column '" + output + "': the input already has a column of that name");
    }
    DataType inputType = schema.apply(input).dataType();
    return schema.add(new StructField(output, outputType(input, inputType), true, emptyMetadata()));
  }

  @Override
  public Dataset<Row> transform(Dataset<?> dataset) {
    transformSchema(dataset.schema());
    Normalization normalization = normalization();
    String input = getInputCol();
    Column column = dataset.col(input);
    DataType inputType = dataset.schema().apply(input).dataType();
    Column result;
    if (isVector(inputType)) {
      // vector_to_array and array_to_vector reject nulls; a vector never holds a null element, so
      // the result is null exactly where the input is.
      Column normalized =
          EmbedNormFunctions.normalize(functions.vector_to_array(column, "float64"), normalization);
      result =
          org.apache.spark.sql.functions.when(
              column.isNotNull(), functions.array_to_vector(normalized));
    } else {
      result = EmbedNormFunctions.normalize(column, normalization);
    }
    return dataset.withColumn(getOutputCol(), result);
  }

  @Override
  public EmbeddingNormalizer copy(ParamMap extra) {
    return (EmbeddingNormalizer) defaultCopy(extra);
  }

  /** The reader of saved stages; Spark's pipeline reader finds it by reflection. */
  public static MLReader<EmbeddingNormalizer> read() {
    return new DefaultParamsReader<>();
  }

  /** Loads a stage saved with {@code save(path)}. */
  public static EmbeddingNormalizer load(String path) {
    return read().load(path);
  }

  @Override
  public String toString() {
    return "EmbeddingNormalizer: uid=" + uid + (isDefined(op) ? ", op=" + getOp() : "");
  }

  private static DataType outputType(String input, DataType inputType) {
    if (isVector(inputType)) {
      return SQLDataTypes.VectorType();
    }
    if (inputType instanceof ArrayType array
        && (array.elementType().equals(DataTypes.FloatType)
            || array.elementType().equals(DataTypes.DoubleType))) {
      return DataTypes.createArrayType(array.elementType(), false);
    }
    throw new EmbedNormException(
        "Cannot normalize column '"
            + input
            + "': expected array<float>, array<double> or vector, got "
            + inputType.simpleString());
  }

  private static boolean isVector(DataType type) {
    return type.equals(SQLDataTypes.VectorType());
  }

  private static org.apache.spark.sql.types.Metadata emptyMetadata() {
    return org.apache.spark.sql.types.Metadata.empty();
  }

  private static String opNames() {
    return Arrays.stream(Op.values()).map(Op::sqlName).collect(Collectors.joining(", "));
  }
}
