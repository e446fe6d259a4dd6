"""The Spark engine's executor-side pieces, without Spark (docs/spark.md, "What runs where").

The columnar batch encoder must agree with the exact ``dpkit.data.encode.encode`` whenever it
does not hand the batch over; packed batches must unpack to the same bits; a batch's cells
counted by flat index must equal the sorted rows; the rows before a byte range are counted
as the readers count lines.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from dpkit.data.encode import encode  # noqa: E402
from dpkit.engine.spark import encode as spark_encode  # noqa: E402
from dpkit.engine.spark import frame as spark_frame  # noqa: E402
from dpkit.engine.spark import packed as spark_packed  # noqa: E402
from dpkit.engine.spark import read as spark_read  # noqa: E402
from dpkit.schema.parse import CategoricalColumn, load_schema  # noqa: E402

SCHEMA = "taxonomies/adult.yaml"
COLS = ["age", "workclass", "hours-per-week", "income"]


def _fast(schema, values: dict[str, list]):
    from dpkit.data.encoded import leaf_index

    cols = [schema.columns[c] for c in COLS]
    batch = pa.RecordBatch.from_arrays([pa.array(values[c], pa.string()) for c in COLS], names=COLS)
    indexes = {c.name: leaf_index(c) for c in cols if isinstance(c, CategoricalColumn)}
    return spark_encode._fast_batch(batch, schema, cols, list(schema.missing_tokens), indexes)


def _exact(schema, values: dict[str, list]):
    import pandas as pd

    df = pd.DataFrame({c: [("" if v is None else v).strip() for v in values[c]] for c in COLS})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = encode(df, schema, COLS, source="x")
    return table, caught


@pytest.mark.parametrize("seed", range(30))
def test_fast_batch_agrees_with_encode(seed):
    schema = load_schema(SCHEMA)
    rng = np.random.default_rng(seed)
    n = 40
    pool = {
        "age": ["39", " 50", "17 ", "120", "3", "-0", "1e1", "?", "x", "", "nan", "1_0", "40.5"],
        "workclass": ["Private", " State-gov", "?", "Martian", "", "Never-worked"],
        "hours-per-week": ["40", "99", "0", "?", "45.25"],
        "income": ["<=50K", ">50K", " >50K"],
    }
    rare = {"x", "Martian", "", "nan", "1_0"}
    values = {}
    for c, opts in pool.items():
        common = [o for o in opts if o not in rare]
        col = [str(rng.choice(common)) for _ in range(n)]
        if rng.random() < 0.1:  # sometimes a value the fast path must hand over
            col[int(rng.integers(n))] = str(rng.choice(opts))
        if rng.random() < 0.05:
            col[int(rng.integers(n))] = None  # Spark's CSV reader: an empty field
        values[c] = col
    fast = _fast(schema, values)
    try:
        table, caught = _exact(schema, values)
    except Exception:  # noqa: BLE001 — the exact path's error: the fast path must not pass it
        assert fast is None
        return
    if fast is None:
        return  # handed over: the exact path decides (agreement is then trivial)
    data, dropped, clipped = fast
    assert dropped == n - table.n_rows
    for c, got in zip(COLS, data, strict=True):
        want = table.columns[c]
        if want.dtype.kind == "f" or (got.dtype.kind == "f") != (want.dtype.kind == "f"):
            # a number: the exact path keeps whole numbers in a small int type (the numpy
            # engine's compact codes), the Spark batch float64; the values must be equal
            assert np.array_equal(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)), c
            continue
        assert got.dtype == want.dtype, c
        assert np.array_equal(got.view(np.uint8), np.asarray(want).view(np.uint8)), c  # same bits
    # one warning names every clipped column; its .details hold one line per column
    clips = [line for w in caught for line in getattr(w.message, "details", [str(w.message)]) if "clipped" in line]
    assert sum(1 for k in clipped if k) == len(clips)
    assert len([w for w in caught if "clipped" in str(w.message)]) == (1 if clips else 0)


def test_pack_round_trip_keeps_bits():
    cols = {
        "a": np.array([1.0, 2.0, 300.0, -5.0]),  # whole: travels as int16
        "b": np.array([0.5, 1.0, 2.0, 3.0]),  # not whole
        "c": np.array([-0.0, 1.0, 2.0, 3.0]),  # a negative zero stays a double
        "d": np.array([1, 2, 3, 4], dtype=np.int8),
        "e": np.array([3e9, 1.0, 2.0, 3.0]),  # out of int32
    }
    packed = spark_packed._pack(cols)
    got, n = spark_packed._unpack(packed)
    assert n == 4
    for k, v in cols.items():
        assert got[k].dtype == v.dtype
        assert got[k].tobytes() == v.tobytes(), k
    sub, _ = spark_packed._unpack(packed, ["b"])
    assert list(sub) == ["b"]


def test_batch_cells_by_flat_index_equals_sorted_rows():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(0, 200))
        shape = [int(rng.integers(1, 6)) for _ in range(int(rng.integers(0, 4)))]
        codes = [rng.integers(-1, s, n).astype(np.int8) for s in shape]
        values = rng.choice([0.0, -0.0, 1.5, 3.0], n) if rng.random() < 0.5 else None
        a = spark_frame._batch_cells(codes, values, shape, n)
        b = spark_frame._batch_cells(codes, values, None, n)
        assert (a is None) == (b is None)
        if a is not None:
            assert dict(zip(map(tuple, a[0].tolist()), a[1].tolist(), strict=True)) == \
                dict(zip(map(tuple, b[0].tolist()), b[1].tolist(), strict=True))


def test_rows_before_skips_blank_lines(tmp_path):
    data = b"h\na\r\nb\n\nc\r\n\r\nd\n\n\ne\n"
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    for end in range(2, len(data) + 1):
        text = data[2:end]
        lines = text.split(b"\n")[:-1]  # complete lines
        assert spark_read._rows_before(str(path), 2, end) == sum(1 for ln in lines if ln not in (b"", b"\r")), end


def test_splits_cover_the_data():
    for size in (10, 1000, 5 * spark_read.SPLIT_BYTES + 7):
        splits = spark_read._splits(3, size, 2)
        assert splits[0][0] == 3 and splits[-1][1] == size and len(splits) >= 4
        assert all(a == b for (_, a), (b, _) in zip(splits[:-1], splits[1:], strict=True))
