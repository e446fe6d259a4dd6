"""One table, one set of bytes, whichever pandas (2.2 – 3.x) holds it."""

from __future__ import annotations

from typing import Any


def text_as_object(df: Any) -> Any:
    """``df`` with pandas 3's default text dtype (``str``) as ``object``, the type pandas 2 gives
    the same text. Where a frame's dtypes reach an output or a digest (a Parquet file's schema
    and pandas metadata, a keyed run's identity, the ledger's data set), they go through here."""
    text = {c: object for c, t in df.dtypes.items() if str(t) == "str"}
    return df.astype(text) if text else df
