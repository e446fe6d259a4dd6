"""Results that do not depend on which pandas (2.2 – 3.x) holds the table: fingerprints, Parquet."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkit.io.fingerprint import frame_digest, row_hashes


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    as_object = pd.DataFrame({"a": np.array(["x", "y", "x"], dtype=object), "n": [1.0, 2.0, np.nan]})
    as_str = as_object.astype({"a": str})  # what read_csv(dtype=str) types text as: `str` on pandas 3
    return as_object, as_str


def test_text_typed_str_is_the_data_set_typed_object() -> None:
    as_object, as_str = _frames()
    assert frame_digest(as_object) == frame_digest(as_str)
    sig_o, rows_o = row_hashes(as_object)
    sig_s, rows_s = row_hashes(as_str)
    assert sig_o == sig_s and np.array_equal(rows_o, rows_s)


def test_the_digest_still_tells_tables_apart() -> None:
    as_object, _ = _frames()
    other = as_object.assign(a=["x", "y", "z"])
    assert frame_digest(as_object) != frame_digest(other)
    assert frame_digest(as_object) != frame_digest(as_object.astype({"n": "float32"}))


def test_parquet_bytes_do_not_depend_on_the_text_dtype() -> None:
    """A release written as Parquet: text columns are `string` with pandas 2's metadata, so a
    keyed run writes the same file on pandas 2 and 3."""
    import io

    import pyarrow.parquet as pq

    from dpkit.io.parquet import write_parquet

    as_object, as_str = _frames()
    files = []
    for df in (as_object, as_str):
        buf = io.BytesIO()
        write_parquet(df, buf)
        files.append(buf.getvalue())
    assert files[0] == files[1]
    written = pq.read_table(io.BytesIO(files[1]))
    assert str(written.schema.field("a").type) == "string"
    assert not written.schema.metadata  # no pandas metadata: it would name the pandas version
