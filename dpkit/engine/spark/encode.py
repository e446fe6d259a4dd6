"""Encoding a batch of raw rows on the executors, as the numpy engine encodes them.

:func:`encoding` builds the per-partition function shipped to the executors: each Arrow batch
takes the columnar path first (:func:`_fast_batch`), and a batch with anything unusual in it
is encoded again by the exact :func:`dpkit.data.encode.encode` (:func:`_exact_batch`), so
errors and warnings are the numpy engine's own; each encoded batch is packed
(:mod:`.packed`). :func:`_clip_warnings` adds the batches' clipping counts up on the driver.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from dpkit.engine.spark.packed import _blob_row, _pack
from dpkit.engine.spark.session import _MARK
from dpkit.errors import DataError
from dpkit.schema.parse import CategoricalColumn, Schema


def encoding(schema: Schema, wanted: list[str], source: str) -> tuple[list[str], dict[str, str], Any]:
    """The packed fields of ``wanted``, their Spark types and the executors' encoding function
    (:func:`_encoder`): what :func:`~dpkit.engine.spark.read.load_spark` and a string frame's ``encode`` share."""
    fields = [f"f{i}" for i in range(len(wanted))]
    cat = [isinstance(schema.columns[c], CategoricalColumn) for c in wanted]
    types = {f: (_code_type(len(schema.columns[c].leaves)) if is_cat else "double")
             for f, c, is_cat in zip(fields, wanted, cat, strict=True)}
    return fields, types, _encoder(schema, wanted, fields, cat, source)


def _code_type(n_leaves: int) -> str:
    """The Spark type of leaf codes: the numpy engine's code dtype (int8 for most columns)."""
    from dpkit.data.encoded import code_dtype

    return {1: "tinyint", 2: "smallint", 4: "int"}.get(code_dtype(n_leaves).itemsize, "bigint")


def _encoder(schema: Schema, wanted: list[str], fields: list[str], cat: list[bool], source: str):  # noqa: ANN202
    """The per-partition encoding function shipped to the executors.

    Each Arrow batch takes the columnar path first (:func:`_fast_batch`: the numpy engine's
    Arrow reader's dictionary → leaf-code table, numbers by Arrow's cast); a batch with
    anything unusual in it is encoded again by the exact :func:`dpkit.data.encode.encode`
    (:func:`_exact_batch`), so errors and warnings are the numpy engine's own.
    """
    from dpkit.console import owner_watching
    from dpkit.data.encoded import code_dtype, leaf_index

    # executors are not the user's terminal: their error messages take the driver's form
    watching = owner_watching()
    cols = [schema.columns[c] for c in wanted]
    tokens = list(schema.missing_tokens)
    indexes = {c: leaf_index(col) for c, col in zip(wanted, cols, strict=True) if isinstance(col, CategoricalColumn)}
    dtypes = [code_dtype(len(col.leaves)) if is_cat else np.dtype(np.float64)
              for col, is_cat in zip(cols, cat, strict=True)]

    def encode_stream(batches: Iterator[Any], pid: int, rows_before: Any = None) -> Iterator[Any]:
        """Partition ``pid``'s batches of raw columns (``wanted``'s order) → encoded batches."""
        from dpkit.console import set_verbose
        from dpkit.data.encoded import clip_message

        seen = 0  # rows of this partition read so far (kept or not)
        kept = 0
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            fast = _fast_batch(batch, schema, cols, tokens, indexes)
            if fast is not None:
                data, dropped, clipped = fast
                set_verbose(True)  # exact counts travel to the driver, which decides what stderr shows
                clips = [clip_message(source, col, k, schema.path) for col, k in zip(cols, clipped, strict=True) if k]
            else:
                data, dropped, clips = _exact_batch(batch, schema, wanted, source, watching, pid, seen,
                                                    rows_before)
            m = n - dropped
            blob = _pack({f: np.asarray(v, dtype=dt) for f, v, dt in zip(fields, data, dtypes, strict=True)})
            seen += n
            yield _blob_row(pid, kept, m, dropped, "\n".join(clips) or None, blob)
            kept += m

    return encode_stream




def _fast_batch(batch: Any, schema: Schema, cols: list[Any], tokens: list[str],
                indexes: dict[str, dict[str, int]]) -> tuple[list[np.ndarray], int, list[int]] | None:
    """One Arrow batch encoded column by column in C, or None when it needs the exact path.

    Categorical strings: Arrow dictionary-encodes the batch, and the few distinct values go
    through :func:`dpkit.data.encoded.leaf_lut` (the numpy engine's Arrow reader's table).
    Numbers: Arrow's string → float64 cast, which accepts a subset of what Python's
    ``float`` does and gives the same double. A value outside the taxonomy, one that does not
    cast, a non-finite number, a missing token under ``missing_policy: error``, whitespace
    other than ASCII around a number, a null in a non-string column, a categorical column
    that is not strings: None. Returns (columns, rows dropped, values clipped per column).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from dpkit.data.encoded import leaf_lut

    n = batch.num_rows
    missing = np.zeros(n, dtype=bool)
    out: list[np.ndarray] = []
    for i, col in enumerate(cols):
        arr = batch.column(i)
        if getattr(col, "time", None) is not None:
            return None  # a date column: the exact path parses it (dpkit.schema.dates, one parse function)
        is_str = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
        if isinstance(col, CategoricalColumn):
            if not is_str:
                return None
            if arr.null_count:  # Spark's CSV reader gives null for an empty field: the exact path's ''
                arr = pc.fill_null(arr, "")
            enc = arr.dictionary_encode()
            lut = leaf_lut(col, enc.dictionary.to_pylist(), tokens, indexes[col.name])
            codes = lut[enc.indices.to_numpy(zero_copy_only=False)]
            if lut.min(initial=0) < 0:
                if (codes == -1).any():
                    return None
                missing |= codes == -2
            out.append(codes)
            continue
        kept = np.zeros(n, dtype=bool)
        if is_str:
            if arr.null_count:
                arr = pc.fill_null(arr, "")
            arr = pc.ascii_trim_whitespace(arr)
            # a token is missing only where it is not a number (the exact path converts first)
            toks = [t for t in tokens if not _finite(t)]
            tok = (pc.is_in(arr, value_set=pa.array(toks, pa.string())).to_numpy(zero_copy_only=False)
                   if toks else np.zeros(n, dtype=bool))
            if tok.any():
                arr = pc.if_else(pa.array(tok), pa.scalar(None, arr.type), arr)
                if col.missing:  # the missing bucket (missing_policy: keep): NaN, the row kept
                    kept = tok
                else:
                    missing |= tok
        elif arr.null_count or not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
            return None
        try:
            nums = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowException, ValueError):
            return None
        bad = ~(np.isfinite(nums) | kept)
        if bad.any():
            if not (~bad | missing).all() or schema.missing_policy == "error":
                return None
            nums = np.where(bad, col.lo, nums)
        out.append(nums)
    dropped = 0
    if missing.any():
        if schema.missing_policy == "error":
            return None
        keep = ~missing
        out = [o[keep] for o in out]
        dropped = int(np.count_nonzero(missing))
    clipped = []
    for j, col in enumerate(cols):
        k = 0
        if not isinstance(col, CategoricalColumn):
            e = out[j]
            out_of = (e < col.lo) | (e > col.hi)
            k = int(np.count_nonzero(out_of))
            if k:  # counted after dropping, as the exact path does
                out[j] = np.clip(e, col.lo, col.hi)
        clipped.append(k)
    return out, dropped, clipped


def _finite(text: str) -> bool:
    try:
        return bool(np.isfinite(float(text)))
    except ValueError:
        return False


def _exact_batch(batch: Any, schema: Schema, wanted: list[str], source: str, watching: bool, pid: int,
                 seen: int, rows_before: Any = None) -> tuple[list[np.ndarray], int, list[str]]:
    """One Arrow batch through the numpy engine's exact :func:`dpkit.data.encode.encode`:
    its error (line numbered in the partition) or (columns, rows dropped, clip warnings)."""
    import pandas as pd
    import pyarrow as pa

    from dpkit.console import set_verbose
    from dpkit.data.encode import encode

    data = {}
    for i, c in enumerate(wanted):
        col = batch.column(i)
        values = col.to_pandas()
        if (isinstance(schema.columns[c], CategoricalColumn) or pa.types.is_string(col.type)
                or pa.types.is_large_string(col.type)):
            values = values.astype(object).where(values.notna(), "")
            values = values.map(lambda v: v if isinstance(v, str) else str(v)).str.strip()
        data[c] = values.to_numpy(dtype=object)
    df = pd.DataFrame(data, columns=wanted)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # exact counts travel to the driver, which alone decides what stderr shows
            set_verbose(True)
            try:
                table = encode(df, schema, wanted, source=source)
            except DataError:
                set_verbose(watching)  # the error message in the form the driver shows
                table = encode(df, schema, wanted, source=source)
    except DataError as exc:
        # encode numbers lines from the batch's first row: make them the partition's
        msg = re.sub(re.escape(source) + r":(\d+):",
                     lambda m: _line(source, pid, seen, int(m.group(1)), rows_before), str(exc), count=1)
        raise RuntimeError(_MARK[0] + msg + _MARK[1]) from None
    # one line per clipped column (a warning naming several carries them in .details), added up
    # over the partitions by the driver (_clip_warnings)
    clips = [line for w in caught for line in getattr(w.message, "details", [str(w.message)]) if "clipped" in line]
    return [table.columns[c] for c in wanted], batch.num_rows - table.n_rows, clips


def _line(source: str, pid: int, seen: int, line: int, rows_before: Any = None) -> str:
    if rows_before is not None:  # a byte range of a local file: the rows before it are countable
        return f"{source}:{rows_before() + seen + line}:"
    if pid == 0:
        return f"{source}:{seen + line}:"
    return f"{source} (Spark partition {pid}, record {seen + line - 1} of it):"


_CLIP = re.compile(r"clipped (\d+) value\(s\) of ('.*?') to the public bounds (.*)$")


def _clip_warnings(messages: list[str], source: str) -> list[str]:
    """The numpy engine's clipping warnings, with the counts added up over the batches."""
    total: dict[tuple[str, str], int] = {}
    for text in messages:
        for line in text.splitlines():
            m = _CLIP.search(line)
            if m:
                key = (m.group(2), m.group(3))
                total[key] = total.get(key, 0) + int(m.group(1))
    from dpkit.console import private

    if len(total) <= 1:
        return [private(f"{source}: clipped {n} value(s) of {col} to the public bounds {rest}",
                        f"{source}: clipped values of {col} to the public bounds {rest}")
                for (col, rest), n in total.items()]
    # several columns: one line naming them all, as dpkit.data.encoded.clips_warning writes it
    cols = ", ".join(col for col, _ in total)
    bounds = ", ".join(rest.rsplit(" of ", 1)[0] for _, rest in total)
    where = next(iter(total))[1].rsplit(" of ", 1)[-1]
    counts = ", ".join(str(n) for n in total.values())
    return [private(f"{source}: clipped {counts} value(s) of columns {cols} to their public bounds {bounds} of {where}",
                    f"{source}: clipped values of columns {cols} to their public bounds {bounds} of {where}")]
