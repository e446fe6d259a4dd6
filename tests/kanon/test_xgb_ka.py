"""XGBoost gain ranking: categorical columns are handled natively, not as integer codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkit.algorithms.kanon.xgb_ka import xgboost_gains


def _data(names: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 6, 600)
    # the class depends on a set of categories, {0, 2, 4}, that is not an interval of codes
    y = (np.isin(codes, [0, 2, 4]) ^ (rng.random(600) < 0.1)).astype(int)
    noise = rng.normal(size=600)
    return pd.DataFrame({"cat": pd.Categorical(np.array(names)[codes]), "num": noise}), y


def test_gain_does_not_depend_on_category_names() -> None:
    # relabelling the categories changes their sorted (integer-code) order but not the data
    a = xgboost_gains(*_data(["a", "b", "c", "d", "e", "f"]), 2, n_estimators=10)
    b = xgboost_gains(*_data(["f", "a", "e", "b", "d", "c"]), 2, n_estimators=10)
    assert a["cat"] == pytest.approx(b["cat"], rel=1e-6)
    assert a["cat"] > a["num"] > 0


def test_unused_feature_has_zero_gain_and_odd_names_work() -> None:
    X = pd.DataFrame({"x[1]<": pd.Categorical(["a", "b"] * 50), "const": np.zeros(100)})
    g = xgboost_gains(X, np.array([0, 1] * 50), 2, n_estimators=3)
    assert g["const"] == 0.0 and g["x[1]<"] > 0


def test_multiclass_target() -> None:
    X = pd.DataFrame({"c": pd.Categorical(list("abc") * 40), "n": np.arange(120.0) % 7})
    g = xgboost_gains(X, np.array([0, 1, 2] * 40), 3, n_estimators=5)
    assert g["c"] > g["n"]


def test_ctrl_c_inside_a_c_callback_ends_the_run_after_the_call(capfd) -> None:
    """XGBoost reads its data through Python callbacks called from C: a KeyboardInterrupt raised
    in one is printed as "Exception ignored … Traceback" and lost (XGBoost then failed with an
    internal error). Under signals_after_xgboost the C call ends normally and Ctrl-C comes after.
    libc's qsort with a Python comparison stands in for XGBoost's data iterator."""
    import ctypes
    import ctypes.util
    import signal

    from dpkit.algorithms.kanon.xgb_ka import signals_after_xgboost

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    compare_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    sent: list[int] = []

    def compare(a, b):  # noqa: ANN001, ANN202
        if not sent:
            sent.append(1)
            signal.raise_signal(signal.SIGINT)  # Ctrl-C while C code calls back into Python
        return a[0] - b[0]

    values = (ctypes.c_int * 5)(5, 1, 4, 2, 3)
    # Python's own handler, whatever the test was started under: a shell's `cmd &` or nohup starts
    # the process with SIGINT ignored, and then no Ctrl-C is ever delivered (the test failed so)
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), signals_after_xgboost():
            libc.qsort(values, 5, ctypes.sizeof(ctypes.c_int), compare_t(compare))
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the usual handler is back
    finally:
        signal.signal(signal.SIGINT, found)
    assert sent and list(values) == [1, 2, 3, 4, 5]  # the C call ran to its end
    assert "Exception ignored" not in capfd.readouterr().err
