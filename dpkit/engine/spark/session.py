"""The Spark engine's session and the driver's side of its jobs.

:func:`session` starts (or joins) the SparkSession, with a quiet JVM; :func:`_collect` runs a
job and raises a data error an executor met as dpkit's own one-line :class:`DataError`
(:func:`_data_error`, the marker :data:`_MARK` that :mod:`.encode` wraps it in); :data:`STATS`
keeps the jobs' wall times for the benchmark's cost model.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from dpkit.errors import DataError, DpkitUsageError

DEFAULT_MASTER = "local[*]"
#: JVM options for a session dpkit starts on a local master (local[N], local-cluster[...])
_LOCAL_JVM = "-XX:TieredStopAtLevel=1"
#: rows per Arrow batch handed to the numpy code on the executors
BATCH_ROWS = 1 << 16
# a data error crosses from an executor to the driver inside Spark's exception text, which
# also quotes the raising source line: the marker is built so that line does not match
_MARK = ("DPKIT-DATA-ERROR<<", ">>")
_ERR = re.compile(re.escape(_MARK[0]) + "(.*?)" + re.escape(_MARK[1]), re.S)


def session(master: str | None = None) -> Any:
    """The active SparkSession (``spark-submit``) or a new one on ``master`` (``local[*]``)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DpkitUsageError("engine spark needs pyspark: pip install 'dpkit[spark]'", param="engine") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # executors start Python workers: use this interpreter (it has numpy, pyarrow and dpkit)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = master or DEFAULT_MASTER
    java = f"-Dlog4j.configurationFile={_quiet_log4j()}"
    if master.startswith("local"):
        # a JVM that lives for one dpkit run on this machine: the C1 compiler only. Its JIT
        # threads no longer compete with the job for the cores, and the JVM does little per
        # row here (the executors' Python encodes; the cache holds packed batches): session
        # start and first jobs faster (docs/decisions/0010-spark-local-jvm.md)
        java += " " + _LOCAL_JVM
    builder = (
        SparkSession.builder.master(master).appName("dpkit")
        .config("spark.driver.extraJavaOptions", java)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))
        .config("spark.sql.shuffle.partitions", "8")
    )
    if master.startswith("local"):
        builder = builder.config("spark.executor.extraJavaOptions", _LOCAL_JVM)  # local-cluster's executors
    import time

    start = time.perf_counter()
    with _jvm_stderr_quiet():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    STATS["session"] = [time.perf_counter() - start]
    if os.environ.get("DPKIT_SPARK_STATS"):
        import atexit

        atexit.register(_print_stats)
    return spark


@contextlib.contextmanager
def _jvm_stderr_quiet() -> Iterator[None]:
    """Start the JVM with its stderr on /dev/null unless -v was given: its start-up
    lines ("Using incubator modules", "Setting default log level") are printed before any
    log4j configuration applies, and dpkit's stderr is one line per warning or error. The
    JVM inherits the descriptor for its life; its failures reach dpkit as exceptions. PySpark's
    "does not yet fully support pandas >= 3.0.0" warning is dropped too (the engines' outputs
    are tested byte-identical on the pandas installed)."""
    from dpkit.console import verbose

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    if verbose():
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


_LOG4J = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
"""


def _quiet_log4j() -> str:
    """A log4j2 configuration that keeps Spark's JVM quiet on stderr: dpkit's stderr is one
    line per warning or error (docs/errors.md); Spark's failures reach dpkit as exceptions."""
    import atexit
    import tempfile

    fd, path = tempfile.mkstemp(prefix="dpkit-log4j2-", suffix=".properties")  # private (0600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J)
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path


def _data_error(exc: BaseException) -> DataError | None:
    """The dpkit message a failed Spark job carries, if the failure was one."""
    m = _ERR.search(str(exc))
    return DataError(m.group(1)) if m else None


#: jobs run and their wall seconds, by kind (``$DPKIT_SPARK_STATS=1`` prints them at exit:
#: the benchmark's cost model, bench/bench_spark.py)
STATS: dict[str, list[float]] = {}


def _collect(df: Any, kind: str = "aggregate") -> list[Any]:
    """``df.collect()`` with dpkit's data errors raised as themselves (no Java traceback)."""
    import time

    start = time.perf_counter()
    try:
        rows = df.collect()
    except Exception as exc:  # py4j / pyspark wrap the executor's exception
        err = _data_error(exc)
        if err is not None:
            raise err from None
        raise
    STATS.setdefault(kind, []).append(time.perf_counter() - start)
    STATS.setdefault(kind + " rows", []).append(float(len(rows)))
    return rows


def _print_stats() -> None:
    """The job timings; the rows per job (e.g. publish's occupied cells: a count of the private
    data) only under the private-detail rule (dpkit.console)."""
    import json

    from dpkit.console import owner_watching

    shown = STATS if owner_watching() else {k: v for k, v in STATS.items() if not k.endswith(" rows")}
    print("dpkit-spark-stats " + json.dumps(shown), file=sys.stderr)
