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
]

EXTENSION = "io.embednorm.spark.EmbedNormExtensions"

_DEFAULT_EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5, "l2_normalize": 1e-12}


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
