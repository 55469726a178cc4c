"""embednorm from PySpark: session setup and column functions.

The column functions call the SQL functions by name (``F.call_function``), so they work in any
session where the functions are registered: a classic session built with :func:`configure`, one
registered late with :func:`register`, or a Spark Connect session whose server has embednorm's jar
and extension. Semantics are those of the SQL functions (docs/SEMANTICS.md, SQL functions).
"""

import glob
import os

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = [
    "EXTENSION",
    "configure",
    "find_jar",
    "register",
    "rms_norm",
    "layer_norm",
    "softmax",
    "log_softmax",
    "l2_normalize",
    "l1_normalize",
    "linf_normalize",
    "lp_normalize",
    "vector_norm",
    "quantize_int8",
    "quantize_binary",
    "to_float16",
    "to_bfloat16",
    "dequantize_int8",
    "causal_conv",
]

EXTENSION = "io.embednorm.spark.EmbedNormExtensions"

_DEFAULT_EPS = {
    "rms_norm": 1e-6,
    "layer_norm": 1e-5,
    "l2_normalize": 1e-12,
    "l1_normalize": 1e-12,
    "linf_normalize": 1e-12,
}


def find_jar():
    """The spark-submit jar: ``$EMBEDNORM_JAR``, else ``jobs/target`` of this source tree."""
    jar = os.environ.get("EMBEDNORM_JAR")
    if jar:
        if not os.path.isfile(jar):
            raise FileNotFoundError(f"Cannot find embednorm's jar: EMBEDNORM_JAR={jar} is no file")
        return os.path.abspath(jar)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pattern = os.path.join(root, "jobs", "target", "embednorm-jobs-*-spark-submit.jar")
    jars = sorted(glob.glob(pattern))
    if not jars:
        raise FileNotFoundError(
            f"Cannot find embednorm's jar: no {pattern} (run mvn -DskipTests package) "
            "and EMBEDNORM_JAR is not set"
        )
    return jars[-1]


def configure(builder, jar=None):
    """Adds embednorm's jar to ``spark.jars`` and its extension to ``spark.sql.extensions``.

    Keeps jars and extensions already set on ``builder``; returns ``builder``.
    """
    jar = jar or find_jar()
    options = getattr(builder, "_options", {})
    builder.config("spark.jars", _append(options.get("spark.jars"), jar))
    return builder.config(
        "spark.sql.extensions", _append(options.get("spark.sql.extensions"), EXTENSION)
    )


def register(spark):
    """Registers the functions in an existing classic session (one built without the extension).

    The jar must already be on the driver's class path (``spark.jars`` or ``--jars`` at launch).
    Queries then run on the row path; the columnar operator needs :func:`configure` at build time.
    """
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        raise TypeError(
            "Cannot register embednorm's functions: a Spark Connect session has no JVM here; "
            f"start its server with the jar and spark.sql.extensions={EXTENSION}"
        )
    entry = jvm.io.embednorm.spark.EmbedNormExtensions
    try:
        entry.register(spark._jsparkSession)
    except TypeError as error:
        raise RuntimeError(
            f"Cannot register embednorm's functions: {EXTENSION} is not on the driver's class "
            "path; start the session with embednorm's jar in spark.jars"
        ) from error


def rms_norm(col, eps=None, weight=None):
    """``rms_norm(x [, eps [, weight]])``: x / sqrt(mean(x²) + eps) · weight; eps 1e-6."""
    return _call("rms_norm", col, eps, weight)


def layer_norm(col, eps=None, gamma=None, beta=None):
    """``layer_norm(x [, eps [, gamma [, beta]]])``: (x − mean) / sqrt(var + eps) · γ + β; eps 1e-5.

    A ``beta`` without ``gamma`` passes a gamma of ones.
    """
    if beta is not None and gamma is None:
        gamma = [1.0] * len(beta)
    return _call("layer_norm", col, eps, gamma, beta)


def softmax(col):
    """``softmax(x)``: exp(x − max) / Σ exp(x − max)."""
    return _call("softmax", col)


def log_softmax(col):
    """``log_softmax(x)``: x − max − log Σ exp(x − max)."""
    return _call("log_softmax", col)


def l2_normalize(col, eps=None):
    """``l2_normalize(x [, eps])``: x / max(‖x‖₂, eps); eps 1e-12."""
    return _call("l2_normalize", col, eps)


def l1_normalize(col, eps=None):
    """``l1_normalize(x [, eps])``: x / max(Σ|x|, eps); eps 1e-12."""
    return _call("l1_normalize", col, eps)


def linf_normalize(col, eps=None):
    """``linf_normalize(x [, eps])``: x / max(max|x|, eps); eps 1e-12."""
    return _call("linf_normalize", col, eps)


def lp_normalize(col, p, eps=None):
    """``lp_normalize(x, p [, eps])``: l1, l2 or l_inf normalization for p = 1, 2 or infinity.

    ``p`` is a number (``float("inf")`` for infinity) or a column.
    """
    arguments = [_column(col), _number(p)]
    if eps is not None:
        arguments.append(F.lit(float(eps)))
    return F.call_function("lp_normalize", *arguments)


def vector_norm(col, p=None):
    """``vector_norm(x [, p])``: ‖x‖_p of each row, p 2 by default (Spark's own on Spark 4.2)."""
    arguments = [_column(col)] if p is None else [_column(col), _number(p)]
    return F.call_function("vector_norm", *arguments)


def quantize_int8(col):
    """``quantize_int8(x)``: ``struct<values: binary, scale: float>``, scale = max|x| / 127."""
    return F.call_function("quantize_int8", _column(col))


def quantize_binary(col):
    """``quantize_binary(x)``: one sign bit an element (1 where x ≥ 0), little-endian in bytes."""
    return F.call_function("quantize_binary", _column(col))


def to_float16(col):
    """``to_float16(x)``: 2 little-endian bytes an element, rounded to nearest even."""
    return F.call_function("to_float16", _column(col))


def to_bfloat16(col):
    """``to_bfloat16(x)``: 2 little-endian bytes an element, rounded to nearest even."""
    return F.call_function("to_bfloat16", _column(col))


def dequantize_int8(col):
    """``dequantize_int8(s)``: ``array<float>`` of q × scale from ``quantize_int8``'s struct."""
    return F.call_function("dequantize_int8", _column(col))


def causal_conv(col, w, eps=None):
    """``causal_conv(sequence, w [, eps])``: the RWKV causal depthwise convolution.

    ``sequence`` is ``array<array<float>>`` (T steps of C channels); ``w`` is C rows of T_w
    weights, a column or nested Python lists.
    """
    kernel = w if isinstance(w, Column) else F.array(*[_array(row) for row in w])
    arguments = [_column(col), kernel]
    if eps is not None:
        arguments.append(F.lit(float(eps)))
    return F.call_function("causal_conv", *arguments)


def _column(col):
    return F.col(col) if isinstance(col, str) else col


def _number(value):
    return value if isinstance(value, Column) else F.lit(float(value))


def _call(name, col, eps=None, *arrays):
    arguments = [F.col(col) if isinstance(col, str) else col]
    present = [array for array in arrays if array is not None]
    if eps is not None or present:
        arguments.append(F.lit(float(_DEFAULT_EPS[name] if eps is None else eps)))
    arguments.extend(_array(array) for array in present)
    return F.call_function(name, *arguments)


def _array(values):
    if isinstance(values, Column):
        return values
    return F.array(*[F.lit(float(value)) for value in values])


def _append(current, value):
    entries = [entry.strip() for entry in (current or "").split(",") if entry.strip()]
    if value not in entries:
        entries.append(value)
    return ",".join(entries)
