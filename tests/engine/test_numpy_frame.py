"""The numpy engine's primitives agree with direct counting over the arrays."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.engine import as_frame, engine_name
from dpkit.engine.keys import Bins, Col, Grid, Lookup, Route, RowHash, evaluate
from dpkit.errors import DpkitUsageError
from dpkit.io.table import load_table
from dpkit.schema.parse import load_schema

ADULT = "sample_data/adult/train.csv"


@pytest.fixture(scope="module")
def frame():
    schema = load_schema("taxonomies/adult.yaml")
    return as_frame(load_table(ADULT, schema, ["age", "workclass", "sex", "income"]))


def test_counts_match_bincount(frame) -> None:
    cols = frame.table.columns
    n_w = len(frame.schema.columns["workclass"].leaves)
    got = frame.counts([Col("workclass"), Col("income")], [n_w, 2])
    want = np.zeros((n_w, 2), dtype=np.int64)
    np.add.at(want, (cols["workclass"], cols["income"]), 1)
    assert (got == want).all()
    assert got.sum() == frame.count()


def test_lookup_bins_and_cells(frame) -> None:
    cols = frame.table.columns
    n_w = len(frame.schema.columns["workclass"].leaves)
    lut = np.arange(n_w) % 2
    starts = np.array([17.0, 30.0, 50.0])
    cells, counts = frame.cells([Lookup("workclass", lut), Bins("age", starts)], [2, 3])
    a = lut[cols["workclass"]]
    b = np.clip(np.searchsorted(starts, cols["age"], side="right") - 1, 0, 2)
    for (i, j), c in zip(cells, counts, strict=True):
        assert c == int(((a == i) & (b == j)).sum())
    assert counts.sum() == frame.count()


def test_value_counts_and_sums(frame) -> None:
    cols = frame.table.columns
    vals, counts = frame.value_counts("age", [Col("income")], [2])
    assert (vals == np.unique(cols["age"])).all()
    assert counts.shape == (len(vals), 2) and counts.sum() == frame.count()
    sizes, sums = frame.sums(["age"], [Col("income")], [2])
    for c in (0, 1):
        assert sizes[c] == int((cols["income"] == c).sum())
        assert sums[c, 0] == pytest.approx(cols["age"][cols["income"] == c].sum())


def test_grid_and_rowhash_are_in_range(frame) -> None:
    g = evaluate(Grid("age", 15, 95, 3), frame.table.columns)
    assert g.min() >= 0 and g.max() <= 7
    h = evaluate(RowHash(key=12345, modulo=7), frame.table.columns)
    assert h.min() >= 0 and h.max() <= 6
    # position-keyed: a block evaluated from row 100 gives the same hashes as the whole
    block = {k: v[100:200] for k, v in frame.table.columns.items()}
    assert (evaluate(RowHash(12345, 7), block, start=100) == h[100:200]).all()
    counts = np.bincount(h, minlength=7)
    assert counts.min() > 0.8 * len(h) / 7


def test_route_and_with_column(frame) -> None:
    # one node (0) splitting on age > 40 into children 0, 1
    root = frame.with_column("node", Lookup("income", np.zeros(2, dtype=np.int64)))
    route = Route(Col("node"), ("age",), np.array([40.0]), np.array([0]), np.array([True]))
    nxt = root.with_column("node1", route)
    got = nxt.counts([Col("node1")], [2])
    ages = frame.table.columns["age"]
    assert got[1] == int((ages > 40).sum()) and got[0] == int((ages <= 40).sum())


def test_engine_name(monkeypatch) -> None:
    monkeypatch.delenv("DPKIT_ENGINE", raising=False)
    assert engine_name(None) == "numpy"
    monkeypatch.setenv("DPKIT_ENGINE", "spark")
    assert engine_name(None) == "spark"
    with pytest.raises(DpkitUsageError):
        engine_name("duckdb")


def test_blocks_are_counted_on_worker_threads_in_block_order(frame, monkeypatch) -> None:
    """Several blocks: each is counted on a pool thread and the results are merged in block
    order, so counts, cells and distinct values equal the one-block answers."""
    import threading

    from dpkit.data import counting
    from dpkit.engine import numpy_frame

    one = (frame.counts([Col("workclass"), Col("income")], [len(frame.schema.columns["workclass"].leaves), 2]),
           frame.cells([Col("sex"), Col("income")], [2, 2]), frame.value_counts("age", [Col("sex")], [2]))
    seen: list[str] = []
    dense = counting.dense_counts

    def spy(codes, shape):  # noqa: ANN001, ANN202
        seen.append(threading.current_thread().name)
        return dense(codes, shape)

    monkeypatch.setattr(counting, "dense_counts", spy)
    monkeypatch.setattr(numpy_frame, "BLOCK_ROWS", 997)
    many = (frame.counts([Col("workclass"), Col("income")], [len(frame.schema.columns["workclass"].leaves), 2]),
            frame.cells([Col("sex"), Col("income")], [2, 2]), frame.value_counts("age", [Col("sex")], [2]))
    assert len(seen) > 2 and all(name.startswith("dpkit-count") for name in seen)
    assert np.array_equal(many[0], one[0])
    assert all(np.array_equal(a, b) for a, b in zip(many[1], one[1], strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(many[2], one[2], strict=True))


def test_a_forked_child_counts_with_its_own_pool(frame, monkeypatch) -> None:
    """The pool's threads do not survive a fork (``evaluate --jobs``): the child makes its own
    instead of waiting forever on the parent's."""
    import multiprocessing
    import os

    from dpkit.engine import numpy_frame

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    monkeypatch.setattr(numpy_frame, "BLOCK_ROWS", 997)
    want = frame.counts([Col("sex"), Col("income")], [2, 2])  # the parent's pool now exists
    assert numpy_frame._POOL is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: count again, report, leave at once
        try:
            got = frame.counts([Col("sex"), Col("income")], [2, 2])
            os.write(write, b"ok" if np.array_equal(got, want) else b"differs")
        finally:
            os._exit(0)
    os.close(write)
    import select

    ready, _, _ = select.select([read], [], [], 30)
    if not ready:  # the child hangs on the parent's threads
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    assert ready and os.read(read, 16) == b"ok"
