"""An integer column's closed top interval splits at its upper bound (issue 46): a 0/1 flag
declared ``[0, 1]`` is released as ``[0,1)`` and ``[1,1]``, not as one cell, and a count's two
largest values can part. The grid stays a function of the public interval only."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.algorithms.publish.cut import NumericCut, _numeric_from_json, column_points
from dpkit.errors import DataError
from dpkit.schema.parse import NumericColumn

KEYS = ["0x5e8a1c3f7b2d49e06a1f8c3b5d7e9a21", "0x2b7d9f1e4c6a38b05d2e7f9a1c3b5d47", "0x7c1e3a5b9d2f46e08b4a6c8e0f2d4b63"]


def _col(lo: float, hi: float, integer: bool = True, name: str = "c") -> NumericColumn:
    return NumericColumn(name, lo, hi, integer=integer)


def test_the_top_interval_offers_its_upper_bound() -> None:
    assert column_points(_col(0, 1), 0, 1, 32, top=True).tolist() == [1.0]
    assert column_points(_col(0, 1), 0, 1, 32).tolist() == []
    assert column_points(_col(0, 3), 0, 3, 32, top=True).tolist() == [1.0, 2.0, 3.0]
    assert column_points(_col(0, 3), 0, 3, 32).tolist() == [1.0, 2.0]
    # a real column, or an interval too wide for every whole number, keeps its grid
    assert column_points(_col(0, 1, integer=False), 0, 1, 3, top=True).tolist() == [0.25, 0.5, 0.75]
    wide = column_points(_col(0, 1000), 0, 1000, 32, top=True)
    assert wide.tolist() == column_points(_col(0, 1000), 0, 1000, 32).tolist() and 1000 not in wide


def test_a_cut_splits_at_the_top_once() -> None:
    cut = NumericCut(_col(0, 1))
    assert cut.integer_top(0)
    cut.split(0, [1.0])
    assert cut.intervals() == [(0.0, 1.0), (1.0, 1.0)] and cut.labels() == ["[0,1)", "[1,1]"]
    assert not cut.integer_top(1) and cut.to_json() == [[0, 1], [1, 1]]
    assert cut.codes(np.array([0.0, 1.0, 0.0])).tolist() == [0, 1, 0]
    with pytest.raises(ValueError):
        NumericCut(_col(0, 1, integer=False)).split(0, [1.0])
    with pytest.raises(ValueError):  # only the top interval is closed
        c = NumericCut(_col(0, 3))
        c.split(0, [2.0])
        c.split(0, [2.0])


def test_the_report_reads_the_one_value_top_back() -> None:
    assert _numeric_from_json(_col(0, 1), [[0, 1], [1, 1]], "r.json").labels() == ["[0,1)", "[1,1]"]
    with pytest.raises(DataError, match="tile its bounds"):
        _numeric_from_json(_col(0, 1, integer=False), [[0, 1], [1, 1]], "r.json")
    with pytest.raises(DataError, match="tile its bounds"):
        _numeric_from_json(_col(0, 1), [[0, 0], [0, 1]], "r.json")
    with pytest.raises(DataError, match="tile its bounds"):
        _numeric_from_json(_col(1, 1), [[1, 1]], "r.json")


def test_a_declared_flag_is_released_as_two_values(tmp_path) -> None:
    g = np.random.default_rng(0)
    n = 20000
    flag = g.integers(0, 2, n)
    y = np.where(g.random(n) < 0.15 + 0.7 * flag, "yes", "no")
    (tmp_path / "t.csv").write_text(pd.DataFrame({"flag": flag, "y": y}).to_csv(index=False))
    (tmp_path / "s.yaml").write_text("target: y\ncolumns:\n  flag: {type: numeric, bounds: [0, 1], integer: true}\n"
                                     "  y: {type: categorical, values: [no, yes]}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cuts = [dpkit.publish(tmp_path / "t.csv", schema=tmp_path / "s.yaml", epsilon=1.0, random_state=k).cut["flag"]
                for k in KEYS]
        release = dpkit.publish(tmp_path / "t.csv", schema=tmp_path / "s.yaml", epsilon=1.0, random_state=KEYS[0])
        generalized = release.generalize(tmp_path / "t.csv")
    assert all(c == [[0, 1], [1, 1]] for c in cuts), cuts
    assert (generalized["flag"].astype(str) == np.where(flag == 1, "[1,1]", "[0,1)")).all()
    release.write_report(tmp_path / "r.json")
    again = dpkit.generalize(tmp_path / "t.csv", tmp_path / "r.json")
    assert again["flag"].astype(str).tolist() == generalized["flag"].astype(str).tolist()
