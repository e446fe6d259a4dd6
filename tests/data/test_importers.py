"""ARX hierarchy CSVs and DiffGen brace files -> dpkit schemas."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.errors import DpkitUsageError, SchemaError
from dpkit.schema.importers import (
    arx_column_name,
    build_schema,
    dump_schema,
    import_arx,
    import_diffgen,
    same_tree,
)
from dpkit.schema.parse import CategoricalColumn, NumericColumn, load_schema, parse_schema

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.mark.parametrize(
    "name, column",
    [
        ("adult_hierarchy_workclass.csv", "workclass"),
        ("hierarchy_marital-status.csv", "marital-status"),
        ("workclass.csv", "workclass"),
        ("sex.CSV", "sex"),
    ],
)
def test_arx_column_name(name, column):
    assert arx_column_name(Path("/x") / name) == column


def test_arx_folder_imports_and_validates():
    cols = import_arx([FIX / "arx"])
    assert set(cols) == {"age", "income", "marital-status", "sex", "workclass"}
    data, schema = build_schema(cols, target="income")
    wc = schema.columns["workclass"]
    assert isinstance(wc, CategoricalColumn)
    assert wc.root.name == "Any"  # ARX's '*' becomes Any
    assert [c.name for c in wc.root.children] == ["Non-Government", "Government", "Unemployed"]
    assert wc.nodes["Government"].children[0].name == "Federal-gov"
    ms = schema.columns["marital-status"]
    # 'Never-married;Never-married;*' repeats the leaf: collapsed to one leaf under Any
    assert ms.nodes["Never-married"].is_leaf and ms.nodes["Never-married"].depth == 1
    age = schema.columns["age"]
    assert isinstance(age, NumericColumn)
    # leaves 17..90 under [15, 20[ ... [90, 95[ under [10, 20[ ... [90, 100[: the levels nest
    # and tile once each node is narrowed to its children, so they become an interval hierarchy
    assert (age.lo, age.hi, age.integer) == (15, 95, True)
    assert age.hierarchy is not None
    tops = [(c.lo, c.hi) for c in age.hierarchy.children]
    assert tops[0] == (15, 20) and tops[1] == (20, 30) and tops[-1] == (90, 95)
    assert [(c.lo, c.hi) for c in age.hierarchy.children[1].children] == [(20, 25), (25, 30)]
    assert not age.hierarchy.children[0].children  # [10, 20[ held only [15, 20[: merged
    # the written YAML loads back to the same trees
    again = parse_schema(dump_schema(data), "again.yaml")
    for name in ("workclass", "marital-status", "sex", "income"):
        assert same_tree(again.columns[name].root, schema.columns[name].root, root_names=True)
    assert again.target == "income"


def test_arx_numeric_bounds_only():
    cols = import_arx([FIX / "arx" / "adult_hierarchy_age.csv"], numeric="bounds")
    _, schema = build_schema(cols)
    age = schema.columns["age"]
    # bounds span every leaf and interval label ([10, 20[ ... [90, 100[)
    assert (age.lo, age.hi, age.hierarchy) == (10, 100, None)


@pytest.mark.parametrize(
    "text",
    [
        "1;[0, 5[;*\n7;[5, 10[;*\n12;[12, 15[;*\n",  # a gap between 10 and 12
        "1;[0, 5[;[0, 10[;*\n2;[0, 5[;[0, 20[;*\n",  # a label under two parents
        "1;[0, 5[;[2, 10[;*\n6;[5, 10[;[2, 10[;*\n",  # a child reaching outside its parent
        "1;[3, 5[;*\n",  # the leaf outside its interval
        "1;15-19;*\n2;15-19;*\n",  # not half-open labels
    ],
)
def test_arx_intervals_fall_back_to_bounds(tmp_path, text):
    p = write(tmp_path, "n.csv", text)
    cols = import_arx([p])
    assert cols["n"]["type"] == "numeric" and "hierarchy" not in cols["n"]
    assert "bounds only" in cols["n"]["_comment"]
    build_schema(cols)  # still a valid schema


def test_arx_numeric_as_categorical(tmp_path):
    cols = import_arx([FIX / "arx" / "adult_hierarchy_age.csv"], numeric="categorical")
    _, schema = build_schema(cols)
    age = schema.columns["age"]
    assert isinstance(age, CategoricalColumn)
    assert age.leaves[0] == "17" and len(age.leaves) == 74
    assert "[15, 20[" in age.nodes and age.nodes["[10, 20["].depth == 1


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a;X;*\nb;Y;*\na;X;*\n", 3, "leaf 'a' appears twice"),
        ("a;X;*\nb;Y;*\na;Y;*\n", 3, "'a' is under 'Y' here but under 'X' on line 1"),
        ("a;X;*\nb;X;Z;*\n", 2, "'X' is under 'Z' here but under 'Any' on line 1"),
        ("a;X;*\nX;*\n", 2, "leaf 'X' is also a generalization"),
        ("X;*\na;X;*\n", 2, "'X' generalizes other values here but is a leaf on line 1"),
        ("a;;*\n", 1, "an empty level"),
        ("*\n", 1, "only the root"),
    ],
)
def test_arx_errors_name_file_and_line(tmp_path, text, line, message):
    p = write(tmp_path, "c.csv", text)
    with pytest.raises(SchemaError, match=message) as exc:
        import_arx([p])
    assert str(exc.value).startswith(f"{p}:{line}: ")


def test_arx_other_problems(tmp_path):
    with pytest.raises(SchemaError, match="no .csv hierarchy files"):
        import_arx([tmp_path])
    with pytest.raises(SchemaError, match="empty"):
        import_arx([write(tmp_path, "e.csv", "\n\n")])
    d = tmp_path / "d"
    d.mkdir()
    write(d, "a_hierarchy_x.csv", "a;*\n")
    write(d, "x.csv", "b;*\n")
    with pytest.raises(SchemaError, match="a second hierarchy for column 'x'"):
        import_arx([d / "a_hierarchy_x.csv", d / "x.csv"])
    # in a folder, ARX's naming wins: x.csv (ARX's data file, say) is skipped with a warning
    with pytest.warns(Warning, match="skipped x.csv"):
        assert set(import_arx([d])) == {"x"}
    with pytest.raises(SchemaError, match="';'-separated; give the delimiter"):
        import_arx([write(tmp_path, "comma.csv", "a,X,*\nb,X,*\n")])
    assert set(import_arx([write(tmp_path, "comma.csv", "a,X,*\nb,X,*\n")], delimiter=",")) == {"comma"}
    with pytest.raises(DpkitUsageError):
        import_arx([write(tmp_path, "y.csv", "a;*\n")], numeric="nope")


def test_arx_without_star_root_and_trailing_delimiter(tmp_path):
    p = write(tmp_path, "c.csv", "a;X;\nb;X;\nc;Y;\n")
    _, schema = build_schema(import_arx([p]))
    col = schema.columns["c"]
    assert [n.name for n in col.root.children] == ["X", "Y"] and col.leaves == ("a", "b", "c")


# ------------------------------------------------------------------ DiffGen braces


def adult_import():
    text = (FIX / "adult-fung2007-braces.txt").read_text()
    cols = import_diffgen(text, "fung.txt")
    return build_schema(
        cols,
        rename={"classes": "income", "martial-status": "marital-status"},
        ignore=["fnlwgt"],
        target="income",
    )


def test_diffgen_adult_equals_shipped_schema():
    """The brace file of Fung et al. 2007 imports to exactly taxonomies/adult.yaml's trees."""
    _, imported = adult_import()
    shipped = load_schema(ROOT / "taxonomies/adult.yaml")
    assert set(imported.columns) == set(shipped.columns)
    assert imported.target == shipped.target
    for name, col in shipped.columns.items():
        got = imported.columns[name]
        assert got.kind == col.kind, name
        if isinstance(col, CategoricalColumn):
            assert same_tree(got.root, col.root), name
            assert sorted(got.leaves) == sorted(col.leaves), name
        elif isinstance(col, NumericColumn):
            assert (got.lo, got.hi, got.integer) == (col.lo, col.hi, col.integer), name


def test_same_tree_detects_a_difference():
    _, imported = adult_import()
    shipped = load_schema(ROOT / "taxonomies/adult.yaml")
    assert not same_tree(imported.columns["education"].root, shipped.columns["workclass"].root)
    moved = parse_schema(
        "columns:\n  c:\n    type: categorical\n    hierarchy:\n      Any: {A: [x, y], B: [z]}\n", "m"
    ).columns["c"]
    other = parse_schema(
        "columns:\n  c:\n    type: categorical\n    hierarchy:\n      Any: {A: [x], B: [y, z]}\n", "m"
    ).columns["c"]
    assert not same_tree(moved.root, other.root)


def test_diffgen_multiword_root_and_raw_names():
    cols = import_diffgen((FIX / "adult-fung2007-braces.txt").read_text())
    assert list(cols)[:3] == ["classes", "age", "workclass"]
    assert cols["classes"]["hierarchy"] == {"Any Class": {">50K": None, "<=50K": None}}
    assert cols["age"] == {"type": "numeric", "bounds": [15, 95], "integer": True}
    assert "martial-status" in cols  # the file's spelling; --rename fixes it


def test_diffgen_interval_hierarchy():
    text = "x:continuous\n{0-100 {0-50 {0-25} {25-50}} {50-100}}\ny:continuous\n{0.5-2.5 {ignored}}\n"
    cols = import_diffgen(text)
    _, schema = build_schema(cols)
    x = schema.columns["x"]
    assert x.hierarchy is not None and [(c.lo, c.hi) for c in x.hierarchy.children] == [(0, 50), (50, 100)]
    y = schema.columns["y"]
    assert (y.lo, y.hi, y.integer) == (0.5, 2.5, False) and y.hierarchy is None


@pytest.mark.parametrize(
    "text, message",
    [
        ("just words\n", "no 'name:discrete'"),
        ("a:discrete\n{Any {x} {y}\n", "never closed"),
        ("a:discrete\n{Any {x}}}\n", "unexpected text"),
        ("a:discrete\n{Any {} {y}}\n", "without a name"),
        ("a:discrete\n\n", "has no '{...}' tree"),
        ("a:discrete\n{Any {x}}\na:discrete\n{Any {y}}\n", "declared twice"),
        ("a:continuous\n{young {ignored}}\n", "needs a root 'lo-hi'"),
        ("a:continuous\n{0-10 {0-5} {five-10}}\n", "not an interval"),
        ("a:discrete\n{Any {x} {x}}\n", "appears twice"),
    ],
)
def test_diffgen_errors(text, message):
    with pytest.raises(SchemaError, match=message):
        build_schema(import_diffgen(text, "t.txt"))


def test_diffgen_error_line_numbers():
    with pytest.raises(SchemaError) as exc:
        import_diffgen("citation line\n\na:discrete\n{Any\n  {x}\n  {y}\n", "t.txt")
    assert str(exc.value).startswith("t.txt:4: ")


def test_build_schema_usage_errors():
    cols = import_diffgen("a:discrete\n{Any {x} {y}}\nn:continuous\n{0-1 {ignored}}\n")
    with pytest.raises(DpkitUsageError, match="rename b=...: no imported column"):
        build_schema(cols, rename={"b": "c"})
    with pytest.raises(DpkitUsageError, match="target 'n' must be categorical"):
        build_schema(cols, target="n")
    with pytest.raises(DpkitUsageError, match="target 'zz' is not a column"):
        build_schema(cols, target="zz")
    with pytest.raises(DpkitUsageError, match="ignore q"):
        build_schema(cols, ignore=["q"])
    with pytest.raises(DpkitUsageError, match="two columns would be named 'n'"):
        build_schema(cols, rename={"a": "n"})


def test_dump_quotes_what_yaml_would_misread():
    tricky = ["yes", "null", "1.5", "a: b", "#x", "[x]", "x, y", "'q'", '"dq"', "&a", "*a", "-", "~", "<=50K", ">50K"]
    data = {"columns": {"c": {"type": "categorical", "hierarchy": {"Any": dict.fromkeys(tricky)}}}}
    col = parse_schema(dump_schema(data), "t.yaml").columns["c"]
    assert list(col.leaves) == tricky


# ------------------------------------------------------------------ properties: random trees

SAFE = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.()<>=&", min_size=1, max_size=8).filter(
    lambda s: s.lower() not in ("null", "true", "false", "yes", "no", "on", "off", "any", "y", "n")
    and not s[0].isdigit() and s not in ("*", "-", "<", ">", "=")
)


@st.composite
def random_trees(draw):
    names = iter(draw(st.lists(SAFE, min_size=2, max_size=25, unique_by=str.lower)))

    def build(depth):
        out = {}
        for _ in range(draw(st.integers(1, 4))):
            name = next(names, None)
            if name is None:
                break
            out[name] = build(depth + 1) if depth < 3 and draw(st.booleans()) else None
            if out[name] == {}:
                out[name] = None
        return out

    return build(0)


def paths(tree, prefix=()):
    for name, sub in tree.items():
        if sub:
            yield from paths(sub, (*prefix, name))
        else:
            yield (*prefix, name)


def braces(name, sub):
    if not sub:
        return "{" + name + "}"
    return "{" + name + " " + " ".join(braces(k, v) for k, v in sub.items()) + "}"


def tree_of(col):
    def rec(node):
        return {c.name: rec(c) if c.children else None for c in node.children}

    return rec(col.root)


@settings(max_examples=40, deadline=None)
@given(random_trees())
def test_arx_rows_of_any_tree_import_to_that_tree(tmp_path_factory, tree):
    rows = list(paths(tree))
    width = max(len(p) for p in rows)
    # ARX rows all have one width: a shallow leaf repeats itself, and every row ends in '*'
    lines = [";".join([p[-1]] * (width - len(p)) + list(reversed(p)) + ["*"]) for p in rows]
    f = tmp_path_factory.mktemp("arx") / "col.csv"
    f.write_text("\n".join(lines) + "\n")
    _, schema = build_schema(import_arx([f], numeric="categorical"))
    assert tree_of(schema.columns["col"]) == tree


@settings(max_examples=40, deadline=None)
@given(random_trees())
def test_brace_text_of_any_tree_imports_to_that_tree(tree):
    text = "citation: Somebody 2007\n\ncol:discrete\n" + braces("Any", tree) + "\n"
    _, schema = build_schema(import_diffgen(text))
    assert tree_of(schema.columns["col"]) == tree


def test_guess_target_and_draft_uncovered():
    import warnings

    import pandas as pd

    from dpkit.errors import PrivacyLeakWarning
    from dpkit.schema.importers import draft_uncovered, guess_target

    cols = import_diffgen("classes:discrete\n{Any {a} {b}}\nx:discrete\n{Any {p} {q}}\n")
    assert guess_target(cols) == "classes" and guess_target(cols, {"classes": "y"}) == "y"
    assert guess_target({"x": cols["x"]}) is None
    df = pd.DataFrame({"n": ["1", "2", "?"], "y": ["a", "b", "a"], "z": ["u", "v", "u"]}, dtype=object)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = draft_uncovered(cols, df, rename={"classes": "y"}, target="y")
    assert any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
    assert set(d.columns) == {"n", "z"} and d.order == ["n", "y", "z"]
    assert d.missing == "?" and d.absent == ["x"]
    data, schema = build_schema(cols, rename={"classes": "y"}, target="y", extra=d.columns, order=d.order,
                                missing=d.missing)
    assert list(schema.columns) == ["n", "y", "z", "x"] and schema.missing_policy == "drop"
