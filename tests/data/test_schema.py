"""Schema YAML -> Schema: structure, and errors that name file:line:column and the key."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.errors import DpkitUsageError, SchemaError
from dpkit.schema.importers import dump_schema
from dpkit.schema.parse import (
    CategoricalColumn,
    IgnoredColumn,
    NumericColumn,
    load_schema,
    parse_schema,
    schema_to_dict,
)

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
target: income
missing: "?"
missing_policy: drop
columns:
  age: {type: numeric, bounds: [15, 95], integer: true}
  workclass:
    type: categorical
    hierarchy:
      Any:
        Worked:
          With-Pay: {Private: null, Gov: [Federal-gov, State-gov]}
          Without-pay: null
        Never-worked: null
  fnlwgt: {type: ignore}
  income: {type: categorical, values: ["<=50K", ">50K"]}
"""


def where(exc: pytest.ExceptionInfo) -> tuple[int, int]:
    m = re.match(r"^S\.yaml:(\d+):(\d+): ", str(exc.value))
    assert m, f"no file:line:col in {exc.value}"
    return int(m.group(1)), int(m.group(2))


def test_good_schema_structure():
    s = parse_schema(GOOD, "S.yaml")
    assert s.target == "income" and s.missing == "?" and s.missing_policy == "drop"
    assert list(s.columns) == ["age", "workclass", "fnlwgt", "income"]
    wc = s.columns["workclass"]
    assert isinstance(wc, CategoricalColumn)
    assert wc.leaves == ("Private", "Federal-gov", "State-gov", "Without-pay", "Never-worked")
    assert wc.leaf_code["State-gov"] == 2
    nodes = wc.nodes
    # every node covers a contiguous range of depth-first leaf codes
    assert (nodes["Gov"].lo, nodes["Gov"].hi) == (1, 3)
    assert (nodes["Worked"].lo, nodes["Worked"].hi) == (0, 4)
    assert (wc.root.lo, wc.root.hi) == (0, 5)
    assert nodes["Gov"].depth == 3 and wc.height == 4
    age = s.columns["age"]
    assert isinstance(age, NumericColumn) and (age.lo, age.hi, age.integer) == (15, 95, True)
    assert isinstance(s.columns["fnlwgt"], IgnoredColumn)
    assert s.predictors() == ["age", "workclass"]
    assert s.used_columns() == ["age", "workclass", "income"]
    with pytest.raises(DpkitUsageError, match="'nope' is not in schema"):
        s.column("nope")


@pytest.mark.parametrize(
    "text, line, message",
    [
        # a duplicated leaf (the same value twice in one list)
        ("columns:\n  c:\n    type: categorical\n    hierarchy:\n      Any: [a, b, a]\n", 5, "'a' appears twice"),
        # a leaf under two parents
        ("columns:\n  c:\n    type: categorical\n    hierarchy:\n      Any:\n        X: [a, b]\n        Y: [c, a]\n",
         7, "'a' appears twice"),
        # an inner node reused as a leaf name
        ("columns:\n  c:\n    type: categorical\n    hierarchy:\n      Any:\n        X: [a, X]\n", 6, "'X' appears twice"),
        # a cycle through a YAML anchor and alias
        ("columns:\n  c:\n    type: categorical\n    hierarchy:\n      Any: &top\n        X: *top\n", 5, "cycle"),
        ("columns:\n  x: {type: numeric, bounds: [5, 5]}\n", 2, "lo < hi"),
        ("columns:\n  x: {type: numeric, bounds: [9, 1]}\n", 2, "lo < hi"),
        ("columns:\n  x: {type: numeric, bounds: [0, .inf]}\n", 2, "must be a number"),
        ("columns:\n  x: {type: numeric, bounds: [0, 1e999]}\n", 2, "finite"),
        ("columns:\n  x: {type: numeric}\n", 2, "needs public bounds"),
        ("columns:\n  x: {type: numerical, bounds: [0, 1]}\n", 2, "unknown type 'numerical'"),
        ("columns:\n  x: {type: numeric, bounds: [0, 1], bins: 3}\n", 2, "unknown key 'bins'"),
        ("colums:\n  x: {type: ignore}\n", 1, "unknown top-level key 'colums'"),
        ("target: y\ncolumns:\n  x: {type: ignore}\n", 1, "target 'y' is not a declared column"),
        ("target: x\ncolumns:\n  x: {type: numeric, bounds: [0, 1]}\n", 1, "must be a categorical column"),
        ("columns:\n  x: {type: ignore}\n  x: {type: ignore}\n", 3, "duplicate key 'x'"),
        ("columns:\n  c: {type: categorical, values: []}\n", 2, "non-empty list"),
        ("columns:\n  c: {type: categorical}\n", 2, "exactly one of 'hierarchy' or 'values'"),
        ("columns:\n  c:\n    type: categorical\n    hierarchy: {A: null, B: null}\n", 4, "exactly one root"),
        ("missing_policy: skip\ncolumns:\n  x: {type: ignore}\n", 1, "missing_policy must be one of"),
        ("columns:\n  x: {type: numeric, bounds: [0, 1], integer: maybe}\n", 2, "true or false"),
        ("columns:\n  x: {type: numeric, bounds: [0, 10], hierarchy: {\"0..5\": {\"0..2\": null, \"3..5\": null}}}\n",
         2, "tile it exactly"),
        ("columns:\n  x: {type: numeric, bounds: [0, 10], hierarchy: {\"0..5\": null}}\n", 2, "must equal the bounds"),
        ("columns:\n  x:\n", 2, "needs a type"),
        ("columns:\n  x: {type: numeric, bounds: [0, 10], points: [10]}\n", 2, "strictly inside"),
        ("columns:\n  x: {type: numeric, bounds: [0, 10], points: [2, 1]}\n", 2, "ascending"),
        ("columns:\n  x: {type: numeric, bounds: [0, 10], integer: true, points: [0.5]}\n", 2, "(integers)"),
        ("columns:\n  x: {type: numeric, bounds: [0, 10], points: 3}\n", 2, "must be a list"),
    ],
)
def test_errors_name_line_and_key(text, line, message):
    with pytest.raises(SchemaError) as exc:
        parse_schema(text, "S.yaml")
    assert message in str(exc.value)
    assert where(exc)[0] == line
    assert "\n" not in str(exc.value)


def test_yaml_syntax_error_has_line_and_column():
    text = "columns:\n  x: {type: numeric, bounds: [0, 1]\n  y: {type: ignore}\n"
    with pytest.raises(SchemaError, match="YAML syntax error") as exc:
        parse_schema(text, "S.yaml")
    line, col = where(exc)
    assert line == 3 and col >= 1


def test_tab_indentation_is_a_syntax_error_with_line():
    with pytest.raises(SchemaError, match="YAML syntax error") as exc:
        parse_schema("columns:\n\tx: {type: ignore}\n", "S.yaml")
    assert where(exc)[0] == 2


def test_interval_hierarchy_parses():
    text = (
        'columns:\n  age:\n    type: numeric\n    bounds: [0, 100]\n    hierarchy:\n'
        '      "0..100":\n        "0..50": {"0..25": null, "25..50": null}\n        "50..100": null\n'
    )
    col = parse_schema(text, "S.yaml").columns["age"]
    assert isinstance(col, NumericColumn) and col.hierarchy is not None
    assert [(c.lo, c.hi) for c in col.hierarchy.children] == [(0, 50), (50, 100)]
    assert [(c.lo, c.hi) for c in col.hierarchy.children[0].children] == [(0, 25), (25, 50)]


def test_empty_file_and_missing_file(tmp_path):
    with pytest.raises(SchemaError, match="empty"):
        parse_schema("", "S.yaml")
    with pytest.raises(SchemaError, match="not found"):
        load_schema(tmp_path / "nope.yaml")
    with pytest.raises(SchemaError, match="is a directory"):
        load_schema(tmp_path)
    bad = tmp_path / "latin.yaml"
    bad.write_bytes("columns:\n  caf\xe9: {type: ignore}\n".encode("latin-1"))
    with pytest.raises(SchemaError, match="not UTF-8"):
        load_schema(bad)


@pytest.mark.parametrize("name", ["adult", "iris", "breast-cancer-wisconsin", "clustering", "gowalla"])
def test_shipped_schemas_load(name):
    s = load_schema(ROOT / "taxonomies" / f"{name}.yaml")
    assert s.columns
    assert s.path.endswith(f"{name}.yaml")


def test_adult_schema_matches_the_data_header():
    header = (ROOT / "sample_data/adult/train.csv").read_text().splitlines()[0].split(",")
    s = load_schema(ROOT / "taxonomies/adult.yaml")
    assert list(s.columns) == header
    assert s.target == "income" and s.missing == "?" and s.missing_policy == "drop"
    assert isinstance(s.columns["fnlwgt"], IgnoredColumn)


def test_schema_to_dict_roundtrip():
    s = parse_schema(GOOD, "S.yaml")
    again = parse_schema(dump_schema(schema_to_dict(s)), "again.yaml")
    assert again.columns["workclass"].leaves == s.columns["workclass"].leaves
    assert again.columns["workclass"].nodes.keys() == s.columns["workclass"].nodes.keys()
    assert again.target == s.target and again.missing == s.missing


# ------------------------------------------------------------------ property: trees round-trip

NAMES = st.text(alphabet=string.ascii_letters + string.digits + "-_ <>=&.()", min_size=1, max_size=8).map(
    str.strip
).filter(lambda s: s != "" and s.lower() not in ("null", "true", "false", "yes", "no", "on", "off", "~"))


@st.composite
def trees(draw):
    """A random taxonomy: nested dict name -> subtree|None with globally unique names."""
    names = draw(st.lists(NAMES, min_size=2, max_size=30, unique=True))
    it = iter(names)

    def build(depth: int) -> dict:
        n = draw(st.integers(min_value=1, max_value=4))
        out = {}
        for _ in range(n):
            name = next(it, None)
            if name is None:
                break
            if depth < 3 and draw(st.booleans()):
                sub = build(depth + 1)
                out[name] = sub or None
            else:
                out[name] = None
        return out

    tree = build(0)
    return tree


def leaves_of(tree: dict) -> list[str]:
    out = []
    for k, v in tree.items():
        out.extend(leaves_of(v) if v else [k])
    return out


@settings(max_examples=60, deadline=None)
@given(trees())
def test_random_trees_roundtrip_through_yaml(tree):
    data = {"columns": {"c": {"type": "categorical", "hierarchy": {"Any": tree}}}}
    if "Any" in leaves_of(tree) or "Any" in str(list(tree)):
        return
    text = dump_schema(data)
    col = parse_schema(text, "S.yaml").columns["c"]
    assert list(col.leaves) == leaves_of(tree)
    # every node's [lo, hi) covers exactly its own leaves
    for node in col.root.walk():
        covered = [n.name for n in node.walk() if n.is_leaf]
        assert list(col.leaves[node.lo:node.hi]) == covered


def test_a_draft_schema_is_refused_unless_allowed(tmp_path):
    # privacy review F7: `taxonomy infer` drafts carry data-derived domains
    from dpkit.errors import SchemaError
    from dpkit.schema.parse import load_schema

    p = tmp_path / "draft.yaml"
    p.write_text("draft: true\ncolumns:\n  x: {type: numeric, bounds: [0, 1]}\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="draft"):
        load_schema(p)
    assert load_schema(p, allow_draft=True).draft is True


def test_numeric_points_parse_and_roundtrip():
    """``points:`` — extra public candidate split points (issue 36); absent: none."""
    s = parse_schema("columns:\n  x: {type: numeric, bounds: [0, 600], points: [0.1]}\n"
                     "  n: {type: numeric, bounds: [0, 100000], integer: true, points: [100]}\n"
                     "  a: {type: numeric, bounds: [0, 1]}\n", "S.yaml")
    assert s.columns["x"].points == (0.1,) and s.columns["n"].points == (100.0,) and s.columns["a"].points == ()
    d = schema_to_dict(s)
    assert d["columns"]["n"]["points"] == [100] and "points" not in d["columns"]["a"]
    again = parse_schema(dump_schema(d), "again.yaml")
    assert {n: c.points for n, c in again.columns.items()} == {n: c.points for n, c in s.columns.items()}


def test_a_numeric_column_without_points_keeps_its_repr():
    """A seeded run's key is derived from its parameters' repr (dpkit.privacy.rng.run_context):
    a column without ``points`` reprs as before they existed (same bytes for the same key), one
    with points says so (another parameter: independent noise)."""
    col = NumericColumn("age", 15.0, 95.0, True)
    assert repr(col) == "NumericColumn(name='age', lo=15.0, hi=95.0, integer=True, hierarchy=None, kind='numeric')"
    assert "points=(0.1,)" in repr(NumericColumn("x", 0.0, 600.0, False, None, points=(0.1,)))
