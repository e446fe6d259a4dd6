"""A table's fingerprint does not depend on which pandas read it (pandas 3 types text `str`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkit.data.fingerprint import frame_digest, row_hashes


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
