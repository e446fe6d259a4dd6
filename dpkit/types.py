"""The types of dpkit's public signatures, written once (``dpkit.DataLike``, ...).

* :data:`DataLike` — what every function reads: a path (CSV or Parquet; ``-`` is stdin), a
  :class:`ReadOptions` (a path with its dialect spelled out, once, for every call that reads it),
  a pandas DataFrame or any :class:`ArrowStream` (polars, pyarrow, DuckDB: :mod:`dpkit.api.frames`);
* :data:`SeedLike` — a secret key ``0x…`` (reproducible and private), a plain integer
  (reproducible, not private) or None (a fresh key from the operating system);
* :data:`LedgerLike` — a :class:`dpkit.Ledger`, its path, or None;
* :data:`SchemaLike` — a :class:`dpkit.Schema` or the path of its YAML;
* :class:`Reading` — the keywords that say how to read a path (``**reading`` of the methods that
  read one, e.g. :meth:`dpkit.Forest.predict`);
* :class:`PublishOptions`, :class:`ForestOptions`, :class:`ClusterOptions`,
  :class:`GeneralizeOptions`, :class:`LearnOptions` — the ``**options`` of :func:`dpkit.publish`,
  :func:`dpkit.forest`, :func:`dpkit.cluster` (the algorithms' own parameters),
  :meth:`dpkit.Release.generalize` and :func:`dpkit.learn_schema`.

They are aliases for type checkers (``dpkit`` ships ``py.typed``); at run time each function
checks its arguments itself (:mod:`dpkit.validate`). ``typing.get_type_hints`` resolves them
(and every public annotation, :func:`later`) without ``import dpkit`` importing pandas.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, ForwardRef, Protocol, TypeAlias, TypedDict, Union

#: what a :func:`later` reference evaluates with (in this module's namespace)
_import = import_module


class _LaterModule:
    """A module imported on the first access to one of its attributes (``pd.DataFrame`` in an
    annotation, when ``typing.get_type_hints`` evaluates it)."""

    def __init__(self, name: str) -> None:
        self._later_name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and inspect probe dunders: not an import
            raise AttributeError(attr)
        return getattr(import_module(self._later_name), attr)

    def __repr__(self) -> str:
        return f"<module {self._later_name!r}, imported when an annotation needs it>"


def later(module: str, name: str | None = None) -> Any:
    """What an annotation names, imported when ``typing.get_type_hints`` evaluates it rather than
    when the module that writes the annotation is imported — ``import dpkit`` and ``dpkit --help``
    stay light (no numpy, no pandas). ``later("pandas")``: the module (for ``pd.DataFrame``);
    ``later("dpkit.algorithms.forest.model", "ForestModel")``: a class of it, as a forward reference that
    evaluates in this module (so in whichever module the annotation sits). Bind the result, at
    run time only, to the name the ``TYPE_CHECKING`` import gives type checkers::

        if TYPE_CHECKING:
            import pandas as pd
        else:
            pd = later("pandas")
    """
    if name is None:
        return _LaterModule(module)
    return ForwardRef(f"_import({module!r}).{name}", module=__name__)


if TYPE_CHECKING:
    from pandas import DataFrame

    from dpkit.io.source import ReadOptions
    from dpkit.ledger import Ledger
    from dpkit.schema.parse import Schema
else:  # the same names for typing.get_type_hints, imported only when it evaluates them
    DataFrame = later("pandas", "DataFrame")
    Schema = later("dpkit.schema.parse", "Schema")
    ReadOptions = later("dpkit.io.source", "ReadOptions")
    Ledger = later("dpkit.ledger", "Ledger")

class ArrowStream(Protocol):
    """An object that speaks the Arrow PyCapsule stream interface (a polars DataFrame, a pyarrow
    Table, a DuckDB relation)."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...


DataLike: TypeAlias = Union[str, os.PathLike[str], ReadOptions, ArrowStream, DataFrame]  # noqa: UP007
SeedLike: TypeAlias = int | str | None
LedgerLike: TypeAlias = Union[Ledger, str, os.PathLike[str], None]  # noqa: UP007
SchemaLike: TypeAlias = Union[Schema, str, os.PathLike[str]]  # noqa: UP007


class Reading(TypedDict, total=False):
    """How to read a path (:class:`ReadOptions`' fields): the ``**reading`` keywords of the methods
    that read data. A DataFrame ignores them; a misspelt one is refused
    (:func:`dpkit.engine.inputs.check_reading`)."""

    encoding: str
    delimiter: str | None
    header: bool
    column_names: Sequence[str] | None


class PublishOptions(TypedDict, total=False):
    """:func:`dpkit.publish`'s algorithm options (``MaxGDDP.__init__``, ``DiffGen.__init__``; the
    names of :data:`dpkit.algorithms.publish.OPTIONS`)."""

    levels: int | str
    raw: bool
    postprocess: str | None
    allocation: str
    selection_share: float
    selector: str
    grid: int
    n_share: float
    resolution: float
    score: str


class ForestOptions(TypedDict, total=False):
    """:func:`dpkit.forest`'s options besides the named ones (``DiffPRFs.__init__``)."""

    features_per_node: int | str
    utility: str
    sampling: str
    size_share: float
    leaf_factor: float


class ClusterOptions(TypedDict, total=False):
    """:func:`dpkit.cluster`'s algorithm options (:data:`dpkit.algorithms.cluster.OPTIONS`: dpqt's, dpkmeans'
    ``iterations``, eug's ``n_estimate``)."""

    gamma: float
    max_height: int | None
    threshold: float | None
    threshold_sd: float
    height_sd: float
    allocation: str
    n_estimate: int | None
    split: str
    noise_floor: float
    iterations: int


class LearnOptions(TypedDict, total=False):
    """:func:`dpkit.learn_schema`'s keywords handed on to :func:`dpkit.infer_schema` (its own
    parameters but those learn_schema sets itself)."""

    target: str | None
    random_state: SeedLike
    numeric: str | Iterable[str] | None
    categorical: str | Iterable[str] | None
    integer: str | Iterable[str] | None
    date: str | Iterable[str] | None
    ignore: str | Iterable[str] | None
    keep: str | Iterable[str] | None
    values: Mapping[str, Sequence[str]] | None
    vocabulary: str | None
    numeric_weight: float
    target_weight: float
    empty: str
    partition: str
    ledger: LedgerLike
    engine: str | None
    spark_master: str | None


class GeneralizeOptions(TypedDict, total=False):
    """:meth:`dpkit.Release.generalize`'s keywords: :func:`dpkit.generalize`'s but the schema."""

    output: str | os.PathLike[str] | None
    output_delimiter: str
    engine: str | None
    spark_master: str | None
    encoding: str | None
    delimiter: str | None
    header: bool
    column_names: list[str] | None


__all__ = ["ClusterOptions", "DataLike", "ForestOptions", "GeneralizeOptions", "LearnOptions", "LedgerLike",
           "PublishOptions", "Reading", "SchemaLike", "SeedLike", "later"]
