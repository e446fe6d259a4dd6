"""The rule `generalize` maps every row by (issue 43): :func:`reading_schema` refuses and drops
nothing, :class:`Generalizer` puts a missing value at the root of a cut still at its root, and
the one warning (:func:`dpkit.data.unknown.mapping_warning`) says what was read as missing."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from dpkit.algorithms.kanon.apply import apply_release
from dpkit.algorithms.publish.cut import Cut
from dpkit.algorithms.publish.generalized import Generalizer, reading_schema
from dpkit.data.encode import encode
from dpkit.data.unknown import mapping_warning, unknown_values
from dpkit.errors import DataError, DpkitWarning
from dpkit.schema.parse import parse_schema

SCHEMA = """\
target: label
missing: '?'
missing_policy: drop
columns:
  age: {type: numeric, bounds: [0, 100], integer: true}
  color:
    type: categorical
    hierarchy:
      Any:
        Warm: [red, orange]
        Cool: [blue, green]
  one: {type: categorical, values: [only]}
  label: {type: categorical, values: [a, b]}
"""

ROWS = pd.DataFrame({"age": ["4", "?", "oops", "70", ""], "color": ["red", "?", "purple", "blue", "green"],
                     "one": ["only", "?", "else", "only", "only"], "label": ["a", "b", "a", "c", "b"]})


def _map(cut_json: dict) -> tuple[pd.DataFrame, dict[str, int]]:
    schema = parse_schema(SCHEMA, "s.yaml")
    cut = Cut.from_json(schema, "label", cut_json)
    lenient = reading_schema(schema)
    cols = ["age", "color", "one", "label"]
    with pytest.raises(DataError):  # the schema as it is refuses 'oops' and 'purple' ...
        encode(ROWS, schema, cols, source="t.csv")
    table = encode(ROWS, lenient, cols, source="t.csv")  # ... read leniently, nothing dropped
    assert table.n_rows == len(ROWS)
    return Generalizer.of(cut, lenient, cols).labelled(table.columns)


def test_a_cut_at_its_root_holds_missing_and_unknown_values() -> None:
    rows, unheld = _map({"age": [[0, 100]], "color": ["Any"], "one": ["Any"]})
    assert list(rows["age"]) == ["[0,100]"] * 5 and list(rows["color"]) == ["Any"] * 5
    assert list(rows["one"]) == ["Any"] * 5  # a cut of one node holds every value
    assert unheld == {} and list(rows["label"]) == ["a", "b", "a", "(missing)", "b"]


def test_below_the_root_a_drop_release_writes_missing_and_counts_it() -> None:
    rows, unheld = _map({"age": [[0, 50], [50, 100]], "color": ["Warm", "Cool"], "one": ["Any"]})
    assert list(rows["age"]) == ["[0,50)", "(missing)", "(missing)", "[50,100]", "(missing)"]
    assert list(rows["color"]) == ["Warm", "(missing)", "(missing)", "Cool", "Cool"]
    assert unheld == {"age": 3, "color": 2}


def test_unknown_values_are_those_a_private_read_refuses() -> None:
    schema = parse_schema(SCHEMA, "s.yaml")
    got = unknown_values(ROWS, schema, ["age", "color", "one", "label"])
    assert got == {"age": (2, "number", ["oops", ""], 4), "color": (1, "category", ["purple"], 4),
                   "one": (1, "category", ["else"], 4), "label": (1, "category", ["c"], 5)}
    learned = parse_schema(SCHEMA.replace("integer: true}", "integer: true, unparsable: missing}"), "s.yaml")
    assert "age" not in unknown_values(ROWS, learned, ["age"])  # the schema reads them itself


def test_the_warning_gives_shares_to_the_owner_only(monkeypatch) -> None:
    unknown = {"color": (1, "category", ["purple"], 4)}
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: False)
    quiet = mapping_warning("t.csv", 5, unknown, {"color": 2})
    assert quiet.startswith("t.csv: every row mapped; values not in the schema were read as missing in 'color'; "
                            "missing values of 'color' were written '(missing)'; 'color': more than 20% of the rows")
    assert "purple" not in quiet and "40%" not in quiet and "shows the detail" in quiet
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)
    owner = mapping_warning("t.csv", 5, unknown, {"color": 2})
    assert "'color': 1 value(s) not in its taxonomy ('purple'; the first on line 4) read as missing, 2 written " \
           "'(missing)', 40% of the rows" in owner
    assert mapping_warning("t.csv", 5, {}, {}) is None
    assert "more than" not in mapping_warning("t.csv", 100, unknown)  # 1 % of the rows


def test_a_kanon_release_maps_every_row_too() -> None:
    schema = parse_schema(SCHEMA, "s.yaml")
    release = {"selected": ["age", "color"], "cut": {"age": [[0, 50], [50, 100]], "color": ["Any"]}}
    with pytest.warns(DpkitWarning, match="values not in the schema were read as missing in 'age', 'color'"):
        out = apply_release(ROWS, release, schema, "label", source="t.csv")
    assert len(out) == len(ROWS) and list(out["color"]) == ["Any"] * 5
    assert list(out["age"]) == ["[0,50)", "(missing)", "(missing)", "[50,100]", "(missing)"]


CUTS = [{"age": [[0, 100]], "color": ["Any"], "one": ["Any"]},
        {"age": [[0, 50], [50, 100]], "color": ["Warm", "Cool"], "one": ["Any"]},
        {"age": [[0, 10], [10, 50], [50, 100]], "color": ["red", "orange", "Cool"], "one": ["Any"]}]
VALUES = {"age": ["4", "50", "100", "-3", "250", "?", "", "oops", "nan", "1e400", "7.5"],
          "color": ["red", "orange", "blue", "green", "?", "", "purple", "Any", "Warm"],
          "one": ["only", "?", "", "else"], "label": ["a", "b", "?", "c"]}


def test_every_row_back_and_every_value_held() -> None:
    """Property: whatever the records hold, every row comes back, in order, with its index, and
    every generalized predictor value is a label of the cut — but ``(missing)``, only for a
    missing value of a column cut below its root under drop."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    import dpkit

    @hypothesis.settings(max_examples=60, deadline=None)
    @hypothesis.given(st.sampled_from(range(len(CUTS))), st.integers(1, 12), st.data(), st.sampled_from(["drop", "keep"]))
    def check(which: int, n: int, data, policy: str) -> None:  # noqa: ANN001
        rows = {c: data.draw(st.lists(st.sampled_from(v), min_size=n, max_size=n)) for c, v in VALUES.items()}
        index = data.draw(st.permutations(list(range(100, 100 + n))))
        df = pd.DataFrame(rows, index=index)
        schema = parse_schema(SCHEMA.replace("missing_policy: drop", f"missing_policy: {policy}"), "s.yaml")
        # under keep a column's first split sets its (missing) leaf or bucket apart
        cut = {c: v + ["(missing)"] if policy == "keep" and len(v) > 1 else v for c, v in CUTS[which].items()}
        report = {"command": "publish", "release": {"cut": cut, "target": "label",
                                                    "columns": ["age", "color", "one", "label"]},
                  "parameters": {}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = dpkit.generalize(df, report, schema=schema)
        assert list(out.index) == index and len(out) == n
        labels = Cut.from_json(schema, "label", cut).labels()
        for c, held in labels.items():
            extra = set(out[c]) - set(held)
            assert extra <= {"(missing)"}, (c, extra)
            if extra:  # only where the release holds no node for a missing value
                assert policy == "drop" and len(held) > 1, (c, held)
        assert set(out["label"]) <= {"a", "b", "(missing)"}

    check()
