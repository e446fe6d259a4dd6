"""kanon-select writes its category-coded output exactly as pandas' to_csv writes the strings."""

from __future__ import annotations

import pandas as pd
import pytest

from dpkit.io import category_csv
from dpkit.io.category_csv import write_categories as _write_codes


@pytest.mark.parametrize("delimiter", [",", "\t", ";"])
def test_codes_writer_matches_to_csv(tmp_path, delimiter) -> None:
    strings = pd.DataFrame({
        "a": ["x, 1", "x", "x, 1", 'q"t', "", "x;y"],
        "b": ["", "", "z", "z\tw", "p", ""],
        "y": ["0", "1", "0", "1", "0", "1"],
    })
    cats = strings.astype("category")
    cats["a"] = cats["a"].cat.add_categories(["unused"])
    out = tmp_path / "o.csv"
    _write_codes(cats, str(out), delimiter=delimiter)
    expected = strings.to_csv(index=False, lineterminator="\n", sep=delimiter)
    assert out.read_text(encoding="utf-8") == expected


def test_codes_writer_falls_back_for_strings(tmp_path) -> None:
    strings = pd.DataFrame({"a": ["1", "2"], "y": ["0", "1"]})
    out = tmp_path / "o.csv"
    _write_codes(strings, str(out), delimiter=",")
    assert out.read_text(encoding="utf-8") == "a,y\n1,0\n2,1\n"


def test_codes_writer_in_chunks(tmp_path, monkeypatch) -> None:
    """The cell ids are built a chunk of records at a time; chunk edges change nothing."""
    import numpy as np


    rng = np.random.default_rng(3)
    strings = pd.DataFrame({"a": rng.choice(["x", "y, z", ""], 103), "y": rng.choice(["0", "1"], 103)})
    expected = strings.to_csv(index=False, lineterminator="\n")
    monkeypatch.setattr(category_csv, "WRITE_CHUNK", 10)
    out = tmp_path / "o.csv"
    _write_codes(strings.astype("category"), str(out), delimiter=",")
    assert out.read_text(encoding="utf-8") == expected


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_many_distinct_rows_are_written_by_arrow_as_to_csv(tmp_path, monkeypatch, delimiter) -> None:
    """Beyond 4M possible distinct rows the records go through Arrow's CSV writer (unquoted
    values only), in chunks; values that need quotes take to_csv. Same bytes either way."""
    import numpy as np


    rng = np.random.default_rng(6)
    n = 500
    strings = pd.DataFrame({f"c{i}": rng.choice([f"v{j}" for j in range(40)], n) for i in range(5)})
    strings["c0"] = rng.choice(["", "a b", "<=50K"], n)  # empty fields and spaces need no quotes
    monkeypatch.setattr(category_csv, "WRITE_CHUNK", 64)
    for frame in (strings, strings.assign(c1=rng.choice(["x,y", 'q"t', "z"], n))):
        out = tmp_path / "o.csv"
        cats = frame.astype("category")
        _write_codes(cats, str(out), delimiter=delimiter)
        assert out.read_text(encoding="utf-8") == frame.to_csv(index=False, lineterminator="\n", sep=delimiter)
    assert category_csv._write_unquoted(strings.astype("category"), str(out), delimiter)
    assert not category_csv._write_unquoted(strings[["c0"]].astype("category"), str(out), delimiter)
