package io.embednorm.spark;

import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.EmbedNormException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import scala.Tuple2;

/**
 * Every {@code spark.embednorm.*} setting, typed, with its default and documentation: the one place
 * that names them, so that code, validation and docs/CONFIGURATION.md (generated from {@link
 * #entries()} and tested against it) cannot drift apart.
 *
 * <p>Settings are read from a session's SQL conf (which also holds what was set on the {@code
 * SparkConf} or with {@code spark-submit --conf}), from a {@link SparkConf}, or from any lookup
 * function. A value that does not parse is an {@link EmbedNormException} naming the key, what was
 * expected and what was found, e.g. {@code Cannot read spark.embednorm.batchRows: expected a
 * positive integer, got 'abc'}.
 */
public final class EmbedNormConfig {
  /** The prefix shared by every key. */
  public static final String PREFIX = "spark.embednorm.";

  /**
   * Where the columnar operator runs: {@code auto}, {@code cpu} or {@code gpu}; {@code gpu} is
   * checked at analysis so that jobs asking for it fail early and clearly when no GPU is usable.
   */
  public static final Entry<DeviceChoice> DEVICE =
      new Entry<>(
          PREFIX + "device",
          "auto | cpu | gpu",
          DeviceChoice.AUTO,
          "Where the columnar operator runs the embednorm functions. `cpu`: the CPU engine."
              + " `gpu`: the GPU that Spark assigned to the task (`TaskContext.resources()`, else"
              + " GPU 0); fails the query, saying why, when no GPU is usable (at analysis with the"
              + " extension installed, otherwise at execution). `auto`: the GPU when the executor"
              + " has a usable one, else the CPU engine, logging why. A batch that fails on the GPU"
              + " runs again on the CPU engine. Projections the operator cannot take, and sessions"
              + " without the extension, run on the CPU row path (the expression's generated"
              + " code).",
          EmbedNormConfig::parseDevice,
          "one of auto, cpu, gpu");

  /** Rows per batch when the columnar operator batches rows itself. */
  public static final Entry<Integer> BATCH_ROWS =
      new Entry<>(
          PREFIX + "batchRows",
          "positive integer",
          4096,
          "Rows per batch when the columnar operator batches rows itself, because its input"
              + " produces rows; over a columnar scan (Parquet, ORC) it takes the scan's batches"
              + " (`spark.sql.parquet.columnarReaderBatchSize`).",
          EmbedNormConfig::parsePositiveInteger,
          "a positive integer");

  /** Tasks of one executor that may use the GPU at once. */
  public static final Entry<Integer> CONCURRENT_GPU_TASKS =
      new Entry<>(
          PREFIX + "concurrentGpuTasks",
          "positive integer",
          1,
          "How many tasks of one executor may use one GPU at the same time; the others wait, so"
              + " that device memory is not oversubscribed.",
          EmbedNormConfig::parsePositiveInteger,
          "a positive integer");

  /** Whether explain output and logs say where each embednorm function runs and why. */
  public static final Entry<Boolean> EXPLAIN =
      new Entry<>(
          PREFIX + "explain",
          "boolean",
          false,
          "Show which embednorm functions run on the GPU or the CPU and why. In `EXPLAIN`"
              + " output, the columnar operator's line says where it runs (GPU or CPU engine) and"
              + " why, and each call left on the CPU row path carries the reason, as in"
              + " `rms_norm(x#1) [CPU row path: (id + 1) is neither a column nor an embednorm"
              + " function]`; log lines (INFO) say the same for each query and each projection"
              + " that stays on the row path. Changes no result and no plan otherwise.",
          EmbedNormConfig::parseBoolean,
          "true or false");

  /** Whether eligible projections run in the columnar operator. */
  public static final Entry<Boolean> COLUMNAR =
      new Entry<>(
          PREFIX + "columnar",
          "boolean",
          true,
          "Whether projections of embednorm functions run in the columnar operator (with"
              + " `spark.sql.extensions=io.embednorm.spark.EmbedNormExtensions`). `false` keeps"
              + " every query on the CPU row path.",
          EmbedNormConfig::parseBoolean,
          "true or false");

  private static final List<Entry<?>> ENTRIES =
      List.of(DEVICE, BATCH_ROWS, CONCURRENT_GPU_TASKS, EXPLAIN, COLUMNAR);

  private EmbedNormConfig() {}

  /** Every setting, in documentation order. */
  public static List<Entry<?>> entries() {
    return ENTRIES;
  }

  /** The setting named {@code name}, if there is one. */
  public static Optional<Entry<?>> entry(String name) {
    return ENTRIES.stream().filter(entry -> entry.name().equals(name)).findFirst();
  }

  /**
   * Checks every {@code spark.embednorm.*} key in {@code settings}: each must be known and its
   * value must parse. Catches misspelt keys, which would otherwise be silently ignored.
   */
  public static void validate(Map<String, String> settings) {
    for (Map.Entry<String, String> setting : new TreeMap<>(settings).entrySet()) {
      if (!setting.getKey().startsWith(PREFIX)) {
        continue;
      }
      Entry<?> known =
          entry(setting.getKey())
              .orElseThrow(
                  () ->
                      new EmbedNormException(
                          "Cannot read "
                              + setting.getKey()
                              + ": no such setting; known settings are "
                              + ENTRIES.stream()
                                  .map(Entry::name)
                                  .collect(Collectors.joining(", "))));
      known.parse(setting.getValue());
    }
  }

  /** {@link #validate(Map)} over every setting of {@code conf}. */
  public static void validate(SparkConf conf) {
    Map<String, String> settings = new TreeMap<>();
    for (Tuple2<String, String> setting : conf.getAll()) {
      settings.put(setting._1(), setting._2());
    }
    validate(settings);
  }

  /**
   * One typed setting.
   *
   * @param <T> the type its value parses to
   */
  public static final class Entry<T> {
    private final String name;
    private final String type;
    private final T defaultValue;
    private final String documentation;
    private final Function<String, T> parser;
    private final String expected;

    private Entry(
        String name,
        String type,
        T defaultValue,
        String documentation,
        Function<String, T> parser,
        String expected) {
      this.name = name;
      this.type = type;
      this.defaultValue = defaultValue;
      this.documentation = documentation;
      this.parser = parser;
      this.expected = expected;
    }

    /** The full key, e.g. {@code spark.embednorm.device}. */
    public String name() {
      return name;
    }

    /** The accepted values in words, e.g. {@code positive integer}. */
    public String type() {
      return type;
    }

    public T defaultValue() {
      return defaultValue;
    }

    /** The default as it would be written in a conf file, e.g. {@code auto}. */
    public String defaultText() {
      return String.valueOf(defaultValue);
    }

    /** What the setting does, in Markdown. */
    public String documentation() {
      return documentation;
    }

    /**
     * Parses a value as it appears in a conf; surrounding whitespace is ignored.
     *
     * @throws EmbedNormException naming the key, what was expected and what was found
     */
    public T parse(String value) {
      T parsed = value == null ? null : parser.apply(value.trim());
      if (parsed == null) {
        throw new EmbedNormException(
            "Cannot read " + name + ": expected " + expected + ", got '" + value + "'");
      }
      return parsed;
    }

    /** The value from {@code lookup} (null when unset), or the default when unset. */
    public T read(Function<String, String> lookup) {
      String value = lookup.apply(name);
      return value == null ? defaultValue : parse(value);
    }

    public T read(SparkConf conf) {
      return read(key -> conf.contains(key) ? conf.get(key) : null);
    }

    /**
     * The value from a SQL conf, which holds the session's runtime settings ({@code SET
     * spark.embednorm.device=gpu}) on top of the {@code SparkConf}.
     */
    public T read(SQLConf conf) {
      return read(key -> conf.contains(key) ? conf.getConfString(key) : null);
    }

    /** The value from the session's runtime conf ({@code spark.conf()}). */
    public T read(SparkSession session) {
      return read(
          key -> {
            scala.Option<String> value = session.conf().getOption(key);
            return value.isDefined() ? value.get() : null;
          });
    }

    @Override
    public String toString() {
      return name + " (" + type + ", default " + defaultText() + ")";
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Entry<?> entry && entry.name.equals(name);
    }

    @Override
    public int hashCode() {
      return Objects.hash(name);
    }
  }

  private static DeviceChoice parseDevice(String value) {
    try {
      return DeviceChoice.fromName(value);
    } catch (EmbedNormException unknown) {
      return null;
    }
  }

  private static Integer parsePositiveInteger(String value) {
    try {
      int parsed = Integer.parseInt(value);
      return parsed > 0 ? parsed : null;
    } catch (NumberFormatException notANumber) {
      return null;
    }
  }

  private static Boolean parseBoolean(String value) {
    switch (value.toLowerCase(Locale.ROOT)) {
      case "true":
        return Boolean.TRUE;
      case "false":
        return Boolean.FALSE;
      default:
        return null;
    }
  }
}
