"""Hypothesis strategies for tables as they come (the corpus of issue 43, item 5).

A :class:`MessyTable` is a small classification table with what real files carry: missing
tokens in any column (``''``, ``NA``, ``N/A``, ``NULL``, ``?``, ``' '``, ``nan``), id columns,
dates and timestamps (ISO and not), numbers and text mixed in one column, unicode, constant and
all-missing columns, one row, one class; written with a BOM, CRLF line ends, ``;``/tab/``|``
delimiters, quoted delimiters and quoted newlines, or a short header (one name fewer than the
fields, as R's ``write.csv`` writes row names). It knows the public domain it drew its values
from, so it also writes a schema a data owner could have written (:meth:`MessyTable.schema`),
and a second table of the same columns (``test``) with values the first never held.

The loader-level strategies (random schemas, raw bytes) live in ``tests/fuzz``; these build
whole files for the commands.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

#: the missing tokens tables come with (read_csv strips fields: ' ' reads as '')
MISSING_TOKENS = ["", "NA", "N/A", "NULL", "?", " ", "nan"]
DELIMITERS = [",", ";", "\t", "|"]
#: the row-number column of :meth:`MessyTable.test_bytes` (no drawn column has this name)
ROW = "row_no"
KINDS = ["category", "integer", "float", "id", "date", "timestamp", "otherdate", "mixed",
         "constant", "allmissing", "unicode"]

_WORDS = ["two\nlines", "a,b", "x;y", "p|q", "tab\there", 'say "hi"', "Ñandú", "東京", "café", "Zürich",
          "—", "ok", "émoji🙂", "long value with spaces", "red", "green", "blue"]
_NAMES = ["age", "city", "when", "score", "amount", "ville", "größe", "名前", "col b", "id",
          "user_id", "signup", "t", "note", "x", "y2"]
#: uniform percentages (st.floats and st.integers favour their bounds)
_PERCENT = st.sampled_from(range(100))
_BAD_NUMBERS = ["oops", "12abc", "1,5", "-", "1e999", "inf", "n/a"]


@dataclass
class Column:
    """One column: its kind, the public domain it draws from, and its cells (train and test)."""

    name: str
    kind: str
    domain: dict[str, Any]
    cells: list[str] = field(default_factory=list)
    test_cells: list[str] = field(default_factory=list)


@dataclass
class MessyTable:
    columns: list[Column]
    target: str
    classes: list[str]
    missing: list[str]
    delimiter: str = ","
    bom: bool = False
    crlf: bool = False
    quote_all: bool = False
    short_header: bool = False
    policy: str = "keep"
    notes: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.columns[0].cells)

    @property
    def n_test(self) -> int:
        return len(self.columns[0].test_cells)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def numeric_columns(self) -> list[str]:
        """Columns that hold numbers only (besides missing tokens): what cluster may use."""
        return [c.name for c in self.columns if c.kind in ("integer", "float") and c.name != self.target]

    def _render(self, test: bool, row_numbers: bool = False) -> bytes:
        buf = io.StringIO()
        w = csv.writer(buf, delimiter=self.delimiter, lineterminator="\r\n" if self.crlf else "\n",
                       quoting=csv.QUOTE_ALL if self.quote_all else csv.QUOTE_MINIMAL)
        w.writerow([*self.names, *([ROW] if row_numbers else [])])
        rows = zip(*[c.test_cells if test else c.cells for c in self.columns], strict=True)
        for i, row in enumerate(rows):
            cells = [*row, *([str(i)] if row_numbers else [])]
            w.writerow([str(i + 1), *cells] if self.short_header else cells)
        text = buf.getvalue()
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode("utf-8")

    def csv_bytes(self) -> bytes:
        return self._render(test=False)

    def test_bytes(self, row_numbers: bool = False) -> bytes:
        """The test table; ``row_numbers``: with a last column :data:`ROW` numbering the rows
        from 0 (to see that a command gives them back in order)."""
        return self._render(test=True, row_numbers=row_numbers)

    def schema(self) -> dict[str, Any]:
        """The public schema of this table (what its code book says), as YAML data."""
        cols: dict[str, Any] = {}
        for c in self.columns:
            d = c.domain
            if c.name == self.target:
                cols[c.name] = {"type": "categorical", "values": list(self.classes)}
            elif c.kind == "id":
                cols[c.name] = {"type": "ignore"}
            elif d.get("type") == "categorical":
                spec: dict[str, Any] = {"type": "categorical", "values": list(d["values"])}
                if d.get("other"):  # the catch-all is a leaf of its own
                    spec["values"].append("(other)")
                    spec["other"] = "(other)"
                cols[c.name] = spec
            elif d.get("type") == "numeric":
                spec = {"type": "numeric", "bounds": list(d["bounds"]), "integer": bool(d.get("integer"))}
                if d.get("unparsable"):
                    spec["unparsable"] = "missing"
                cols[c.name] = spec
            elif d.get("type") in ("date", "timestamp"):
                spec = {"type": d["type"], "bounds": list(d["bounds"])}
                if d.get("unparsable"):
                    spec["unparsable"] = "missing"
                cols[c.name] = spec
            else:
                cols[c.name] = {"type": "ignore"}
        out: dict[str, Any] = {"target": self.target, "columns": cols}
        tokens = sorted({t.strip() for t in self.missing})
        if tokens:
            out["missing"] = tokens
            out["missing_policy"] = self.policy
        return out

    def describe(self) -> str:
        """One line for a failure message: the shape of the input."""
        kinds = ", ".join(f"{c.name}:{c.kind}" for c in self.columns)
        return (f"{self.n_rows} rows [{kinds}] target={self.target!r} classes={self.classes} "
                f"missing={self.missing} delimiter={self.delimiter!r} bom={self.bom} crlf={self.crlf} "
                f"quote_all={self.quote_all} short_header={self.short_header} policy={self.policy}")


def _iso(day: int) -> str:
    return (dt.date(2020, 1, 1) + dt.timedelta(days=day)).isoformat()


@st.composite
def _column(draw, name: str, kind: str, n: int, n_test: int) -> Column:  # noqa: ANN001
    """A column of ``kind`` with ``n`` training and ``n_test`` test cells (before missing)."""

    def cells(values: st.SearchStrategy[str], k: int) -> list[str]:
        return draw(st.lists(values, min_size=k, max_size=k))

    if kind in ("category", "unicode"):
        pool = draw(st.lists(st.sampled_from(_WORDS if kind == "unicode" else ["a", "b", "c", "d", "e"]),
                             min_size=1, max_size=4, unique=True))
        listed = pool if len(pool) == 1 or not draw(st.booleans()) else pool[:-1]
        unseen = draw(st.sampled_from(["Other", "zz", "Ünseen"]))
        test_pool = st.one_of(st.sampled_from(pool), st.just(unseen)) if draw(st.booleans()) else st.sampled_from(pool)
        return Column(name, kind, {"type": "categorical", "values": listed, "other": draw(st.booleans())},
                      cells(st.sampled_from(pool), n), cells(test_pool, n_test))
    if kind == "integer":
        lo = draw(st.integers(-50, 50))
        hi = lo + draw(st.integers(1, 200))
        ints = st.integers(lo - 5, hi + 5).map(str)
        return Column(name, kind, {"type": "numeric", "bounds": [lo, hi], "integer": True},
                      cells(ints, n), cells(ints, n_test))
    if kind == "float":
        floats = st.floats(-10, 1000, allow_nan=False).map(lambda v: f"{v:.3f}")
        return Column(name, kind, {"type": "numeric", "bounds": [-10, 1000]}, cells(floats, n), cells(floats, n_test))
    if kind == "id":
        start = draw(st.integers(0, 10_000))
        style = draw(st.sampled_from(["{}", "ID-{:05d}", "u{}x"]))
        return Column(name, kind, {}, [style.format(start + i) for i in range(n)],
                      [style.format(start + n + i) for i in range(n_test)])
    if kind == "date":
        days = st.integers(0, 1500).map(_iso)
        return Column(name, kind, {"type": "date", "bounds": ["2020-01-01", "2024-02-01"]},
                      cells(days, n), cells(days, n_test))
    if kind == "timestamp":
        sep = draw(st.sampled_from(["T", " "]))
        stamps = st.tuples(st.integers(0, 700), st.integers(0, 86399)).map(
            lambda t: f"{_iso(t[0])}{sep}{t[1] // 3600:02d}:{t[1] // 60 % 60:02d}:{t[1] % 60:02d}")
        return Column(name, kind, {"type": "timestamp", "bounds": ["2020-01-01T00:00:00", "2022-01-01T00:00:00"]},
                      cells(stamps, n), cells(stamps, n_test))
    if kind == "otherdate":  # not ISO: day first, unpadded, impossible dates
        style = draw(st.sampled_from(["dmy", "loose", "bad"]))
        fmt = {"dmy": lambda d: d.strftime("%d/%m/%Y"), "loose": lambda d: f"{d.year}-{d.month}-{d.day}",
               "bad": lambda d: f"{d.year}-02-30" if d.day % 3 == 0 else d.isoformat()}[style]
        vals = st.integers(0, 900).map(lambda k: fmt(dt.date(2020, 1, 1) + dt.timedelta(days=k)))
        domain = ({"type": "date", "bounds": ["2020-01-01", "2023-01-01"], "unparsable": True}
                  if draw(st.booleans()) else {})
        return Column(name, kind, domain, cells(vals, n), cells(vals, n_test))
    if kind == "mixed":  # numbers with a few words in them
        vals = st.one_of(st.integers(0, 100).map(str), st.integers(0, 100).map(str), st.sampled_from(_BAD_NUMBERS))
        domain = ({"type": "numeric", "bounds": [0, 100], "integer": True, "unparsable": True}
                  if draw(st.booleans()) else {})
        return Column(name, kind, domain, cells(vals, n), cells(vals, n_test))
    if kind == "constant":
        v = draw(st.sampled_from(["1", "yes", "0.0", "K"]))
        domain = ({"type": "numeric", "bounds": [0, 10]} if v in ("1", "0.0") else {"type": "categorical", "values": [v]})
        return Column(name, kind, domain, [v] * n, [v] * n_test)
    if kind == "allmissing":
        tok = draw(st.sampled_from(MISSING_TOKENS))
        domain = draw(st.sampled_from([{"type": "numeric", "bounds": [0, 1]}, {"type": "categorical", "values": ["a"]}]))
        return Column(name, kind, {**domain, "allmissing": tok}, [tok] * n, [tok] * n_test)
    raise AssertionError(kind)


@st.composite
def messy_tables(draw, *, max_rows: int = 60, min_columns: int = 1, max_columns: int = 5,  # noqa: ANN001
                 kinds: list[str] | None = None, dialects: bool = True) -> MessyTable:
    """A small messy classification table (and a test table of the same columns)."""
    # sampled, not st.integers: those favour their bounds, and most tables would have one row
    n = draw(st.sampled_from([max_rows, 34, 21, 13, 8, 5, 3, 2, 1, max_rows, max_rows]))
    n_test = draw(st.sampled_from([1, 2, 5, 10]))
    kinds = kinds or KINDS
    width = draw(st.sampled_from(list(range(max_columns, min_columns - 1, -1))))
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=width, max_size=width))
    names = draw(st.lists(st.sampled_from(_NAMES), min_size=len(chosen) + 1, max_size=len(chosen) + 1, unique=True))
    target, feature_names = names[0], names[1:]
    columns = [draw(_column(name, kind, n, n_test)) for name, kind in zip(feature_names, chosen, strict=True)]

    # the target: one to three classes, text or integer labels
    labels = draw(st.sampled_from([["no", "yes"], ["0", "1"], ["c0", "c1", "c2"], ["ja", "né"], ["only"]]))
    classes = labels[: min(len(labels), draw(st.sampled_from([2, 3, 2, 2, 1])))]
    ys = st.sampled_from(classes)
    tcol = Column(target, "target", {"type": "categorical", "values": classes},
                  draw(st.lists(ys, min_size=n, max_size=n)), draw(st.lists(ys, min_size=n_test, max_size=n_test)))
    at = draw(st.integers(0, len(columns)))
    columns.insert(at, tcol)

    # missing tokens: none, or some, sprinkled into some columns (the target too, rarely)
    missing = draw(st.one_of(st.just([]), st.lists(st.sampled_from(MISSING_TOKENS), min_size=1, max_size=3, unique=True)))
    for c in columns:
        if c.kind == "allmissing":
            if c.domain["allmissing"] not in missing:
                missing.append(c.domain["allmissing"])
            continue
        if not missing or c.kind == "id":
            continue
        rate = draw(st.sampled_from([0.0, 0.0, 0.1, 0.5] if c.name != target else [0.0, 0.0, 0.0, 0.1]))
        if rate:
            for cellset in (c.cells, c.test_cells):
                for i in range(len(cellset)):
                    if draw(_PERCENT) < rate * 100:
                        cellset[i] = draw(st.sampled_from(missing))

    table = MessyTable(columns, target, classes, missing, policy=draw(st.sampled_from(["keep", "keep", "drop", "error"])))
    if dialects:
        table.delimiter = draw(st.sampled_from(DELIMITERS + [","] * 3))
        table.bom = draw(st.booleans())
        table.crlf = draw(st.booleans())
        table.quote_all = draw(st.sampled_from([False] * 4 + [True]))
        table.short_header = draw(st.sampled_from([False] * 9 + [True]))
    return table
