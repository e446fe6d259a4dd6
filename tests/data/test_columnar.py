"""The columnar load path (dpkit/io/columnar.py, codes.py, source.py, parquet.py): dialect
sniffing, headerless files, Parquet in and out, several missing tokens, compact codes, and quiet
loader messages."""

from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dpkit.data.coverage import check_coverage
from dpkit.data.encode import encode
from dpkit.data.encoded import code_dtype
from dpkit.errors import DataError, SchemaError
from dpkit.io.output import write_csv
from dpkit.io.source import ReadOptions, sniff_delimiter
from dpkit.io.table import load, read_csv, read_table
from dpkit.schema.parse import parse_schema

SCHEMA_TEXT = """\
target: y
missing: ['?', 'n/a', '']
missing_policy: drop
columns:
  a: {type: categorical, hierarchy: {Any: {X: [x1, x2], Y: null}}}
  n: {type: numeric, bounds: [0, 10]}
  id: {type: ignore}
  y: {type: categorical, values: ["no", "yes"]}
"""
SCHEMA = parse_schema(SCHEMA_TEXT, "S.yaml")
GOOD = "a,n,id,y\nx1,3,1,no\nY,12,2,yes\nx2,-1,3,no\n"


def write(tmp_path: Path, text: str, name: str = "d.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def owner(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)


def quiet(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: False)


def loaded(path: Path, **kw) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = load(ReadOptions(str(path), **kw), SCHEMA)
    return t, [str(w.message) for w in caught]


# ------------------------------------------------------------------ sniffing


@pytest.mark.parametrize("d", [",", ";", "\t", "|"])
def test_sniff_each_delimiter(d):
    text = d.join(["a", "n", "id", "y"]) + "\n" + d.join(["x1", "3", '"1,5"', "no"]) + "\n"
    assert sniff_delimiter(text) == d


def test_sniff_one_column_and_ties_default_to_comma():
    assert sniff_delimiter("a\nx\n") == ","
    assert sniff_delimiter("a,b;c\n1,2;3\n") == ","  # both give 2 fields: ',' wins


def test_sniffed_semicolon_loads_with_a_warning_naming_it(tmp_path, monkeypatch):
    owner(monkeypatch)
    monkeypatch.setattr("dpkit.console._VERBOSE", True)  # -v: the one delimiter that fits is named too (issue 43)
    p = write(tmp_path, GOOD.replace(",", ";"))
    t, msgs = loaded(p, delimiter=None)
    assert any("fields are separated by ';' (sniffed" in m for m in msgs)
    ref, _ = loaded(write(tmp_path, GOOD, "c.csv"), delimiter=None)
    assert all(np.array_equal(t.columns[c], ref.columns[c]) for c in ref.columns)
    assert not any("(sniffed" in m for m in _)  # "," is not announced


def test_ragged_message_agrees_with_the_header(tmp_path, monkeypatch):
    # a ';' file read with ',' whose one row holds a comma: the numbers must not contradict
    owner(monkeypatch)
    p = write(tmp_path, "x;y\n1;2\n3,4;5\n")
    with pytest.raises(DataError) as exc:
        read_csv(p, delimiter=",")
    msg = str(exc.value)
    assert "expected 1 fields, saw 2" in msg and ":3:" in msg


# ------------------------------------------------------------------ headerless


def test_no_header_row_names_c1_cn(tmp_path):
    p = write(tmp_path, "x1,3,1,no\nY,4,2,yes\n")
    df = read_csv(p, header=False)
    assert list(df.columns) == ["c1", "c2", "c3", "c4"] and len(df) == 2
    df = read_csv(p, header=False, column_names=["a", "n", "id", "y"])
    t = encode(df, SCHEMA, source="d", first_line=1)
    assert t.n_rows == 2


def test_no_header_row_fast_load_and_line_numbers(tmp_path, monkeypatch):
    owner(monkeypatch)
    p = write(tmp_path, "x1,3,1,no\nY,4,2,yes\n")
    t, _ = loaded(p, header=False, column_names=("a", "n", "id", "y"))
    assert t.n_rows == 2 and t.columns["a"].tolist() == [0, 2]
    bad = write(tmp_path, "x1,3,1,no\npurple,4,2,yes\n", "b.csv")
    with pytest.raises(DataError, match=r"b\.csv:2: column 'a'"):
        loaded(bad, header=False, column_names=("a", "n", "id", "y"))


def test_column_names_must_match_the_width(tmp_path):
    p = write(tmp_path, "x1,3,1,no\n")
    with pytest.raises(DataError, match="column_names= gives 2 name"):
        read_csv(p, header=False, column_names=["a", "n"])


# ------------------------------------------------------------------ several missing tokens


def test_schema_missing_list_round_trips():
    from dpkit.schema.parse import schema_to_dict

    assert SCHEMA.missing_tokens == ("?", "n/a", "") and SCHEMA.missing == "?"
    assert schema_to_dict(SCHEMA)["missing"] == ["?", "n/a", ""]
    one = parse_schema("missing: '?'\ncolumns:\n  a: {type: numeric, bounds: [0, 1]}\n")
    assert one.missing_tokens == ("?",)


@pytest.mark.parametrize("text, match", [
    ("missing: []\n", "lists no token"),
    ("missing: ['?', '?']\n", "listed twice"),
    ("missing: ['?', ~]\n", "must be a string"),
])
def test_schema_missing_list_errors(text, match):
    with pytest.raises(SchemaError, match=match):
        parse_schema(text + "columns:\n  a: {type: numeric, bounds: [0, 1]}\n", "m.yaml")


def test_every_missing_token_drops_its_rows(tmp_path, monkeypatch):
    owner(monkeypatch)
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\n?,4,2,yes\nY,n/a,3,no\nx2,,4,yes\nY,5,5,yes\n")
    t, msgs = loaded(p)
    assert t.n_rows == 2 and t.columns["a"].tolist() == [0, 2]
    assert any("dropped 3 row(s) with a missing value ('?', 'n/a', '')" in m for m in msgs)
    slow = encode(read_csv(p), SCHEMA, source=str(p))
    assert all(np.array_equal(t.columns[c], slow.columns[c]) for c in slow.columns)
    cov = check_coverage(read_csv(p), SCHEMA)
    assert cov.ok and cov.missing_rows == 3


# ------------------------------------------------------------------ codes


def test_compact_code_types(tmp_path):
    assert code_dtype(5) == np.int8 and code_dtype(200) == np.int16 and code_dtype(70000) == np.int32
    t, _ = loaded(write(tmp_path, GOOD))
    # whole numbers in the bounds [0, 10] are kept as int8 (the same numbers, 1 byte a row)
    assert t.columns["a"].dtype == np.int8 and t.columns["n"].dtype == np.int8
    assert t.columns["n"].tolist() == [3, 10, 0]
    frac, _ = loaded(write(tmp_path, "a,n,id,y\nx1,3,1,no\nY,2.5,2,yes\n", "f.csv"))
    assert frac.columns["n"].dtype == np.float64 and frac.columns["n"].tolist() == [3.0, 2.5]


def test_number_dtype_holds_the_bounds():
    from dpkit.data.encoded import number_dtype

    assert number_dtype(15, 95) == np.int8 and number_dtype(-128, 127) == np.int8
    assert number_dtype(0, 128) == np.int16 and number_dtype(0, 100000) == np.int32
    assert number_dtype(0.5, 99.5) == np.int8  # whole numbers inside; clipped fractions stay float64
    assert number_dtype(0, 2**31) is None and number_dtype(-np.inf, np.inf) is None


def test_a_fraction_in_a_later_batch_makes_the_column_float64(tmp_path, monkeypatch):
    """Batches stored as int8 before the first fraction are widened: same numbers, float64."""
    import dpkit.io.columnar as columnar

    monkeypatch.setattr(columnar, "CHUNK_BYTES_CSV", 64)  # several chunks, parsed in parallel
    rows = "".join(f"x1,{i % 10},{i},no\n" for i in range(40)) + "Y,2.5,41,yes\n"
    path = write(tmp_path, "a,n,id,y\n" + rows, "late.csv")
    t, _ = loaded(path)
    assert t.columns["n"].dtype == np.float64
    assert t.columns["n"].tolist() == [float(i % 10) for i in range(40)] + [2.5]
    monkeypatch.setattr(columnar, "CHUNK_BYTES", 16)  # many chunks per column: the same table
    small, _ = loaded(path)
    assert all(small.columns[c].dtype == t.columns[c].dtype and np.array_equal(small.columns[c], t.columns[c])
               for c in t.columns)


# ------------------------------------------------------------------ the parallel reader


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(data=st.lists(st.sampled_from([b"a", b",", b"\n", b"\r\n", b"xyz", b"\n\n"]), max_size=40).map(b"".join),
       size=st.integers(1, 16), stdin=st.booleans())
def test_line_chunks_cut_the_input_at_line_endings(tmp_path_factory, data, size, stdin):
    """The chunks are the input in order, each ending at a line ending but the last."""
    from dpkit.io.columnar import _line_chunks

    path = tmp_path_factory.mktemp("chunks") / "c.csv"
    path.write_bytes(data)
    chunks = [bytes(c) for c in _line_chunks(str(path), data if stdin else None, size)]
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1]) and all(chunks)


# mostly good rows (the fast path reads them), now and then one the exact path must name
ROW = st.tuples(st.sampled_from(["x1", "x2", "Y", " x1 ", "?", '"x2"', "x1", "Y"] * 5 + ["purple"]),
                st.sampled_from(["3", "12", "-1", "2.5", "n/a", "", "7"] * 5 + ["ten", "1e400"]),
                st.sampled_from(["1", "caf\u00e9", '"1,2"']),
                st.sampled_from(["no", "yes", "?"]),
                st.sampled_from([""] * 40 + [",extra"]),
                st.sampled_from(["\n", "\n", "\r\n", "\n\n"]))


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(rows=st.lists(ROW, min_size=1, max_size=30), bom=st.booleans(), latin=st.booleans(),
       size=st.integers(8, 64))
def test_small_chunks_load_what_one_chunk_loads(tmp_path_factory, monkeypatch_session, rows, bom, latin, size):
    """Cut into chunks of a few bytes (a line per chunk and less), a file loads into the same
    table, with the same warnings, or fails with the same message naming the same line."""
    import dpkit.io.columnar as columnar

    text = "a,n,id,y\n" + "".join(f"{a},{n},{i},{y}{x}{end}" for a, n, i, y, x, end in rows)
    raw = ("\ufeff" if bom else "").encode() + (text.encode("latin-1") if latin else text.encode())
    path = tmp_path_factory.mktemp("small") / "d.csv"
    path.write_bytes(raw)

    def outcome(chunk: int):
        monkeypatch_session.setattr(columnar, "CHUNK_BYTES_CSV", chunk)
        try:
            t, msgs = loaded(path)
        except DataError as exc:
            return str(exc)
        return {c: (v.dtype, v.tolist()) for c, v in t.columns.items()}, t.n_rows, msgs

    assert outcome(size) == outcome(1 << 22)
    fast = columnar.load_csv_fast(ReadOptions(str(path)), ",", ["a", "n", "id", "y"], SCHEMA, ["a", "n", "y"])
    event("fast path" if fast is not None else "exact path")


@pytest.fixture(scope="module")
def monkeypatch_session():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_a_bad_byte_in_a_late_chunk_names_its_line(tmp_path, monkeypatch):
    """Every chunk is checked to be UTF-8 (Arrow checks only the columns it converts)."""
    import dpkit.io.columnar as columnar

    owner(monkeypatch)
    monkeypatch.setattr(columnar, "CHUNK_BYTES_CSV", 32)
    p = tmp_path / "b.csv"
    p.write_bytes(b"a,n,id,y\n" + b"x1,3,1,no\n" * 20 + b"x1,3,caf\xe9,no\n")
    with pytest.raises(DataError, match=r":22: byte 0xe9 is not valid utf-8-sig"):
        loaded(p)


def test_a_ragged_row_in_a_late_chunk_names_its_line(tmp_path, monkeypatch):
    import dpkit.io.columnar as columnar

    owner(monkeypatch)
    monkeypatch.setattr(columnar, "CHUNK_BYTES_CSV", 32)
    p = write(tmp_path, "a,n,id,y\n" + "x1,3,1,no\n" * 30 + "x1,3,no\n")
    with pytest.raises(DataError, match=r":32:"):
        loaded(p)


# ------------------------------------------------------------------ quiet messages


def test_quiet_forms_hold_no_counts_or_values(tmp_path, monkeypatch):
    quiet(monkeypatch)
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\n?,40,2,yes\nY,12,3,no\n")
    _, msgs = loaded(p)
    assert msgs == [
        f"{p}: dropped rows with a missing value ('?', 'n/a', '') in the used columns, if any (dpkit.set_verbosity(True) shows the detail)",
        f"{p}: clipped values of 'n' to the public bounds [0, 10] of S.yaml, if any (dpkit.set_verbosity(True) shows the detail)",
    ]
    bad = write(tmp_path, "a,n,id,y\nx1,3,1,no\npurple,4,2,yes\n", "b.csv")
    with pytest.raises(DataError) as exc:
        loaded(bad)
    assert "purple" not in str(exc.value) and ":3:" not in str(exc.value)
    assert "column 'a' has values not in the taxonomy" in str(exc.value)


@pytest.mark.parametrize("text, kind", [
    ("a,n,id,y\n" + "x1,3,1,no\n" * 56 + "x1,3,no\n", "short"),  # line 58, the reviewer's shortrow.csv
    ("a,n,id,y\n" + "x1,3,1,no\n" * 56 + "x1,3,1,no,9\n", "long"),
    ("a,n,id,y\nx1,3,1,no\n1\n", "parser"),  # pandas' own error (a short row after a good one)
])
def test_quiet_ragged_rows_name_no_line(tmp_path, monkeypatch, text, kind):
    # issue 38: "shortrow.csv:58: ragged row" in a cron log points at a record; the line and the
    # field count are the owner's (a terminal, or -v), the log says what to do without them
    p = write(tmp_path, text, "shortrow.csv")
    quiet(monkeypatch)
    with pytest.raises(DataError) as exc:
        loaded(p)
    msg = str(exc.value)
    assert msg == (f"{p}: a ragged row (every row needs 4 fields); check delimiter= and quoting "
                   "(dpkit.set_verbosity(True) shows the detail)"), msg
    owner(monkeypatch)
    with pytest.raises(DataError, match=r"shortrow\.csv:\d+: ragged row \(expected 4 fields"):
        loaded(p)


def test_quiet_bad_bytes_name_no_line(tmp_path, monkeypatch):
    p = tmp_path / "l.csv"
    p.write_bytes("a,n,id,y\nx1,3,1,no\nx1,3,caf\xe9,no\n".encode("latin-1"))
    quiet(monkeypatch)
    with pytest.raises(DataError) as exc:
        loaded(p)
    assert ":3:" not in str(exc.value) and "0xe9" not in str(exc.value)
    assert "a byte is not valid utf-8-sig; pass encoding=" in str(exc.value)


def test_a_learned_schema_drop_warning_quotes_no_token(tmp_path, monkeypatch):
    # issue 38: without a schema the missing token may be a guess from the data: the drop
    # warning says a value was missing, not which token was guessed (the owner sees the count)
    from dataclasses import replace

    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\n?,4,2,yes\nY,2,3,no\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet(monkeypatch)
        load(ReadOptions(str(p)), replace(SCHEMA, learned=True))
        owner(monkeypatch)
        load(ReadOptions(str(p)), replace(SCHEMA, learned=True))
    msgs = [str(w.message) for w in caught if "dropped" in str(w.message)]
    assert msgs == [f"{p}: dropped rows with a missing value in the used columns, if any (dpkit.set_verbosity(True) shows the detail)",
                    f"{p}: dropped 1 row(s) with a missing value in the used columns (33% of 3 rows) — more than "
                    "20% of the rows: 'a' is missing in 33%; missing_policy: keep keeps them as a value of their "
                    "column (docs/formats.md)"]  # the owner's share
    # the flag changes a message, never the noise: a keyed run's key derives from the schema's repr
    assert repr(replace(SCHEMA, learned=True)) == repr(SCHEMA) and replace(SCHEMA, learned=True) == SCHEMA


def test_owner_forms_hold_counts(tmp_path, monkeypatch):
    owner(monkeypatch)
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\n?,40,2,yes\nY,12,3,no\n")
    _, msgs = loaded(p)
    assert "dropped 1 row(s)" in msgs[0] and "clipped 1 value(s) of 'n'" in msgs[1]


# ------------------------------------------------------------------ stdin, encodings


def test_stdin_is_read_once_and_served_again(tmp_path, monkeypatch):
    data = GOOD.encode()

    class In:
        buffer = io.BytesIO(data)
        closed = False

    monkeypatch.setattr(sys, "stdin", In())
    from dpkit.io.table import column_names

    assert column_names(ReadOptions("-")) == ["a", "n", "id", "y"]
    t, _ = loaded(Path("-"))
    assert t.n_rows == 3 and t.source == "<stdin>"


def test_latin1_and_bad_bytes_in_an_unused_column(tmp_path, monkeypatch):
    owner(monkeypatch)
    p = tmp_path / "l.csv"
    p.write_bytes("a,n,id,y\nx1,3,caf\xe9,no\n".encode("latin-1"))
    t, _ = loaded(p, encoding="latin-1")
    assert t.n_rows == 1
    with pytest.raises(DataError, match=r":2: byte 0xe9 is not valid utf-8-sig"):
        loaded(p)  # the fast path reads only 'a', 'n', 'y' but the whole file must be valid


# ------------------------------------------------------------------ Parquet


def test_parquet_in_equals_csv_in(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"a": ["x1", "Y", "x2", "?"], "n": [3.0, 12.0, -1.0, 4.0], "id": [1, 2, 3, 4],
                       "y": ["no", "yes", "no", "yes"]})
    write_csv(df, tmp_path / "d.parquet")
    assert (tmp_path / "d.parquet").read_bytes()[:4] == b"PAR1"
    (tmp_path / "noext").write_bytes((tmp_path / "d.parquet").read_bytes())  # magic bytes
    csv_t, _ = loaded(write(tmp_path, "a,n,id,y\nx1,3,1,no\nY,12,2,yes\nx2,-1,3,no\n?,4,4,yes\n"))
    for name in ("d.parquet", "noext"):
        pq_t, msgs = loaded(tmp_path / name)
        assert pq_t.n_rows == csv_t.n_rows == 3
        assert all(np.array_equal(pq_t.columns[c], csv_t.columns[c]) for c in csv_t.columns)
        assert any("clipped" in m for m in msgs) and any("dropped" in m for m in msgs)
    strings = read_table(ReadOptions(str(tmp_path / "d.parquet")))
    assert strings["n"].tolist() == ["3", "12", "-1", "4"] and strings["a"].tolist()[0] == "x1"


def test_parquet_errors_name_the_row(tmp_path, monkeypatch):
    import pandas as pd

    owner(monkeypatch)
    write_csv(pd.DataFrame({"a": ["x1", "purple"], "n": [1.0, 2.0], "y": ["no", "no"]}), tmp_path / "b.parquet")
    with pytest.raises(DataError, match=r"b\.parquet: row 2: column 'a' has a value not in the taxonomy"):
        loaded(tmp_path / "b.parquet")
    write_csv(pd.DataFrame({"a": ["x1"], "n": ["abc"], "y": ["no"]}), tmp_path / "c.parquet")
    with pytest.raises(DataError, match=r"row 1: numeric column 'n' has 'abc'"):
        loaded(tmp_path / "c.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        loaded(tmp_path / "junk.parquet")


def test_parquet_in_small_batches_reads_dictionaries_and_names_the_row(tmp_path, monkeypatch):
    """Batches of 2 rows, encoded on worker threads: the categorical strings arrive as Arrow
    dictionaries, the table equals the one-batch read, and an error names its row."""
    import pandas as pd

    import dpkit.io.parquet as parquet

    owner(monkeypatch)
    rows = pd.DataFrame({"a": ["x1", "Y", "x2", "?", "x1", "Y", "x2"], "n": [1.0, 2.0, 3.5, 4.0, 20.0, 6.0, 7.0],
                         "y": ["no", "yes", "no", "no", "yes", "no", "yes"]})
    write_csv(rows, tmp_path / "g.parquet")
    opened = []
    real_open = parquet._open_parquet
    monkeypatch.setattr(parquet, "_open_parquet", lambda o, d=(): opened.append(list(d)) or real_open(o, d))
    whole, msgs = loaded(tmp_path / "g.parquet")
    monkeypatch.setattr(parquet, "PARQUET_BATCH_ROWS", 2)
    small, small_msgs = loaded(tmp_path / "g.parquet")
    assert opened[-1] == ["a", "y"]  # the categorical string columns, as dictionaries
    assert small.n_rows == whole.n_rows == 6 and small_msgs == msgs
    assert all(np.array_equal(small.columns[c], whole.columns[c]) and small.columns[c].dtype == whole.columns[c].dtype
               for c in whole.columns)
    bad = rows.copy()
    bad.loc[6, "a"] = "purple"
    write_csv(bad, tmp_path / "h.parquet")
    with pytest.raises(DataError, match=r"h\.parquet: row 7: column 'a' has a value not in the taxonomy"):
        loaded(tmp_path / "h.parquet")


def test_parquet_on_stdin(tmp_path, monkeypatch):
    import pandas as pd

    write_csv(pd.DataFrame({"a": ["x1", "Y"], "n": [1.0, 2.0], "y": ["no", "yes"]}), tmp_path / "s.parquet")

    class In:
        buffer = io.BytesIO((tmp_path / "s.parquet").read_bytes())
        closed = False

    monkeypatch.setattr(sys, "stdin", In())
    t, _ = loaded(Path("-"))
    assert t.n_rows == 2 and t.columns["a"].tolist() == [0, 2]


def _old_read_categorical(path: Path) -> dict:
    """The previous, whole-file reader: every block's dictionary unified at the end."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(
        column_types={c: pa.dictionary(pa.int32(), pa.string()) for c in ("a", "n", "y")},
        strings_can_be_null=False))
    out = {}
    for name, col in zip(table.column_names, table.columns, strict=True):
        arr = col.unify_dictionaries().combine_chunks()
        out[name] = (arr.dictionary.to_pylist(), arr.indices.to_numpy(zero_copy_only=False))
    return out


def test_read_categorical_streams_blocks_into_first_seen_categories(tmp_path, monkeypatch) -> None:
    """Many small blocks (each with its own dictionary), codes joined a few blocks at a time,
    a column passing 127 values midway (int8 -> int16 codes): the same categories, in the
    same (first-seen) order, and the same codes as unifying the whole file's dictionaries."""
    import pandas as pd

    from dpkit.io import codes, columnar

    rng = np.random.default_rng(5)
    n = 3000
    a = rng.choice(["p", "q", "r s", ""], n)
    num = [str(i // 10) for i in range(n)]  # 300 distinct values, new ones all along the file
    y = rng.choice(["no", "yes"], n)
    p = write(tmp_path, "a,n,y\n" + "".join(f"{x},{m},{z}\n" for x, m, z in zip(a, num, y, strict=True)))
    monkeypatch.setattr(columnar, "CHUNK_BYTES_CSV", 2048)  # many chunks, parsed in parallel
    monkeypatch.setattr(codes, "JOIN_BLOCKS", 3)
    df = read_table(ReadOptions(str(p), delimiter=","), categorical=True)
    old = _old_read_categorical(p)
    for c in ("a", "n", "y"):
        assert isinstance(df[c].dtype, pd.CategoricalDtype)
        assert list(df[c].cat.categories) == old[c][0] == list(pd.unique(df[c].astype(str)))
        assert np.array_equal(df[c].cat.codes.to_numpy(), old[c][1])
    assert df["n"].cat.codes.dtype == np.int16 and df["a"].cat.codes.dtype == np.int8
    assert df["a"].astype(str).tolist() == list(a)


def test_read_categorical_reads_only_the_columns_asked_for(tmp_path) -> None:
    import pandas as pd

    p = write(tmp_path, "a,n,y\nx, 1,no\nz,2,yes\n")
    df = read_table(ReadOptions(str(p), delimiter=","), categorical=True, columns=["y", "a"])
    assert list(df.columns) == ["a", "y"]  # header order; 'n' (whitespace to strip) never read
    assert isinstance(df["a"].dtype, pd.CategoricalDtype)
    # a name the header lacks: every column is read (the caller's message lists them)
    full = read_table(ReadOptions(str(p), delimiter=","), categorical=True, columns=["a", "nope"])
    assert list(full.columns) == ["a", "n", "y"]
    # whitespace to strip in a column read: the exact path (strings, stripped)
    assert full["n"].tolist() == ["1", "2"] and full["n"].dtype == object
