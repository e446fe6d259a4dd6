"""The types of dpkit's public signatures, written once (``dpkit.DataLike``, ...).

* :data:`DataLike` — what every function reads: a path (CSV or Parquet; ``-`` is stdin), a
  :class:`ReadOptions` (a path with its dialect spelled out, once, for every call that reads it)
  or a pandas DataFrame;
* :data:`SeedLike` — a secret key ``0x…`` (reproducible and private), a plain integer
  (reproducible, not private) or None (a fresh key from the operating system);
* :data:`LedgerLike` — a :class:`dpkit.Ledger`, its path, or None;
* :data:`SchemaLike` — a :class:`dpkit.Schema` or the path of its YAML.

They are aliases for type checkers (``dpkit`` ships ``py.typed``); at run time each function
checks its arguments itself (:mod:`dpkit.validate`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias, Union

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.data.schema import Schema
    from dpkit.data.source import ReadOptions
    from dpkit.ledger import Ledger

DataLike: TypeAlias = Union[str, "os.PathLike[str]", "ReadOptions", "pd.DataFrame"]  # noqa: UP007
SeedLike: TypeAlias = int | str | None
LedgerLike: TypeAlias = Union["Ledger", str, "os.PathLike[str]", None]  # noqa: UP007
SchemaLike: TypeAlias = Union["Schema", str, "os.PathLike[str]"]  # noqa: UP007

__all__ = ["DataLike", "LedgerLike", "SchemaLike", "SeedLike"]
