"""A column's ``missing: true|false`` (issue 36 item 3 follow-up): under ``missing_policy: keep``
only a column whose missingness the learned schema established gets a ``(missing)`` leaf or a
missing bucket; the others read a missing value as an unlisted one, and no row is dropped."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkit.algorithms.publish.cut import Cut
from dpkit.data.encode import encode
from dpkit.domain.metadata import SHAPES, Decision, decide, holds_missing
from dpkit.io.source import ReadOptions
from dpkit.io.table import load
from dpkit.schema.parse import CategoricalColumn, NumericColumn, parse_schema, schema_to_dict

FLAGGED = """\
target: label
missing: ['?']
missing_policy: keep
columns:
  age: {type: numeric, bounds: [0, 100], integer: true, missing: MISS_AGE}
  color: {type: categorical, values: [red, blue, (other)], other: (other), missing: MISS_COLOR}
  label: {type: categorical, values: [a, b]}
"""


def schema(age: str, color: str):  # noqa: ANN201
    return parse_schema(FLAGGED.replace("MISS_AGE", age).replace("MISS_COLOR", color))


@pytest.fixture(autouse=True)
def _owners_notices(monkeypatch):  # noqa: ANN001, ANN202
    """The owner's form of the load's notices (a terminal, -v): there only when rows were dropped,
    which "no warning" asserts below; without it the short form is there whatever the data holds
    (issue 43, docs/domain.md "What stderr says")."""
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)


def test_the_flag_is_parsed_and_written_and_absent_means_unchanged() -> None:
    s = schema("false", "true")
    assert s.columns["age"].holds_missing is False and s.columns["color"].holds_missing is True
    d = schema_to_dict(s)
    assert d["columns"]["age"]["missing"] is False and d["columns"]["color"]["missing"] is True
    # a schema without the key: no flag, no key written, the column's repr as before
    plain = parse_schema(FLAGGED.replace(", missing: MISS_AGE", "").replace(", missing: MISS_COLOR", ""))
    assert plain.columns["age"].holds_missing is None and "missing" not in schema_to_dict(plain)["columns"]["age"]
    assert "holds_missing" not in repr(plain.columns["age"])
    assert plain.columns["color"].missing_leaf == "(missing)" and plain.columns["age"].missing


def test_a_column_without_established_missingness_gets_no_bucket_and_loses_no_row(tmp_path: Path) -> None:
    s = schema("false", "false")
    color, age = s.columns["color"], s.columns["age"]
    assert isinstance(age, NumericColumn) and age.missing  # NaN encoded: the row kept
    assert isinstance(color, CategoricalColumn) and color.missing_leaf is None
    assert color.leaves == ("red", "blue", "(other)") and color.missing_code == color.other_code == 2
    df = pd.DataFrame({"age": ["10", "?", "70"], "color": ["red", "?", "blue"], "label": ["a", "b", "a"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a dropped row warns
        enc = encode(df, s, ["age", "color", "label"])
        df.to_csv(tmp_path / "d.csv", index=False)
        fast = load(ReadOptions(str(tmp_path / "d.csv")), s, ["age", "color", "label"])  # the Arrow path
    assert enc.n_rows == fast.n_rows == 3 and enc.columns["color"].tolist() == [0, 2, 1]
    assert fast.columns["color"].tolist() == [0, 2, 1]
    assert np.array_equal(fast.columns["age"], enc.columns["age"], equal_nan=True)
    cut = Cut.initial(s, "label").attributes["age"]
    assert isinstance(cut.column, NumericColumn) and not cut.separates_missing()
    cut.split(0, [50])
    assert cut.labels() == ["[0,50)", "[50,100]"]  # no bucket: the NaN is in the lowest interval
    assert cut.codes(enc.columns["age"]).tolist() == [0, 0, 1]
    assert cut.key("age").evaluate({"age": enc.columns["age"]}).tolist() == [0, 0, 1]
    back = Cut.from_json(s, "label", {"age": cut.to_json()}).attributes["age"]
    assert back.labels() == cut.labels()


def test_a_column_with_established_missingness_gets_its_bucket() -> None:
    s = schema("true", "true")
    assert s.columns["color"].missing_leaf == "(missing)"
    cut = Cut.initial(s, "label").attributes["age"]
    assert cut.separates_missing()
    cut.split(0, [50])
    assert cut.labels() == ["[0,50)", "[50,100]", "(missing)"]


def test_holds_missing_takes_a_learned_token_or_the_unparsable_sum_against_its_own_threshold() -> None:
    tokens = ("?", "")
    k = len(tokens)

    def noisy(toks: tuple[int, int], whole: int = 0, frac: int = 0, date: int = 0, text: int = 0) -> np.ndarray:
        out = np.zeros(k + len(SHAPES), dtype=np.int64)
        out[:k] = toks
        out[k:k + 4] = (whole, frac, date, text)
        return out

    tau = 10

    def sums(n: int) -> int:  # a sum of n cells has a higher threshold than one cell
        return {1: tau, 2: 14, 4: 20}[n]

    dec = decide(noisy((12, 3), whole=500), tokens, tau)
    assert dec.tokens == ("?",) and holds_missing(dec, "numeric", tokens, sums)  # a token learned in it
    dec = decide(noisy((4, 3), whole=500, text=12), tokens, tau)
    assert dec.kind == "numeric" and holds_missing(dec, "numeric", tokens, sums) is False  # 12 < 14
    dec = decide(noisy((4, 3), whole=500, date=3, text=11), tokens, tau)
    assert holds_missing(dec, "numeric", tokens, sums)  # 3 + 11 non-numbers reach the sum's 14
    dec = decide(noisy((4, 3), date=500, whole=6, text=13), tokens, tau)
    assert dec.kind == "date" and not holds_missing(dec, "date", tokens, sums)  # 19 < 20 (four cells)
    # a categorical column reads text as values; tokens not learned in it do not count
    dec = decide(noisy((9, 9), text=500), tokens, tau)
    assert dec.kind == "categorical" and not holds_missing(dec, "categorical", tokens, sums)
    assert holds_missing(Decision("categorical", False, ("",), tuple(noisy((6, 10), text=500))), "categorical",
                         tokens, sums)
