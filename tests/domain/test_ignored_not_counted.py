"""A run without a schema never summarizes the columns it ignores (issue 36 item 5): an ID
column's distinct values were as many Python strings as rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkit.api.domain import learn_schema
from dpkit.domain import profile
from dpkit.privacy import Accountant, make_rng


def test_ignored_and_id_columns_are_not_summarized(monkeypatch):
    seen: list[str] = []
    real = profile.summarize

    def spy(frame, columns=None):  # noqa: ANN001, ANN202
        got = real(frame, columns)
        seen.extend(got)
        return got

    monkeypatch.setattr(profile, "summarize", spy)
    g = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"ID": [str(i) for i in range(n)], "note": [f"n{i}" for i in range(n)],
                       "a": g.integers(0, 50, n).astype(str), "y": g.choice(["p", "q"], n)}, dtype=object)
    learned = learn_schema(df, target="y", epsilon=1.0, delta=1e-6, rng=make_rng(0),
                           accountant=Accountant(1.0, delta=1e-6), ignore=["note"], numeric=["a"], missing=[])
    assert sorted(seen) == ["a", "y"]
    assert learned.schema.columns["ID"].kind == "ignore" and learned.schema.columns["note"].kind == "ignore"
    assert list(learned.schema.columns) == ["ID", "note", "a", "y"]  # every column still in the schema
