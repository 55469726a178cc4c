package io.embednorm.spark;

import io.embednorm.kernels.DeviceChoice;
import io.embednorm.kernels.EmbedNormException;
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
   * Where the SQL functions run: {@code auto}, {@code cpu} or {@code gpu}. Today every query runs
   * on the CPU row path; {@code gpu} is checked so that jobs asking for it fail early and clearly
   * when no GPU is usable.
   */
  public static final Entry<DeviceChoice> DEVICE =
      new Entry<>(
          PREFIX + "device",
          "auto | cpu | gpu",
          DeviceChoice.AUTO,
          "Where the embednorm SQL functions, DataFrame functions and ML stage run. `cpu`: the"
              + " CPU row path. `gpu`: fails the query, saying why, when no GPU is usable (at"
              + " analysis with the extension installed, otherwise at execution). `auto`: the GPU"
              + " when one is usable, else the CPU. The columnar GPU operator is not built yet:"
              + " until it lands every query runs on the CPU row path, and `gpu` with a usable GPU"
              + " logs a warning saying so.",
          EmbedNormConfig::parseDevice,
          "one of auto, cpu, gpu");

  /** Rows per batch that the columnar operator sends to the device. */
  public static final Entry<Integer> BATCH_ROWS =
      new Entry<>(
          PREFIX + "batchRows",
          "positive integer",
          4096,
          "Rows per batch that the columnar GPU operator sends to the device (when it batches rows"
              + " itself rather than taking a columnar scan's batches). Read and validated now;"
              + " used once the columnar GPU operator lands.",
          EmbedNormConfig::parsePositiveInteger,
          "a positive integer");

  /** Tasks of one executor that may use the GPU at once. */
  public static final Entry<Integer> CONCURRENT_GPU_TASKS =
      new Entry<>(
          PREFIX + "concurrentGpuTasks",
          "positive integer",
          1,
          "How many tasks of one executor may use the GPU at the same time; the others wait, so"
              + " that device memory is not oversubscribed. Read and validated now; used once the"
              + " columnar GPU operator lands.",
          EmbedNormConfig::parsePositiveInteger,
          "a positive integer");

  /** Whether to log where each embednorm function runs and why. */
  public static final Entry<Boolean> EXPLAIN =
      new Entry<>(
          PREFIX + "explain",
          "boolean",
          false,
          "Log, for each query using the embednorm functions, which functions run on the GPU or"
              + " the CPU and why (today always the CPU row path).",
          EmbedNormConfig::parseBoolean,
          "true or false");

  private static final List<Entry<?>> ENTRIES =
      List.of(DEVICE, BATCH_ROWS, CONCURRENT_GPU_TASKS, EXPLAIN);

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
