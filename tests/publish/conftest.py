"""A tiny classification table with every kind of attribute, for the release tests."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.io.table import EncodedTable
from dpkit.schema.parse import parse_schema

SCHEMA = """\
target: label
columns:
  age: {type: numeric, bounds: [0, 10], integer: true}
  size: {type: numeric, bounds: [0, 1]}
  band:
    type: numeric
    bounds: [0, 100]
    hierarchy: {"0..100": {"0..50": {"0..20": null, "20..50": null}, "50..100": null}}
  color:
    type: categorical
    hierarchy:
      Any:
        Warm: [red, orange]
        Cool: [blue, green, teal]
  label: {type: categorical, values: [a, b, c]}
  note: {type: ignore}
"""


@pytest.fixture
def schema():
    return parse_schema(SCHEMA, "tiny.yaml")


@pytest.fixture
def table(schema):
    rng = np.random.default_rng(7)
    n = 200
    cols = {
        "age": rng.integers(0, 11, n).astype(float),
        "size": np.round(rng.random(n), 3),
        "band": rng.integers(0, 101, n).astype(float),
        "color": rng.integers(0, 5, n).astype(np.int32),
    }
    y = ((cols["age"] > 5).astype(int) + (cols["color"] >= 2).astype(int)).astype(np.int32)
    cols["label"] = y
    return EncodedTable(schema, cols, n, "tiny")
