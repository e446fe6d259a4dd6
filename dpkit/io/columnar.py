"""The columnar, streaming load path: from bytes to leaf codes and clipped numbers.

The file is cut into line-aligned chunks that worker threads, one per core, parse with Apache
Arrow's CSV reader (:func:`csv_batches`): Arrow dictionary-encodes the categorical columns (so
a value is parsed once per chunk, not turned into one Python string per cell) and converts
numbers in C; the same thread then keeps only the compact codes of the chunk (int8/int16/int32
leaf codes; numbers clipped to the public bounds, in the smallest integer type that holds the
bounds when they are all whole numbers, else float64 — :func:`~dpkit.data.encoded.number_dtype`), and the chunks'
codes are appended in file order, so memory is the encoded table plus a few chunks. Parquet
files are read the same way, a row group at a time (:mod:`dpkit.io.parquet`, with this
module's encoder). (DuckDB scans as fast, but gives no dictionary codes to stream into numpy;
Arrow was ~2x faster than the pandas path on 1M Adult rows, docs/results/scale-history.md.)

Anything unusual — a ragged row, a value outside the taxonomy, a non-number, a missing
value under ``missing_policy: error``, undecodable bytes, a quoted newline — makes
:func:`load_csv_fast` return None, and the caller (:func:`dpkit.io.table.load`) takes the
exact pandas path (:mod:`dpkit.io.exact_csv`, :mod:`dpkit.data.encode`), whose one-line
messages name the line, column and value. Only successful reads are fast; every error reads
the file a second time, which is fine.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from dpkit.data.encoded import (
    EncodedTable,
    code_dtype,
    leaf_index,
    leaf_lut,
    load_warnings,
    number_dtype,
)
from dpkit.errors import warn
from dpkit.schema.parse import CategoricalColumn, NumericColumn, Schema

if TYPE_CHECKING:
    from dpkit.io.source import ReadOptions


# bytes per block of the streaming reader: Arrow reads up to 32 blocks ahead of the consumer
# (its background reader's queue), so 16 MB blocks held up to ~512 MB of raw CSV; 4 MB blocks
# hold a quarter of that at the same speed (docs/decisions/0012-io-performance.md)
STREAM_BLOCK_SIZE = 1 << 22
# bytes per chunk of the parallel CSV reader (load_csv_fast): each worker thread parses a
# chunk with Arrow in one go (~2x faster on 2 cores than Arrow's streaming reader, which
# parses on one thread: 10M Adult rows, docs/results/scale-history.md)
CHUNK_BYTES_CSV = 1 << 22
MAX_READ_THREADS = 8


def load_csv_fast(
    options: ReadOptions,
    delimiter: str,
    header: list[str],
    schema: Schema,
    wanted: Sequence[str],
    raw: bytes | None = None,
) -> EncodedTable | None:
    """Encode ``wanted`` columns of a CSV with Arrow, or None when anything is unusual.

    ``header`` is the checked header (or the given column names for ``header=False``);
    ``raw`` holds stdin's bytes (files are streamed from disk).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if any(c not in header or c not in schema.columns for c in wanted) or not wanted:
        return None
    cols = [schema.columns[c] for c in wanted]
    if any(not isinstance(c, CategoricalColumn | NumericColumn) for c in cols):
        return None
    enc = options.encoding.lower().replace("_", "-")
    if enc in ("utf-8-sig", "utf8-sig", "utf-8", "utf8", "ascii", "us-ascii"):
        arrow_encoding = "utf8"  # Arrow skips a BOM; ASCII is valid UTF-8
    else:
        arrow_encoding = options.encoding
    names = [f"f{i}" for i in range(len(header))]
    positions = [header.index(c) for c in wanted]
    types: dict[str, Any] = {}
    for p, col in zip(positions, cols, strict=True):
        text = isinstance(col, CategoricalColumn) or col.time is not None  # dates: parsed by dpkit.schema.dates
        types[names[p]] = pa.dictionary(pa.int32(), pa.string()) if text else pa.float64()
    tokens = list(schema.missing_tokens)
    parse = pacsv.ParseOptions(delimiter=delimiter, quote_char='"', double_quote=True, escape_char=False,
                               newlines_in_values=False, ignore_empty_lines=True)
    # check_utf8=False: a UTF-8 input is checked chunk by chunk, every byte (csv_batches),
    # and a transcoded one is UTF-8 by construction (Arrow's own check would repeat it)
    convert = pacsv.ConvertOptions(include_columns=[names[p] for p in positions], column_types=types,
                                   null_values=tokens, strings_can_be_null=False,
                                   quoted_strings_can_be_null=False, check_utf8=False)
    encoder = _Encoder(schema, wanted, cols, tokens)
    try:
        source = (options.path, raw)
        for block in csv_batches(source, names, options.header, arrow_encoding, parse, convert,
                                 lambda batch: encoder.encode([batch.column(names[p]) for p in positions])):
            if not encoder.keep(block):
                return None
    except (pa.ArrowException, UnicodeError, ValueError, OSError, LookupError):
        return None  # the exact path names the problem
    return encoder.finish(options.name, error_on_missing=False)


T = TypeVar("T")


def csv_batches(source: tuple[str, bytes | None], names: list[str], header: bool, encoding: str, parse: Any,
                convert: Any, fn: Callable[[Any], T]) -> Iterator[T]:
    """``fn`` of each Arrow batch of a CSV (a table or record batch, columns ``names``), in file order.

    ``source`` is ``(path, stdin bytes or None)``. A UTF-8 input (``encoding == "utf8"``) is
    cut into chunks of :data:`CHUNK_BYTES_CSV` that end at a line ending — with
    ``newlines_in_values=False`` Arrow's own streaming reader cuts its blocks the same way, so
    a chunk parses as it would in one stream — and worker threads parse a chunk each with
    Arrow (which releases the GIL) and apply ``fn`` to it: both cores parse, where Arrow's
    streaming reader parses on one (docs/decisions/0012-io-performance.md). At most two
    chunks per worker are in flight, so memory stays bounded at any file size. Each chunk is
    checked to be UTF-8, as the exact path requires of every byte (Arrow would check only the
    columns it converts). Other encodings are read as one stream (Arrow transcodes it;
    lines of a multi-byte encoding do not end at a ``\n`` byte).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    path, raw = source
    if encoding != "utf8":
        reader = pacsv.open_csv(
            pa.BufferReader(raw) if raw is not None else path,
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1 if header else 0, encoding=encoding,
                                           block_size=STREAM_BLOCK_SIZE),
            parse_options=parse, convert_options=convert)
        for batch in reader:
            yield fn(batch)
        return

    def work(item: tuple[int, Any]) -> T:
        i, chunk = item
        if not _is_utf8(chunk):
            raise UnicodeError("not UTF-8")
        table = pacsv.read_csv(
            pa.BufferReader(chunk),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1 if i == 0 and header else 0,
                                           block_size=chunk.size + 1, use_threads=False),
            parse_options=parse, convert_options=convert)
        return fn(table)

    yield from in_order(work, enumerate(_line_chunks(path, raw, CHUNK_BYTES_CSV)))


A = TypeVar("A")


def in_order(work: Callable[[A], T], items: Iterable[A]) -> Iterator[T]:
    """``work(item)`` of each item, on a thread per core, yielded in the items' order.

    At most two items per thread are in flight (taken from ``items`` only as results are
    consumed), so memory stays bounded however many items there are. Arrow's readers and
    numpy release the GIL while they work, so the threads run side by side.
    """
    import os
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(len(os.sched_getaffinity(0)), MAX_READ_THREADS))
    with ThreadPoolExecutor(workers, thread_name_prefix="dpkit-read") as pool:
        pending: deque = deque()
        try:
            for item in items:
                pending.append(pool.submit(work, item))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for f in pending:
                f.cancel()


def _line_chunks(path: str, raw: bytes | None, size: int) -> Iterator[Any]:
    """Arrow buffers of about ``size`` bytes of the input, each ending at a line ending."""
    import pyarrow as pa

    if raw is not None:
        whole = pa.py_buffer(raw)
        total = whole.size

        def read(pos: int, n: int) -> Any:
            return whole.slice(pos, min(n, total - pos))
    else:
        fh = pa.OSFile(path)
        total = fh.size()

        def read(pos: int, n: int) -> Any:
            fh.seek(pos)
            return fh.read_buffer(n)  # Arrow's memory pool: reused from chunk to chunk
    try:
        pos = 0
        while pos < total:
            n = size
            while True:
                chunk = read(pos, n)
                if pos + chunk.size >= total:
                    break  # the last chunk: to the end of the input
                cut = _last_newline(chunk)
                if cut >= 0:
                    chunk = chunk.slice(0, cut + 1)
                    break
                n *= 2  # a line longer than the chunk
            yield chunk
            pos += chunk.size
    finally:
        if raw is None:
            fh.close()


def _last_newline(buf: Any) -> int:
    """Offset of the last ``\n`` in an Arrow buffer, or -1 (only the tail is copied)."""
    view = memoryview(buf)
    tail = 1 << 16
    while True:
        start = max(0, len(view) - tail)
        found = bytes(view[start:]).rfind(b"\n")
        if found >= 0:
            return start + found
        if start == 0:
            return -1
        tail *= 4


def _is_utf8(buf: Any) -> bool:
    """Is an Arrow buffer valid UTF-8? ASCII (the common case) is checked at memory speed."""
    import codecs

    if buf.size == 0 or int(np.frombuffer(buf, dtype=np.uint8).max()) < 0x80:
        return True
    try:
        codecs.utf_8_decode(memoryview(buf), "strict", True)
    except UnicodeDecodeError:
        return False
    return True


@dataclass
class _Block:
    """One batch, encoded (:meth:`_Encoder.encode`): the kept values of each column, or why not."""

    n: int  # rows read, kept or not
    values: list[np.ndarray] = dc_field(default_factory=list)  # per wanted column, missing rows dropped
    dropped: int = 0
    first_missing: tuple[int, str] | None = None  # (row in the batch, column)
    clipped: dict[str, int] = dc_field(default_factory=dict)
    missing: dict[str, int] = dc_field(default_factory=dict)  # rows each column drops (the owner's share)
    failed: bool = False  # the exact path must read the file
    bad: tuple[str, int, Any] | None = None  # (column, row in the batch, value), with ``strict``


class _Encoder:
    """Turns Arrow batches into kept leaf codes and numbers.

    :meth:`encode` reads only what ``__init__`` set, so worker threads may encode batches
    side by side (:func:`csv_batches`); :meth:`keep` appends them, in file order, on one
    thread.
    """

    def __init__(self, schema: Schema, wanted: Sequence[str], cols: list, tokens: list[str]) -> None:
        self.schema = schema
        self.wanted = list(wanted)
        self.cols = cols
        self.tokens = set(tokens)
        self.parts: dict[str, _Growing] = {c: _Growing() for c in self.wanted}
        self.dropped = 0
        self.first_missing: tuple[int, str] | None = None  # (row index, column)
        self.rows_seen = 0
        self.clipped = dict.fromkeys(self.wanted, 0)
        self.missing = dict.fromkeys(self.wanted, 0)  # rows each column drops
        self.bad: tuple[str, int, str] | None = None  # (column, row index, value): parquet errors
        self._leaf_index = {name: leaf_index(col) for name, col in zip(self.wanted, cols, strict=True)
                            if isinstance(col, CategoricalColumn)}
        # numeric columns still stored as small integers (dropped at the first fraction)
        self.int_types: dict[str, np.dtype] = {}
        for name, col in zip(self.wanted, cols, strict=True):
            if isinstance(col, NumericColumn):
                dtype = number_dtype(col.lo, col.hi)
                if dtype is not None:
                    self.int_types[name] = dtype

    def add(self, arrays: list[Any], *, strict: bool = False) -> bool:
        """Encode and keep one batch; False when it needs the exact path (``strict``: record the problem)."""
        return self.keep(self.encode(arrays, strict=strict))

    def encode(self, arrays: list[Any], *, strict: bool = False) -> _Block:
        """One batch's leaf codes and clipped numbers (no state changes: thread-safe)."""
        import pyarrow as pa

        n = len(arrays[0]) if arrays else 0
        block = _Block(n)

        def fail(name: str, row: int, value: Any) -> _Block:
            return _Block(n, failed=True, bad=(name, row, value) if strict else None)

        missing = np.zeros(n, dtype=bool)
        encoded: list[np.ndarray] = []
        for name, col, arr in zip(self.wanted, self.cols, arrays, strict=True):
            if isinstance(arr, pa.ChunkedArray):
                arr = arr.combine_chunks()
            nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
            if nulls is not None and not self.tokens and not (isinstance(col, NumericColumn) and col.unparsable == "missing"):
                return fail(name, int(np.flatnonzero(nulls)[0]), None)
            if isinstance(col, CategoricalColumn):
                if not pa.types.is_dictionary(arr.type):
                    arr = arr.cast(pa.string()).dictionary_encode()
                lut = leaf_lut(col, arr.dictionary.to_pylist(), self.tokens, self._leaf_index[name])
                idx = _to_numpy(arr.indices)
                if nulls is not None:
                    codes = np.where(nulls, lut.dtype.type(col.missing_code), lut[np.where(nulls, 0, idx)])
                else:
                    codes = lut[idx]
                if nulls is not None or lut.min(initial=0) < 0:  # some entry is not a leaf: is it used?
                    if (codes == -1).any():
                        r = int(np.flatnonzero(codes == -1)[0])
                        return fail(name, r, arr[r].as_py() if strict else None)
                    is_tok = codes == -2
                else:
                    is_tok = None
                encoded.append(codes)
            elif col.time is not None:
                from dpkit.schema.dates import arrow_times

                nums, is_tok, bad = arrow_times(arr, col.time, self.tokens)
                if bad.any():
                    if col.unparsable != "missing":
                        r = int(np.flatnonzero(bad)[0])
                        return fail(name, r, arr[r].as_py() if strict else None)
                    is_tok = is_tok | bad  # a learned date column: what is not a date is missing
                if col.missing:  # the missing bucket (missing_policy: keep): NaN, the row kept
                    nums = np.where(is_tok, np.nan, nums)
                    is_tok = None
                else:
                    nums = np.where(is_tok, col.lo, nums)
                encoded.append(nums)
            else:
                lenient = col.unparsable == "missing"  # a learned type: a non-number is missing
                if not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type)):
                    if not strict:
                        return fail(name, 0, None)
                    try:
                        arr = arr.cast(pa.float64())
                    except (pa.ArrowException, ValueError):
                        if not lenient:
                            r = _first_non_number(arr)
                            return fail(name, r, arr[r].as_py())
                        arr = _lenient_numbers(arr, self.tokens)
                        nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
                if arr.type != pa.float64():
                    arr = arr.cast(pa.float64())
                nums = _to_numpy(arr)
                if lenient and not np.isfinite(np.where(nulls, 0.0, nums) if nulls is not None else nums).all():
                    bad = ~np.isfinite(nums)
                    nulls = bad if nulls is None else nulls | bad
                is_tok = nulls
                if nulls is not None:
                    nums = np.where(nulls, col.lo, nums)
                if not np.isfinite(nums).all():
                    r = int(np.flatnonzero(~np.isfinite(nums))[0])
                    return fail(name, r, arr[r].as_py() if strict else None)
                if nulls is not None and col.missing:  # the missing bucket (missing_policy: keep)
                    nums = np.where(nulls, np.nan, nums)
                    is_tok = None
                encoded.append(nums)
            if is_tok is not None and is_tok.any():
                block.missing[name] = int(np.count_nonzero(is_tok))
                missing |= is_tok
                if block.first_missing is None:
                    block.first_missing = (int(np.flatnonzero(is_tok)[0]), name)
        if block.first_missing is not None:
            if self.schema.missing_policy == "error" and not strict:
                return _Block(n, failed=True)
            keep = ~missing
            encoded = [e[keep] for e in encoded]
            block.dropped = int(np.count_nonzero(missing))
        self._clip(block, encoded)
        return block

    def _clip(self, block: _Block, encoded: list[np.ndarray]) -> None:
        """The block's values: numbers clipped to their column's bounds (counted after dropping,
        as the exact path does) and whole numbers compacted to the column's integer type (as the
        exact path's encode.compact_numbers does)."""
        for name, col, e in zip(self.wanted, self.cols, encoded, strict=True):
            if isinstance(col, NumericColumn):
                out_of = (e < col.lo) | (e > col.hi)
                if out_of.any():
                    block.clipped[name] = int(np.count_nonzero(out_of))
                    e = np.clip(e, col.lo, col.hi)
                dtype = self.int_types.get(name)
                if dtype is not None and np.array_equal(np.trunc(e), e):
                    e = e.astype(dtype)
            block.values.append(e)

    def keep(self, block: _Block) -> bool:
        """Append an encoded batch (the next in file order); False when it failed."""
        if block.failed:
            if block.bad is not None:
                name, row, value = block.bad
                self.bad = (name, self.rows_seen + row, value)
            return False
        if block.first_missing is not None and self.first_missing is None:
            row, name = block.first_missing
            self.first_missing = (self.rows_seen + row, name)
        self.dropped += block.dropped
        for name, count in block.clipped.items():
            self.clipped[name] += count
        for name, count in block.missing.items():
            self.missing[name] += count
        for name, col, e in zip(self.wanted, self.cols, block.values, strict=True):
            if isinstance(col, NumericColumn) and name in self.int_types and e.dtype.kind == "f":
                del self.int_types[name]  # a fraction: the whole column is float64 from now on
            elif isinstance(col, NumericColumn) and name not in self.int_types and e.dtype.kind != "f":
                e = e.astype(np.float64)
            self.parts[name].append(e)
        self.rows_seen += block.n
        return True

    def finish(self, source: str, *, error_on_missing: bool) -> EncodedTable | None:
        if self.rows_seen == 0:
            return None
        if self.dropped and error_on_missing and self.schema.missing_policy == "error":
            return None
        clips = [(col, self.clipped[name]) for name, col in zip(self.wanted, self.cols, strict=True)
                 if self.clipped[name]]
        for w in load_warnings(source, self.schema, self.wanted, self.dropped, clips, self.schema.path,
                               total=self.rows_seen, by_column={c: k for c, k in self.missing.items() if k}):
            warn(w)
        out = {}
        for name, col in zip(self.wanted, self.cols, strict=True):
            if isinstance(col, NumericColumn):
                dtype = self.int_types.get(name, np.dtype(np.float64))
            else:
                dtype = code_dtype(len(col.leaves))
            out[name] = self.parts[name].array(dtype)  # one column at a time: its chunks freed
        n = self.rows_seen - self.dropped
        return EncodedTable(schema=self.schema, columns=out, n_rows=n, source=source)


def encode_dictionary(codes: Mapping[str, np.ndarray], values: Mapping[str, np.ndarray],
                      numbers: Mapping[str, np.ndarray], n_rows: int, schema: Schema, wanted: Sequence[str],
                      source: str) -> EncodedTable | None:
    """Encode ``wanted`` columns of a table held as codes of its distinct strings, or None when
    anything is unusual (the caller then takes the exact path, as after :func:`load_csv_fast`).

    ``codes[c]``: each row's index into ``values[c]``, the column's distinct strings (stripped);
    ``numbers[c]``: a numeric column's ``values`` parsed as float64 (a date column's as days or
    seconds, :func:`dpkit.schema.dates.parse_array`; NaN: not a number, not a date). Each
    distinct value is encoded once, by the rules of :class:`_Encoder` (a leaf's code by
    :func:`leaf_lut`, a missing token or an unlisted value read as missing drops its row, a
    number is clipped to the bounds and kept in the bounds' integer type when every kept value
    is whole), and the rows take their value's result by its code: no string, and no Arrow
    array, per row; what this adds to memory is the encoded columns.
    """
    if not wanted or any(c not in codes or c not in schema.columns for c in wanted):
        return None
    cols = [schema.columns[c] for c in wanted]
    if any(not isinstance(c, CategoricalColumn | NumericColumn) for c in cols):
        return None
    tokens = set(schema.missing_tokens)
    encoded: list[np.ndarray] = []  # per column: each distinct value's code or number (unclipped)
    missing = np.zeros(n_rows, dtype=bool)
    first_missing = False
    by_column: dict[str, int] = {}  # rows each column drops (the owner's share)
    for name, col in zip(wanted, cols, strict=True):
        if isinstance(col, CategoricalColumn):
            lut = leaf_lut(col, list(values[name]), tokens)
            if (lut == -1).any():
                return None  # a value that is not a leaf: the exact path names its line
            is_tok = lut == -2
        else:
            lut = np.asarray(numbers[name], dtype=np.float64)
            bad = ~np.isfinite(lut)
            is_tok = bad & np.isin(np.asarray(values[name], dtype=object), list(tokens)) if tokens else bad & False
            if col.unparsable == "missing":
                is_tok = bad  # a learned type: what is not a number (a date) is missing (encode.encode's rule)
            if (bad & ~is_tok).any():
                return None  # a value that is no number (no date): the exact path names its line
            if col.missing:  # the missing bucket (missing_policy: keep): NaN, the row kept
                lut = np.where(is_tok, np.nan, lut)
                is_tok = np.zeros_like(is_tok)
            else:
                lut = np.where(is_tok, col.lo, lut)
        if is_tok.any():
            first_missing = True
            rows_missing = is_tok[codes[name]]
            by_column[name] = int(np.count_nonzero(rows_missing))
            missing |= rows_missing
        encoded.append(lut)
    if first_missing and schema.missing_policy == "error":
        return None  # the exact path names the first missing value's line
    dropped = int(np.count_nonzero(missing))
    kept = None if dropped == 0 else ~missing  # a mask, not row numbers (8 bytes a row at 100M rows: 0.8 GB)
    del missing

    def column(item: tuple[str, Any, np.ndarray]) -> tuple[np.ndarray, int]:
        """A column's kept rows, encoded, and how many were clipped (numpy, on a worker thread)."""
        name, col, lut = item
        rows = codes[name] if kept is None else codes[name][kept]
        if isinstance(col, CategoricalColumn):
            return lut[rows], 0
        outside = (lut < col.lo) | (lut > col.hi)
        clipped = int(np.count_nonzero(outside[rows])) if outside.any() else 0  # after dropping, as the exact path
        lut = np.clip(lut, col.lo, col.hi)
        dtype = number_dtype(col.lo, col.hi)
        whole = np.trunc(lut) == lut
        if dtype is not None and (whole.all() or whole[rows].all()):
            lut = lut.astype(dtype)  # whole numbers (the exact path's encode.compact_numbers)
        return lut[rows], clipped

    out = {}
    clips = []
    for name, col, (values_, clipped) in zip(wanted, cols, in_order(column, zip(wanted, cols, encoded, strict=True)),
                                             strict=True):
        out[name] = values_
        if clipped:
            clips.append((col, clipped))
    for w in load_warnings(source, schema, wanted, dropped, clips, schema.path, total=n_rows,
                           by_column=by_column):
        warn(w)
    return EncodedTable(schema=schema, columns=out, n_rows=n_rows - dropped, source=source)


def _to_numpy(arr: Any) -> np.ndarray:
    """A numeric Arrow array as numpy: a view of its values buffer when it has no nulls
    (``Array.to_numpy`` imports pandas, even for a view: a noticeable share of a short run)."""
    dtype = _numpy_type(arr.type) if arr.null_count == 0 else None
    if dtype is None:
        return arr.to_numpy(zero_copy_only=False)
    if len(arr) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def _numpy_type(arrow_type: Any) -> np.dtype | None:
    """The numpy dtype of a fixed-width integer or float Arrow type, else None."""
    import pyarrow as pa

    for a, n in ((pa.int8(), np.int8), (pa.int16(), np.int16), (pa.int32(), np.int32), (pa.int64(), np.int64),
                 (pa.float32(), np.float32), (pa.float64(), np.float64)):
        if arrow_type == a:
            return np.dtype(n)
    return None


class _Growing:
    """A column's kept values, batch after batch, in chunks of :data:`CHUNK_BYTES`.

    Chunks that large are memory-mapped by the allocator, so the memory of a column's chunks
    goes back to the system as soon as the column is joined into one array; thousands of
    small per-batch arrays would stay in the heap and double the table's footprint
    (docs/decisions/0012-io-performance.md).
    """

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.fill = 0  # values in the last chunk

    def append(self, values: np.ndarray) -> None:
        if self.chunks and values.dtype != self.chunks[0].dtype:  # a fraction after whole numbers
            wide = np.result_type(self.chunks[0].dtype, values.dtype)
            kept = self.array(wide)
            self.chunks, self.fill = [], 0
            self.append(kept)
        pos = 0
        while pos < len(values):
            if not self.chunks or self.fill == len(self.chunks[-1]):
                self.chunks.append(np.empty(max(1, CHUNK_BYTES // values.dtype.itemsize), dtype=values.dtype))
                self.fill = 0
            last = self.chunks[-1]
            take = min(len(values) - pos, len(last) - self.fill)
            last[self.fill : self.fill + take] = values[pos : pos + take]
            self.fill += take
            pos += take

    def array(self, dtype: np.dtype) -> np.ndarray:
        """Every value as one array of ``dtype`` (the chunks are released)."""
        parts = [c if i < len(self.chunks) - 1 else c[: self.fill] for i, c in enumerate(self.chunks)]
        self.chunks, self.fill = [], 0
        if len(parts) == 1 and parts[0].dtype == dtype:
            # one chunk: its filled part, not a copy (the pages past it were never touched,
            # so they hold no memory)
            return parts[0]
        return np.concatenate(parts, dtype=dtype) if parts else np.zeros(0, dtype=dtype)


#: bytes per chunk of a loaded column (above glibc's largest mmap threshold, 32 MB)
CHUNK_BYTES = 64 << 20


def _lenient_numbers(arr: Any, tokens: Collection[str]) -> Any:
    """A string array as float64, null where a value is a missing token or not a number (a
    numeric column with ``unparsable: missing``), as the exact path reads it."""
    import pyarrow as pa

    from dpkit.data.encoded import is_number

    out = []
    for v in arr.to_pylist():
        s = None if v is None else str(v).strip()
        out.append(None if s is None or s in tokens else is_number(s))
    return pa.array(out, pa.float64())


def _first_non_number(arr: Any) -> int:
    """Index of the first value of a string array that is not a number (Arrow has no lenient cast)."""
    for i, v in enumerate(arr.to_pylist()):
        try:
            float(v)
        except (TypeError, ValueError):
            return i
    return 0
