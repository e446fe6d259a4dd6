"""A learned schema's header states what the accountant booked, not the plan (issue 43, privacy
review 4): a date column whose year-grid bounds span more than the refinement's window skips the
month refinement, and its share of ε is not spent — the header said it was."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

import dpkit


def _table() -> pd.DataFrame:
    g = np.random.default_rng(0)
    first = dt.date(2000, 1, 1).toordinal()
    n = 3000
    days = [dt.date.fromordinal(first + int(x)).isoformat() for x in g.integers(0, 20 * 365, n)]
    return pd.DataFrame({"d": days, "y": np.where(g.random(n) < 0.5, "a", "b")})


def _header_spend(text: str) -> tuple[float, float]:
    m = re.search(r"Spent: epsilon=([\d.e+-]+), delta=([\d.e+-]+)", text)
    assert m, text[:400]
    return float(m.group(1)), float(m.group(2))


def test_the_header_states_what_was_spent() -> None:
    learned = dpkit.infer_schema(_table(), target="y", epsilon=1.0, delta=1e-6, date=["d"], missing=[],
                                 random_state="0x5e1ea5ed70ca11e2b0de0c3a7e5a1f00")
    privacy = learned.report["privacy"]
    steps = [s["step"] for s in learned.report["spends"]] if "spends" in learned.report else []
    eps, delta = _header_spend(learned.yaml)
    assert privacy["epsilon_spent"] < 1.0 - 1e-9, (privacy, steps)  # the refinement did not run
    assert eps == float(f"{privacy['epsilon_spent']:.6g}")
    assert delta == float(f"{privacy['delta_spent']:.6g}")
