"""The cached encoded table's format: packed Arrow batches (docs/spark.md).

The Spark engine caches the encoded table as one row per encoded batch (:data:`_BLOBS`): its
partition, its first row's index in the partition, its rows, the rows it dropped, its clipping
warnings, and the batch itself as Arrow IPC bytes (LZ4). Spark stores and ships opaque bytes,
never a row; the executors pack (:func:`_pack`) and unpack (:func:`_unpack`, :func:`_packed`,
:func:`_blobs`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

_PID, _IDX, _START, _ROWS, _DROP, _CLIPS, _DATA = (
    "__pid", "__idx", "__start", "__rows", "__dropped", "__clip", "__data")
#: the cached encoded table: one row per encoded batch — its partition, its first row's
#: index in the partition, its rows, the rows it dropped, its clipping warnings, and the
#: batch itself (Arrow IPC, LZ4): Spark stores and ships opaque bytes, never a row
_NP = {"tinyint": np.int8, "smallint": np.int16, "int": np.int32, "bigint": np.int64, "long": np.int64,
       "double": np.float64}
_BLOBS = (f"{_PID} int, {_START} long, {_ROWS} long, {_DROP} long, {_CLIPS} string, {_DATA} binary")


def _blob_row(pid: int, start: int, rows: int, dropped: int, clip: str | None, data: bytes) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [pa.array([pid], pa.int32()), pa.array([start], pa.int64()), pa.array([rows], pa.int64()),
         pa.array([dropped], pa.int64()), pa.array([clip], pa.string()), pa.array([data], pa.binary())],
        names=[_PID, _START, _ROWS, _DROP, _CLIPS, _DATA])


def _pack(cols: dict[str, np.ndarray]) -> bytes:
    """An encoded batch as Arrow IPC bytes (LZ4). A float column of whole numbers travels as
    the smallest int type (exact; listed in the metadata, made float64 again on unpacking)."""
    import pyarrow as pa

    arrays, floats = [], []
    for f, v in cols.items():
        if v.dtype == np.float64:
            small = _whole(v)
            if small is not None:
                v = small
                floats.append(f)
        arrays.append(pa.array(v))
    batch = pa.RecordBatch.from_arrays(arrays, names=list(cols))
    batch = batch.replace_schema_metadata({"dpkit_float": ",".join(floats)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _whole(v: np.ndarray) -> np.ndarray | None:
    """``v`` as int8/16/32 when every value is a whole number in range (and none is -0.0)."""
    if not len(v):
        return None
    lo, hi = float(v.min()), float(v.max())
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo < -(2.0 ** 31) or hi >= 2.0 ** 31:
        return None
    if not np.array_equal(v, np.trunc(v)) or (np.signbit(v) & (v == 0)).any():
        return None
    for dt in (np.int8, np.int16, np.int32):
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return v.astype(dt)
    return None


def _unpack(data: bytes, names: Sequence[str] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """(field → values, rows) of a packed batch; only ``names`` when given."""
    import pyarrow as pa

    batch = pa.ipc.open_stream(data).read_next_batch()
    meta = batch.schema.metadata or {}
    floats = set(meta.get(b"dpkit_float", b"").decode().split(","))
    want = batch.schema.names if names is None else names
    out = {}
    for f in want:
        v = batch.column(batch.schema.get_field_index(f)).to_numpy(zero_copy_only=False)
        out[f] = v.astype(np.float64) if f in floats else v
    return out, batch.num_rows


def _packed(batches: Iterator[Any], names: Sequence[str] | None = None
            ) -> Iterator[tuple[int, int, dict[str, np.ndarray], int]]:
    """(partition, first row's index in the partition, fields, rows) of each non-empty packed
    batch of a job over ``select(_PID, _START, _DATA)`` of the cached table; only ``names``
    unpacked when given."""
    for batch in batches:
        pids = batch.column(0).to_pylist()
        starts = batch.column(1).to_pylist()
        datas = batch.column(2)
        for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
            cols, n = _unpack(datas[i].as_py(), names)
            if n:
                yield pid, start, cols, n


def _blobs(batches: Iterator[Any], names: Sequence[str] | None, offsets: np.ndarray | None
           ) -> Iterator[tuple[dict[str, np.ndarray], int, int]]:
    """(fields, first row's 0-based position, rows) of each non-empty packed batch of a job
    over ``select(_PID, _START, _DATA)`` of the cached table."""
    for pid, start, cols, n in _packed(batches, names):
        yield cols, (int(offsets[pid]) + int(start)) if offsets is not None else int(start), n
