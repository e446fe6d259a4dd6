"""Tiny schemas and tables for the forest tests (no files from outside the repository)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkit.data.encode import encode
from dpkit.schema.parse import load_schema

SCHEMA = """\
target: label
missing: "?"
missing_policy: drop
columns:
  x:     {type: numeric, bounds: [0, 100], integer: true}
  w:     {type: numeric, bounds: [0, 1]}
  color:
    type: categorical
    hierarchy:
      Any: [red, green, blue]
  label: {type: categorical, values: [no, yes]}
"""


@pytest.fixture()
def schema(tmp_path: Path):
    p = tmp_path / "schema.yaml"
    p.write_text(SCHEMA, encoding="utf-8")
    return load_schema(p)


def make_frame(n: int, seed: int = 0, rule: str = "x") -> pd.DataFrame:
    """``label`` = yes iff x > 50 (rule "x") or color == blue (rule "color"); w is noise."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 101, n)
    color = rng.choice(["red", "green", "blue"], n)
    w = rng.random(n)
    yes = x > 50 if rule == "x" else color == "blue"
    return pd.DataFrame({
        "x": x.astype(str), "w": [f"{v:.4f}" for v in w], "color": color,
        "label": np.where(yes, "yes", "no"),
    })


@pytest.fixture()
def table(schema):
    return encode(make_frame(4000), schema, source="tiny.csv")
