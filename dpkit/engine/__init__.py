"""Engines: where data is read and scanned (docs/architecture.md, Engines).

``load(options, schema, columns, engine=...)`` reads a table (CSV or Parquet, described by
:class:`~dpkit.io.source.ReadOptions`) and returns a :class:`~dpkit.engine.frame.Frame`:
the encoded table behind the aggregate primitives the algorithms use. ``numpy`` (default)
reads in this process; ``spark`` reads and aggregates on a Spark cluster and keeps only
aggregates on the driver. ``$DPKIT_ENGINE`` sets the default (for cron).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpkit.engine.frame import Frame, as_frame

ENGINES = ("numpy", "spark")

__all__ = ["ENGINES", "Frame", "as_frame", "engine_name", "load"]


def __getattr__(name: str) -> Any:
    # the frame protocol imports numpy: loaded when first named, so that ``import dpkit`` (and
    # the library's input checks, dpkit.engine.inputs) stay light
    if name in ("Frame", "as_frame"):
        from dpkit.engine import frame

        return getattr(frame, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def engine_name(value: str | None = None) -> str:
    """The engine to use: ``value``, else ``$DPKIT_ENGINE``, else ``numpy``."""
    from dpkit.errors import DpkitUsageError

    name = value or os.environ.get("DPKIT_ENGINE") or "numpy"
    if name not in ENGINES:
        raise DpkitUsageError(f"engine must be one of {', '.join(ENGINES)}, got {name!r}", param="engine")
    return name


def load(options: Any, schema: Any, columns: Sequence[str] | None = None, *, engine: str | None = None,
         **engine_options: Any) -> Frame:
    """Read and encode ``columns`` of the table ``options`` describes, on ``engine``."""
    name = engine_name(engine)
    if name == "spark":
        from dpkit.engine.spark.read import load_spark

        return load_spark(options, schema, columns, **engine_options)
    from dpkit.engine.numpy_frame import NumpyFrame
    from dpkit.io.table import load as load_encoded

    return NumpyFrame(load_encoded(options, schema, columns))
