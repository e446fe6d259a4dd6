"""Seeded runs (issue 14, item 2): a plain integer seed is labelled not private; a ≥128-bit
hex key keeps the ε-DP label; both are reproducible."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, check_seed, is_key, make_rng
from dpkit.report import SEEDED_GUARANTEE, build_report

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_publish import files, publish  # noqa: E402, F401  (fixture and helper reused)

KEY = "0xa750c4c407aca0b9476d5e16cd50923c"  # 128 bits


def test_check_seed_forms() -> None:
    assert check_seed("3") == 3 and check_seed(3) == 3
    assert check_seed(KEY.upper().replace("0X", "0x")) == KEY and is_key(KEY)
    assert is_key("0x" + "a" * 64) and not is_key("0x" + "a" * 31) and not is_key(3)
    for bad in ("0xabc", "0x" + "a" * 65, "0xzz" + "a" * 30, "-1", "1.5", True):
        with pytest.raises(DpkitUsageError, match="32 to 64 hex digits"):
            check_seed(bad)


def test_key_seeds_chacha_and_is_reproducible() -> None:
    a = make_rng(KEY).integers(0, 2**62, 8)
    assert np.array_equal(a, make_rng(KEY).integers(0, 2**62, 8))
    assert type(make_rng(KEY).bit_generator).__name__ == "ChaCha"
    assert type(make_rng(3).bit_generator).__name__ == "PCG64"
    assert not np.array_equal(a, make_rng("0x" + "3f" * 15 + "40").integers(0, 2**62, 8))


@pytest.mark.parametrize(("seeded", "key", "model"), [(False, False, "epsilon-dp"), (True, True, "epsilon-dp"),
                                                      (True, False, "none")])
def test_report_labels(seeded: bool, key: bool, model: str) -> None:
    acc = Accountant(1.0)
    acc.spend("s", "m", 0.5)
    p = build_report(command="c", algorithm="a", accountant=acc, seeded=seeded, seed_is_key=key,
                     parameters={})["privacy"]
    assert p["model"] == model and p["seeded"] is seeded
    if seeded and not key:
        assert p["guarantee"] == SEEDED_GUARANTEE
    elif seeded:
        assert "secret" in p["guarantee"] and "epsilon=0.5" in p["guarantee"]


def test_cli_small_seed_is_not_private(files):  # noqa: F811
    code, _, err = publish(files, "--epsilon", "1", "--levels", "2", "--seed", "3")
    assert code == 0, err
    p = json.loads(Path(files["report"]).read_text())["privacy"]
    assert p["model"] == "none" and p["guarantee"] == "none (seeded: reproducible, not private)"


def test_cli_key_seed_keeps_epsilon_dp_and_reproduces(files, tmp_path):  # noqa: F811
    code, _, err = publish(files, "--epsilon", "1", "--levels", "2", "--seed", KEY)
    assert code == 0, err
    p = json.loads(Path(files["report"]).read_text())["privacy"]
    assert p["model"] == "epsilon-dp" and p["seeded"] is True
    first = Path(files["out"]).read_text()
    files2 = {**files, "out": str(tmp_path / "rel2.csv")}
    assert publish(files2, "--epsilon", "1", "--levels", "2", "--seed", KEY)[0] == 0
    assert Path(files2["out"]).read_text() == first
