"""An audit of the whole no-schema publish path (issue 22): ``dpkit.publish`` on a DataFrame with
no schema — the run key (HKDF from a random 128-bit seed), the domain learned in the run (partition
selection of every column), then MaxGDDP with every default — on neighbouring tables one record
apart. Each audit runs honest (must pass) and broken once on purpose (must be caught):

* ε part: the released total, one record ("u", "p") added. Both values of each column are far
  above the partition-selection threshold, so the event cannot hide in δ. Broken: publish's
  noisy record count Ñ replaced by the exact N (its ε still booked), as in test_review_audits.
* δ part: a record whose ``a`` is a value no other record holds ("w"). It must be released with
  probability ≤ δ (it never is from the table without it). Broken: the domain read from the
  data as ``taxonomy infer`` drafts it (no noise, no threshold) — the mistake a person makes
  by deleting a draft's ``draft:`` line.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_audit import check, search_audit  # noqa: E402
from test_domain_audit import delta_violation  # noqa: E402

pytestmark = pytest.mark.statistical

# the target weighs 4 in the domain's split (DomainOptions.target_weight): ε_a = 0.1, ε_label =
# 0.4, δ_j = 5e-4 each, thresholds 71 and 19 — each value is held by 160 records (far above)
EPS, DELTA, SHARE = 1.0, 1e-3, 0.5
ROWS = [("u", "p")] * 120 + [("v", "q")] * 120 + [("u", "q")] * 40 + [("v", "p")] * 40


def _publish(df: pd.DataFrame, rng: np.random.Generator):  # noqa: ANN202
    import dpkit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpkit.publish(df, target="label", epsilon=EPS, delta=DELTA, domain_share=SHARE,
                             random_state="0x" + rng.bytes(16).hex())


def _total(df: pd.DataFrame, rng: np.random.Generator) -> float:
    release = _publish(df, rng)
    assert release.report["privacy"]["epsilon_spent"] <= EPS * (1 + 1e-9)
    return float(len(release.table))


@pytest.mark.parametrize("broken", [False, True])
def test_released_total_is_epsilon_dp(broken: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if broken:
        import dpkit.algorithms.publish.maxgddp as mg

        real = mg.discrete_laplace
        monkeypatch.setattr(mg, "discrete_laplace",
                            lambda v, **kw: np.asarray(v) if kw.get("step") == "noisy N" else real(v, **kw))
    d = pd.DataFrame(ROWS, columns=["a", "label"])
    d_prime = pd.DataFrame([*ROWS, ("u", "p")], columns=["a", "label"])
    check(search_audit(_total, d, d_prime, epsilon=EPS, n=600), broken)


def _lists_w(release) -> bool:  # noqa: ANN001
    """The learned schema (released beside the table: the report names it) lists 'w'."""
    return "w" in getattr(release.schema.columns["a"], "leaves", ())  # an ignored column lists nothing


@pytest.mark.parametrize("broken", [False, True])
def test_a_value_only_one_record_holds_is_released_at_most_with_delta(broken: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if broken:
        import importlib

        discover = importlib.import_module("dpkit.domain.discover")  # the module calls first_round
        real = discover.first_round

        def draft(counts, **kw):  # noqa: ANN001, ANN202 - every value seen, as a data-derived draft
            import dataclasses

            sel, noisy = real(counts, **kw)
            return dataclasses.replace(sel, selected=np.arange(len(counts)), noisy=noisy), noisy

        monkeypatch.setattr(discover, "first_round", draft)
    d_prime = pd.DataFrame([*ROWS, ("w", "p")], columns=["a", "label"])
    d = pd.DataFrame(ROWS, columns=["a", "label"])
    rng = np.random.default_rng(2026)
    assert not any(_lists_w(_publish(d, rng)) for _ in range(20))  # absent: never released
    n = 300
    hits = sum(_lists_w(_publish(d_prime, rng)) for _ in range(n))
    violation, lo = delta_violation(hits, n, EPS, DELTA)
    print(f"'w' released {hits}/{n}; lower bound {lo:.4f} vs delta {DELTA:g}")
    assert violation == broken, (hits, lo)
