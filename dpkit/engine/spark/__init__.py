"""The Spark engine: the frame protocol as Spark aggregations (docs/spark.md).

Spark reads the input itself (CSV with the dialect of :class:`~dpkit.io.source.ReadOptions`,
or Parquet; any path or URI Spark reads). Each batch of rows is encoded on the executors by
the *same* function as the numpy engine (:func:`dpkit.data.encode.encode`: leaf codes from the
schema's public taxonomy, numbers clipped to the public bounds), and each primitive evaluates
its keys with the same :func:`dpkit.engine.keys.evaluate` inside ``mapInArrow``, adds the
counts of a batch up, and lets Spark add the partial counts by key (``groupBy().sum()``).
The driver receives aggregates only — counts per cell, per (value, key), exact sums — never
a row. Integer counts and exact sums do not depend on how the rows are split into
partitions, so both engines return the same numbers and dpkit's outputs are byte-identical.

One module a job: :mod:`.session` (the SparkSession and the driver's side of a job),
:mod:`.read` (reading the input into a frame), :mod:`.encode` (the executors' encoding of a
batch), :mod:`.packed` (the cached batches' format), :mod:`.frame` (the frame protocol's
primitives), :mod:`.strings` (the string frame), :mod:`.rows` (jobs that release nothing)
and :mod:`.write` (row-level outputs written by Spark).
"""

import warnings

# PySpark 4.x warns on every pandas >= 3 import that it does not "fully support" it; dpkit moves
# only Arrow batches and aggregates through PySpark, and tests/cli/test_spark*.py run on pandas 3
# (the lock) and on pandas 2.2 (the lowest leg) with the same bytes: the notice would be noise
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)

from dpkit.engine.spark.frame import SparkFrame  # noqa: E402
from dpkit.engine.spark.read import load_spark  # noqa: E402
from dpkit.engine.spark.session import DEFAULT_MASTER, session  # noqa: E402

__all__ = ["DEFAULT_MASTER", "SparkFrame", "load_spark", "session"]
