"""Exact counts and raw values reach stderr only for the data owner (issue 14, item 3).

Under pytest stderr is not a terminal, so a message takes its quiet form ("…; -v shows the
detail") unless -v was given. These cover the messages outside the loader: the k-anonymity
frame (kanon-select), forest predict's clipping, evaluate's drops and the kanon -k note.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from dpkit.algorithms.kanon.frame import prepare
from dpkit.cli import cli
from dpkit.cli.boundary import run
from dpkit.console import set_verbose
from dpkit.errors import DataError
from dpkit.schema.parse import load_schema

SCHEMA = """
target: y
missing: "?"
missing_policy: drop
columns:
  age:  {type: numeric, bounds: [0, 50], integer: true}
  col:  {type: categorical, hierarchy: {Any: [red, green, blue]}}
  y:    {type: categorical, values: ["0", "1"]}
"""


@pytest.fixture
def schema(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SCHEMA, encoding="utf-8")
    return load_schema(p)


def _df(**cols) -> pd.DataFrame:
    base = {"age": ["10", "77", "?", "60", "10", "20"], "col": ["red", "blue", "red", "green", "red", "blue"],
            "y": ["0", "1", "0", "1", "0", "1"]}
    base.update(cols)
    return pd.DataFrame(base)


def _messages(df: pd.DataFrame, schema) -> list[str]:  # noqa: ANN001
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepare(df, target="y", quasi_identifiers=None, keep=[], sensitive=None, schema=schema, source="d.csv")
    return [str(w.message) for w in caught]


def test_kanon_frame_counts_are_quiet_in_a_log(schema) -> None:
    msgs = _messages(_df(), schema)
    dropped = [m for m in msgs if "dropped rows" in m]
    clipped = [m for m in msgs if "clipped values of 'age'" in m]
    assert dropped and clipped, msgs
    for m in dropped + clipped:
        assert "set_verbosity(True) shows the detail" in m and "-v" not in m and "row(s)" not in m and "value(s)" not in m


def test_kanon_frame_counts_with_v(schema) -> None:
    set_verbose(True)
    try:
        msgs = _messages(_df(), schema)
    finally:
        set_verbose(False)
    assert any("dropped 1 row(s)" in m for m in msgs) and any("clipped 2 value(s)" in m for m in msgs)


def test_raw_values_and_lines_stay_out_of_quiet_errors(schema) -> None:
    with pytest.raises(DataError) as e:
        prepare(_df(age=["10", "20", "x9q", "10", "20", "10"]), target="y", quasi_identifiers=None, keep=[],
                sensitive=None, schema=schema, source="d.csv")
    assert "x9q" not in str(e.value) and "d.csv:4" not in str(e.value) and "set_verbosity(True) shows" in str(e.value)
    set_verbose(True)
    try:
        with pytest.raises(DataError, match=r"d.csv:4: numeric column 'age' has 'x9q'"):
            prepare(_df(age=["10", "20", "x9q", "10", "20", "10"]), target="y", quasi_identifiers=None,
                    keep=[], sensitive=None, schema=schema, source="d.csv")
    finally:
        set_verbose(False)


def _clip_messages() -> list[str]:
    from dpkit.algorithms.forest.model import Feature, ForestModel

    model = ForestModel(target="y", classes=("a", "b"), features=[Feature("x", "numeric", 0.0, 10.0)], trees=[])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.encode_frame(pd.DataFrame({"x": ["1", "12", "-3", "5"]}), source="t.csv")
    return [str(w.message) for w in caught]


def test_forest_predict_clipping_is_quiet_in_a_log() -> None:
    (m,) = _clip_messages()
    assert "clipped values of 'x'" in m and "2 value" not in m and "set_verbosity(True) shows the detail" in m
    set_verbose(True)
    try:
        (m,) = _clip_messages()
    finally:
        set_verbose(False)
    assert "clipped 2 value(s) of 'x'" in m


def test_kanon_k_note(capsys, tmp_path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("a,y\n" + "".join(f"{i % 2},{i % 3}\n" for i in range(7)))
    code = run(cli, ["kanon-select", str(data), "--target", "y", "-k", "9", "--check-only", "--qi", "a"])
    err = capsys.readouterr().err
    assert "larger than the table" in err and "7 records" not in err
    code = run(cli, ["kanon-select", str(data), "--target", "y", "-k", "9", "--check-only", "--qi", "a", "-v"])
    err = capsys.readouterr().err
    assert code == 1 and "(7 records)" in err
