"""Fuzz and property tests of the CSV and YAML loaders (hypothesis).

- ``read_csv`` on arbitrary bytes and ``parse_schema`` on arbitrary text either return a
  result or raise a :class:`DpkitError` — never anything else (no KeyError/IndexError/...).
- Random schemas survive ``schema_to_dict`` → YAML → ``parse_schema``.
- Random tables written with ``write_csv`` read back identically; encoding them against a
  random schema gives codes of the right leaves and numbers clipped into the public bounds.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
import warnings

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpkit.data.encode import encode
from dpkit.errors import DpkitError
from dpkit.io.output import write_csv
from dpkit.io.table import read_csv
from dpkit.schema.parse import CategoricalColumn, NumericColumn, parse_schema, schema_to_dict


@pytest.fixture(autouse=True, scope="module")
def _owner_view():
    """These tests read the data owner's messages (exact counts, values, lines): as on a terminal."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("dpkit.console.owner_watching", lambda: True)
        yield

#: DPKIT_FUZZ_EXAMPLES=5000 for a long, random fuzzing session; by default a quick,
#: derandomized run (the same examples every time, so `make test` is reproducible)
LONG = int(os.environ.get("DPKIT_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=LONG or 50, deadline=None, derandomize=not LONG, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _tmpfile(data: bytes) -> str:
    fd, path = tempfile.mkstemp(suffix=".csv")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def _read(data: bytes, **kw):
    path = _tmpfile(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return read_csv(path, **kw)
    finally:
        os.unlink(path)


# ----------------------------------------------------------------------------- raw fuzz

csv_alphabet = st.sampled_from(list('ab,;\t"\n\r \x00é\ufeff1.-'))
csvish = st.lists(csv_alphabet, max_size=60).map("".join)


@FUZZ
@given(
    data=st.one_of(st.binary(max_size=200), csvish.map(lambda s: s.encode("utf-8"))),
    delimiter=st.sampled_from([",", ";", "\t"]),
    encoding=st.sampled_from(["utf-8-sig", "latin-1", "utf-16"]),
)
def test_read_csv_never_crashes(data: bytes, delimiter: str, encoding: str) -> None:
    try:
        df = _read(data, delimiter=delimiter, encoding=encoding)
    except DpkitError as exc:
        msg = str(exc)
        assert msg and "\n" not in msg.strip().split(": ", 1)[0]  # names the file first
        return
    # success: a rectangular table of strings with unique, non-empty names
    assert len(df) > 0
    assert len(set(df.columns)) == len(df.columns)
    assert all(isinstance(c, str) and c for c in df.columns)
    for col in df.columns:
        assert all(isinstance(v, str) for v in df[col])


yaml_alphabet = st.sampled_from(list("abx :-[]{},\n\t'\"?&*!|>#%@0123456789."))


@FUZZ
@given(text=st.one_of(st.text(max_size=200), st.lists(yaml_alphabet, max_size=120).map("".join)))
def test_parse_schema_never_crashes(text: str) -> None:
    try:
        parse_schema(text, "fuzz.yaml")
    except DpkitError as exc:
        assert str(exc).startswith("fuzz.yaml")


@FUZZ
@given(
    text=st.lists(yaml_alphabet, max_size=80).map("".join),
    where=st.integers(0, 400),
)
def test_parse_schema_mutated_valid_schema(text: str, where: int) -> None:
    """A real schema with junk spliced in: a schema or a SchemaError naming the file."""
    base = open(os.path.join(os.path.dirname(__file__), "..", "..", "taxonomies", "iris.yaml")).read()
    i = where % (len(base) + 1)
    try:
        parse_schema(base[:i] + text + base[i:], "iris.yaml")
    except DpkitError as exc:
        assert str(exc).startswith("iris.yaml")


# ----------------------------------------------------------------------------- schemas

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=6)


@st.composite
def tree(draw, depth: int = 0):  # noqa: ANN001, ANN201
    """A taxonomy subtree as YAML data: None (a leaf) or {name: subtree}."""
    if depth >= 2 or draw(st.booleans()):
        return None
    kids = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    return {k: draw(tree(depth + 1)) for k in kids}


def _uniquify(node, prefix: str, counter: list[int]):  # noqa: ANN001, ANN202
    # node names must be unique across the tree: prefix each with a running number
    if node is None:
        return None
    out = {}
    for k, v in node.items():
        counter[0] += 1
        key = f"{prefix}{k}{counter[0]}"  # before recursing: the child bumps the counter
        out[key] = _uniquify(v, prefix, counter)
    return out


@st.composite
def column_spec(draw, name: str):  # noqa: ANN001, ANN201
    kind = draw(st.sampled_from(["categorical", "numeric", "ignore"]))
    if kind == "ignore":
        return {"type": "ignore"}
    if kind == "numeric":
        lo = draw(st.integers(-1000, 1000))
        width = draw(st.integers(1, 1000))
        integer = draw(st.booleans())
        return {"type": "numeric", "bounds": [lo, lo + width], "integer": integer}
    if draw(st.booleans()):
        values = draw(st.lists(names, min_size=1, max_size=5, unique=True))
        return {"type": "categorical", "values": [f"{name}_{v}" for v in values]}
    t = _uniquify(draw(tree()) or {"only": None}, f"{name}_", [0])
    return {"type": "categorical", "hierarchy": {"Any": t}}


@st.composite
def schemas(draw):  # noqa: ANN201
    cols = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    spec = {"columns": {c: draw(column_spec(c)) for c in cols}}
    if all(v["type"] == "ignore" for v in spec["columns"].values()):
        spec["columns"][cols[0]] = {"type": "numeric", "bounds": [0, 1]}
    cats = [c for c, v in spec["columns"].items() if v["type"] == "categorical"]
    if cats and draw(st.booleans()):
        spec["target"] = cats[0]
    return spec


@FUZZ
@given(spec=schemas())
def test_schema_round_trip(spec: dict) -> None:
    s = parse_schema(yaml.safe_dump(spec, sort_keys=False), "s.yaml")
    again = parse_schema(yaml.safe_dump(schema_to_dict(s), sort_keys=False), "s.yaml")
    assert again.columns == s.columns
    assert again.target == s.target
    for c in s.columns.values():
        if isinstance(c, CategoricalColumn):
            assert len(set(c.leaves)) == len(c.leaves)
            assert c.root.lo == 0 and c.root.hi == len(c.leaves)
            for node in c.root.walk():  # every node covers exactly its leaves' codes
                leaves = [n.name for n in node.walk() if n.is_leaf]
                assert [c.leaf_code[x] for x in leaves] == list(range(node.lo, node.hi))


# ----------------------------------------------------------------------------- tables


@st.composite
def schema_and_table(draw):  # noqa: ANN201
    spec = draw(schemas())
    schema = parse_schema(yaml.safe_dump(spec, sort_keys=False), "s.yaml")
    n = draw(st.integers(1, 15))
    data: dict[str, list[str]] = {}
    for name, col in schema.columns.items():
        if isinstance(col, CategoricalColumn):
            data[name] = [draw(st.sampled_from(col.leaves)) for _ in range(n)]
        elif isinstance(col, NumericColumn):
            span = col.hi - col.lo
            vals = draw(st.lists(st.floats(col.lo - span, col.hi + span, allow_nan=False),
                                 min_size=n, max_size=n))
            data[name] = [repr(float(v)) if not col.integer else str(int(v)) for v in vals]
        else:
            data[name] = draw(st.lists(st.text(alphabet='ab ,"\n;x', max_size=5), min_size=n, max_size=n))
    return schema, data, n


@FUZZ
@given(case=schema_and_table())
def test_write_read_encode(case) -> None:  # noqa: ANN001
    import pandas as pd

    schema, data, n = case
    df = pd.DataFrame(data)
    fd, path = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    try:
        write_csv(df, path)
        back = read_csv(path)
    finally:
        os.unlink(path)
    assert list(back.columns) == list(df.columns)
    # read_csv strips fields (csvkit convention): compare stripped
    expected = df.apply(lambda c: c.str.strip())
    assert back.equals(expected.astype(str)) or (back.values == expected.values).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = encode(back, schema)
    for name, col in schema.columns.items():
        if isinstance(col, CategoricalColumn):
            codes = enc.columns[name]
            assert codes.dtype.kind == "i" and codes.min() >= 0 and codes.max() < len(col.leaves)
            assert [col.leaves[c] for c in codes] == data[name]
        elif isinstance(col, NumericColumn):
            vals = enc.columns[name]
            assert np.all((vals >= col.lo) & (vals <= col.hi))
            assert np.allclose(vals, np.clip(np.array(data[name], dtype=float), col.lo, col.hi))
        else:
            assert name not in enc.columns


@FUZZ
@given(case=schema_and_table(), junk=st.text(max_size=8), row=st.integers(0, 100))
def test_encode_junk_is_a_data_error(case, junk: str, row: int) -> None:  # noqa: ANN001
    """One cell replaced by junk: encoded fine (if the junk happens to be valid) or DataError."""
    import pandas as pd

    schema, data, n = case
    used = schema.used_columns()
    col = used[row % len(used)]
    data = {k: list(v) for k, v in data.items()}
    data[col][row % n] = junk
    df = pd.DataFrame(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            encode(df, schema)
    except DpkitError as exc:
        assert f":{row % n + 2}:" in str(exc)  # names the line of the bad cell


@pytest.mark.parametrize("quoted", ['"a\nb"', '"a,b"', '"say ""hi"""', '""'])
def test_quoted_fields_round_trip(tmp_path, quoted: str) -> None:
    p = tmp_path / "q.csv"
    p.write_text(f"k,v\n1,{quoted}\n2,x\n")
    df = read_csv(p)
    expected = next(csv.reader(io.StringIO(quoted)))[0]
    assert df["v"].tolist() == [expected, "x"]
