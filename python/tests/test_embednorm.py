"""embednorm's PySpark helper against real PySpark and a float64 reference (math module).

Each scenario runs in its own Python process, so each gets its own driver JVM:
- configure: a new session built with embednorm.configure(builder): F.expr, F.call_function and
  the helper's column functions, on the columnar operator; vector_norm, and quantize_int8 read
  back through dequantize_int8;
- register: a session with the jar but without the extension, registered late with
  embednorm.register(spark), on the row path.

Needs pyspark and py4j on PYTHONPATH, SPARK_HOME, and EMBEDNORM_JAR (or a built jobs/target).
Seed: EMBEDNORM_TEST_SEED, else random; printed.
"""

import logging
import math
import os
import random
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WIDTHS = [1, 3, 8, 33, 100]
ROWS_PER_WIDTH = 3
FLOAT_BOUND = (1e-5, 1e-6)
DOUBLE_BOUND = (1e-12, 1e-13)


def to_float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


# The reference: each op's formula in float64, written plainly.


def rms_norm(x, eps=1e-6, weight=None):
    scale = 1.0 / math.sqrt(sum(v * v for v in x) / len(x) + eps)
    weight = weight or [1.0] * len(x)
    return [v * scale * w for v, w in zip(x, weight)]


def layer_norm(x, eps=1e-5, gamma=None, beta=None):
    mean = sum(x) / len(x)
    variance = sum((v - mean) ** 2 for v in x) / len(x)
    scale = 1.0 / math.sqrt(variance + eps)
    gamma = gamma or [1.0] * len(x)
    beta = beta or [0.0] * len(x)
    return [(v - mean) * scale * g + b for v, g, b in zip(x, gamma, beta)]


def softmax(x):
    top = max(x)
    exponentials = [math.exp(v - top) for v in x]
    total = sum(exponentials)
    return [e / total for e in exponentials]


def log_softmax(x):
    top = max(x)
    log_total = math.log(sum(math.exp(v - top) for v in x))
    return [v - top - log_total for v in x]


def l2_normalize(x, eps=1e-12):
    norm = math.sqrt(sum(v * v for v in x))
    return [v / max(norm, eps) for v in x]


def l1_normalize(x, eps=1e-12):
    total = sum(abs(v) for v in x)
    return [v / max(total, eps) for v in x]


def linf_normalize(x, eps=1e-12):
    largest = max(abs(v) for v in x)
    return [v / max(largest, eps) for v in x]


def check_row(context, actual, expected, bound):
    relative, absolute = bound
    if actual is None or len(actual) != len(expected):
        raise AssertionError(f"{context}: got {actual}, reference {expected}")
    largest = max(abs(r) for r in expected)
    for index, (y, r) in enumerate(zip(actual, expected)):
        if not abs(y - r) <= relative * abs(r) + absolute * largest:
            raise AssertionError(
                f"{context}: element {index} of {len(expected)} is {y!r}, reference {r!r}"
            )


def sample_rows(seed):
    generator = random.Random(seed)
    rows = []
    for width in WIDTHS:
        for _ in range(ROWS_PER_WIDTH):
            rows.append([to_float32(generator.gauss(0.0, 3.0)) for _ in range(width)])
    return rows


def new_builder():
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("embednorm-pyspark-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        # Otherwise the optimizer evaluates projections of local data while planning.
        .config(
            "spark.sql.optimizer.excludedRules",
            "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation",
        )
    )


def frame(spark, rows, element_type):
    schema = f"id int, embedding array<{element_type}>"
    return spark.createDataFrame([(i, row) for i, row in enumerate(rows)], schema)


def cases(seed):
    """(name, column builder, reference, element type) for every surface and parameter form."""
    import embednorm
    from pyspark.sql import functions as F

    generator = random.Random(seed + 1)
    weight = [to_float32(generator.uniform(0.5, 1.5)) for _ in range(max(WIDTHS))]
    bias = [to_float32(generator.uniform(-1.0, 1.0)) for _ in range(max(WIDTHS))]
    result = []
    for element_type in ("float", "double"):
        result += [
            ('F.expr("rms_norm(embedding)")', lambda: F.expr("rms_norm(embedding)"),
             rms_norm, element_type),
            ('F.call_function("rms_norm", ...)',
             lambda: F.call_function("rms_norm", F.col("embedding")), rms_norm, element_type),
            ("F.expr(softmax)", lambda: F.expr("softmax(embedding)"), softmax, element_type),
            ("F.call_function(l2_normalize, eps)",
             lambda: F.call_function("l2_normalize", F.col("embedding"), F.lit(0.5)),
             lambda x: l2_normalize(x, 0.5), element_type),
            ("embednorm.rms_norm", lambda: embednorm.rms_norm("embedding"), rms_norm,
             element_type),
            ("embednorm.layer_norm", lambda: embednorm.layer_norm(F.col("embedding")),
             layer_norm, element_type),
            ("embednorm.softmax", lambda: embednorm.softmax("embedding"), softmax, element_type),
            ("embednorm.log_softmax", lambda: embednorm.log_softmax("embedding"), log_softmax,
             element_type),
            ("embednorm.l2_normalize", lambda: embednorm.l2_normalize("embedding"),
             l2_normalize, element_type),
            ("embednorm.l2_normalize(eps=2.0)",
             lambda: embednorm.l2_normalize("embedding", eps=2.0),
             lambda x: l2_normalize(x, 2.0), element_type),
            ("embednorm.l1_normalize", lambda: embednorm.l1_normalize("embedding"),
             l1_normalize, element_type),
            ("embednorm.linf_normalize(eps=0.5)",
             lambda: embednorm.linf_normalize("embedding", eps=0.5),
             lambda x: linf_normalize(x, 0.5), element_type),
            ("embednorm.lp_normalize(p=1)", lambda: embednorm.lp_normalize("embedding", 1),
             l1_normalize, element_type),
            ("embednorm.lp_normalize(p=inf)",
             lambda: embednorm.lp_normalize("embedding", float("inf")), linf_normalize,
             element_type),
        ]
    # Weights of one width: these cases run on the rows of the widest width only.
    width = max(WIDTHS)
    result += [
        (f"embednorm.rms_norm(eps=1e-3, weight) width {width}",
         lambda: embednorm.rms_norm("embedding", eps=1e-3, weight=weight),
         lambda x: rms_norm(x, 1e-3, weight), "float"),
        (f"embednorm.layer_norm(gamma, beta) width {width}",
         lambda: embednorm.layer_norm("embedding", gamma=weight, beta=bias),
         lambda x: layer_norm(x, 1e-5, weight, bias), "float"),
        (f"embednorm.layer_norm(eps=0.1, beta) width {width}",
         lambda: embednorm.layer_norm("embedding", eps=0.1, beta=bias),
         lambda x: layer_norm(x, 0.1, None, bias), "double"),
    ]
    return result


def check_cases(spark, seed, path):
    """Runs every case on the sample rows, one query per element type and width selection;
    returns how many results were checked."""
    rows = sample_rows(seed)
    groups = {}
    for case in cases(seed):
        wide_only = "width" in case[0]
        groups.setdefault((case[3], wide_only), []).append(case)
    checked = 0
    for (element_type, wide_only), group in groups.items():
        selected = [r for r in rows if len(r) == max(WIDTHS)] if wide_only else rows
        columns = [column().alias(f"c{i}") for i, (_, column, _, _) in enumerate(group)]
        result = frame(spark, selected, element_type).select("id", *columns)
        plan = result._jdf.queryExecution().executedPlan().toString()
        if ("EmbedNormProject" in plan) != (path == "columnar"):
            raise AssertionError(f"expected the {path} path, plan:\n{plan}")
        bound = FLOAT_BOUND if element_type == "float" else DOUBLE_BOUND
        for row in result.collect():
            x = selected[row["id"]]
            for i, (name, _, reference, _) in enumerate(group):
                context = (
                    f"seed {seed}, {name} on array<{element_type}>, row {row['id']} "
                    f"(width {len(x)})"
                )
                check_row(context, row[f"c{i}"], reference(x), bound)
                checked += 1
    return checked


def check_norms_and_int8(spark, seed):
    """vector_norm against the float64 norm (within the float bound), and quantize_int8 then
    dequantize_int8: every element within half a quantization step of the input; causal_conv on
    the README's example."""
    import embednorm
    from pyspark.sql import functions as F

    rows = sample_rows(seed)
    result = frame(spark, rows, "float").select(
        "id",
        embednorm.vector_norm("embedding").alias("norm"),
        embednorm.quantize_int8("embedding").alias("q"),
        embednorm.dequantize_int8(embednorm.quantize_int8("embedding")).alias("back"),
    )
    checked = 0
    for row in result.collect():
        x = rows[row["id"]]
        context = f"seed {seed}, row {row['id']} (width {len(x)})"
        norm = math.sqrt(sum(v * v for v in x))
        if not abs(row["norm"] - norm) <= 1e-6 * norm:
            raise AssertionError(f"{context}: vector_norm {row['norm']!r}, reference {norm!r}")
        scale = max(abs(v) for v in x) / 127.0
        if not abs(row["q"]["scale"] - scale) <= 1e-6 * scale:
            raise AssertionError(f"{context}: scale {row['q']['scale']!r}, reference {scale!r}")
        if len(row["q"]["values"]) != len(x):
            raise AssertionError(f"{context}: {len(row['q']['values'])} int8 values")
        for index, (y, v) in enumerate(zip(row["back"], x)):
            if not abs(y - v) <= (0.5 + 1e-4) * scale:
                raise AssertionError(f"{context}: element {index} dequantized {y!r}, input {v!r}")
        checked += 3
    # causal_conv: out[t] = Σ_{u≤t} w[T_w−1−(t−u)]·k[u]; with k = [1, 2] and w = [10, 1]: [1, 12].
    sequence = F.array(F.array(F.lit(1.0)), F.array(F.lit(2.0))).cast("array<array<float>>")
    mixed = spark.range(1).select(embednorm.causal_conv(sequence, [[10.0, 1.0]]).alias("y"))
    if [list(step) for step in mixed.first()["y"]] != [[1.0], [12.0]]:
        raise AssertionError(f"causal_conv gave {mixed.first()['y']}, reference [[1.0], [12.0]]")
    return checked + 1


def scenario_configure(seed):
    import embednorm

    spark = embednorm.configure(new_builder()).getOrCreate()
    try:
        checked = check_norms_and_int8(spark, seed)
        checked += check_cases(spark, seed, "columnar")
        print(f"configure: {checked} results match the reference (seed {seed})")
    finally:
        spark.stop()


def scenario_register(seed):
    import embednorm
    from pyspark.errors import AnalysisException

    spark = new_builder().config("spark.jars", embednorm.find_jar()).getOrCreate()
    # PySpark logs every failed query at ERROR; the first one here is expected.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    try:
        try:
            spark.sql("SELECT rms_norm(array(1.0f))").collect()
            raise AssertionError("rms_norm resolved before register()")
        except AnalysisException as error:
            if "UNRESOLVED_ROUTINE" not in str(error):
                raise
        embednorm.register(spark)
        checked = check_cases(spark, seed, "row")
        print(f"register: {checked} results match the reference (seed {seed})")
    finally:
        spark.stop()


SCENARIOS = {"configure": scenario_configure, "register": scenario_register}


class EmbedNormPySparkTest(unittest.TestCase):
    seed = int(os.environ.get("EMBEDNORM_TEST_SEED", random.randrange(1 << 31)))

    def run_scenario(self, name):
        print(f"{name}: seed {self.seed}", flush=True)
        completed = subprocess.run(
            [sys.executable, os.path.abspath(__file__), name, str(self.seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        print(completed.stdout, flush=True)
        self.assertEqual(completed.returncode, 0, f"scenario {name} failed (seed {self.seed})")

    def test_configure_on_a_new_session(self):
        self.run_scenario("configure")

    def test_register_on_an_existing_session(self):
        self.run_scenario("register")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in SCENARIOS:
        SCENARIOS[sys.argv[1]](int(sys.argv[2]))
    else:
        unittest.main(verbosity=2)
