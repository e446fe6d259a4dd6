"""The metadata's noise (dpkit.domain.metadata.noise_plan): discrete Laplace per column for one or
two columns, the joint discrete Gaussian for more (a lower stability threshold), the δ it spends
left out of the steps that follow, and the stability threshold of a *sum* of noisy cells (the
per-column missing flag) checked against the exact tail of the sum."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpkit.api.domain import learn_schema, read_strings
from dpkit.domain.metadata import GAUSSIAN_DELTA_SHARE, noise_plan
from dpkit.privacy import Accountant, exact, make_rng
from dpkit.privacy.concentrated import cdp_delta
from dpkit.privacy.mechanisms.partition import threshold


def test_one_column_keeps_the_pure_laplace_and_many_take_the_gaussian() -> None:
    one = noise_plan(1, 0.02, 1e-6)
    assert one.mechanism == "laplace" and one.delta == 0 and one.threshold == threshold(0.02, 1e-6)
    # Adult's 13 profiled columns at ε = 1 (metadata ε ≈ 0.031): 6,669 records under Laplace
    many = noise_plan(13, 0.0306, 1e-6)
    lap = threshold(0.0306 / 13, 1e-6 / 13)
    assert lap > 6000 and many.mechanism == "gaussian" and many.threshold < 0.45 * lap
    assert many.delta == pytest.approx(GAUSSIAN_DELTA_SHARE * 1e-6) and many.sigma2 is not None
    # its single-cell threshold is sound: P(Z ≥ τ − 1) ≤ δ/m for Z ~ N_Z(0, σ²) (exact pmf)
    assert _tail(_gauss_pmf(many.sigma2), 1, many.threshold - 1) <= 1e-6 / 13


def _dlap_pmf(a: float, width: int) -> np.ndarray:
    k = np.arange(-width, width + 1)
    q = math.exp(-a)
    return (1 - q) / (1 + q) * q ** np.abs(k)


def _gauss_pmf(sigma2: object) -> np.ndarray:
    s2 = float(sigma2)  # type: ignore[arg-type]
    k = np.arange(-int(40 * math.sqrt(s2)) - 5, int(40 * math.sqrt(s2)) + 6)
    p = np.exp(-(k.astype(float) ** 2) / (2 * s2))
    return p / p.sum()


def _tail(pmf: np.ndarray, k: int, x: int) -> float:
    """P(Z_1 + … + Z_k ≥ x), the Z_i i.i.d. with the centred ``pmf``."""
    out = pmf
    for _ in range(k - 1):
        out = np.convolve(out, pmf)
    zero = (len(out) - 1) // 2
    return float(out[zero + x:].sum())


@pytest.mark.parametrize("m, eps, delta", [(2, 0.5, 1e-4), (8, 1.0, 0.05), (13, 0.3, 1e-6)])
def test_the_threshold_of_a_sum_bounds_its_exact_tail_where_one_cell_s_does_not(m: int, eps: float,
                                                                                  delta: float) -> None:
    plan = noise_plan(m, eps, delta)
    if plan.mechanism == "laplace":
        s, t = exact.noise_fraction(plan.epsilon_j)
        pmf = _dlap_pmf(s / t, 60 * plan.threshold)
    else:
        pmf = _gauss_pmf(plan.sigma2)
    bound = delta / m
    for k in (2, 4):
        tau_k = plan.sum_threshold(k)
        assert _tail(pmf, k, tau_k - 1) <= bound  # sound: one record crosses it with probability ≤ δ/m
        assert _tail(pmf, k, plan.threshold - 1) > bound  # one cell's τ would not be (why a sum has its own)
        assert _tail(pmf, k, int(0.7 * (tau_k - 1))) > bound  # and not far above the exact one
    assert plan.sum_threshold(1) == plan.threshold


def test_the_gaussian_metadata_spends_one_step_and_leaves_its_delta_out_of_the_rest() -> None:
    g = np.random.default_rng(5)
    n = 4000
    cols = {f"n{j}": g.integers(0, 9, n).astype(str) for j in range(6)}
    cols |= {f"c{j}": np.where(g.random(n) < 0.5, "u", "v") for j in range(3)}
    cols |= {"f": np.round(g.normal(5, 2, n), 1).astype(str), "y": np.where(g.random(n) < 0.5, "p", "q")}
    strings, _ = read_strings(pd.DataFrame(cols))
    acc = Accountant(0.2, delta=1e-6)  # a no-schema run's domain share at ε = 1
    learned = learn_schema(strings, target="y", epsilon=0.2, delta=1e-6, rng=make_rng(2), accountant=acc)
    steps = {s.step: s for s in acc.spends}
    meta = steps["domain: types and missing tokens of 10 columns"]
    assert meta.delta == pytest.approx(1e-7) and learned.metadata.delta == pytest.approx(1e-7)
    assert meta.mechanism.startswith("discrete gaussian") and meta.sensitivity == pytest.approx(math.sqrt(10))
    assert acc.delta_spent == pytest.approx(1e-6) and acc.spent == pytest.approx(0.2)  # within the budget, all of it
    kinds = {m.name: m.kind for m in learned.metas}
    assert kinds == {**{f"n{j}": "numeric" for j in range(6)}, **{f"c{j}": "categorical" for j in range(3)},
                     "f": "numeric", "y": "categorical"}
    assert "discrete Gaussian" in learned.yaml(source="t", epsilon=0.2, delta=1e-6)


def test_a_few_columns_keep_the_laplace_whose_noise_is_smaller() -> None:
    """At m = 4 the Gaussian's threshold is lower (2,059 against 2,904) but its σ (409) larger
    than the Laplace's standard deviation (283): a small column's type, decided on the larger
    of two noisy sums, would flip more often; the Laplace is kept."""
    plan = noise_plan(4, 0.02, 1e-6)
    assert plan.mechanism == "laplace" and plan.threshold == 2904 and plan.delta == 0
    assert noise_plan(9, 0.02, 1e-6).mechanism == "gaussian"


def _gaussian_plans_pay_for_sqrt_m() -> None:
    """The σ² a Gaussian plan uses, with the L2 sensitivity √m of one record's m cells (one per
    column), is (ε, δ_G)-DP as booked (CKS Thm. 4, Cor. 13), for every m that takes the Gaussian."""
    import dpkit.domain.metadata as metadata

    for m, eps, delta in [(8, 2.0, 0.05), (13, 0.0306, 1e-6), (30, 0.5, 1e-6), (60, 1.0, 1e-8)]:
        plan = metadata.noise_plan(m, eps, delta)
        assert plan.mechanism == "gaussian", (m, eps, delta)
        assert cdp_delta(m / (2 * float(plan.sigma2)), eps) <= plan.delta, (m, eps, delta, plan)  # type: ignore[arg-type]


@pytest.mark.parametrize("broken", [False, True])
def test_the_gaussian_plan_pays_for_sensitivity_sqrt_m(monkeypatch, broken: bool) -> None:  # noqa: ANN001
    """Issue 43 (privacy review 4): σ² sized for L2 sensitivity 1 instead of √m spent ≈ 0.125 while
    booking 0.031 on Adult, and passed the δ audit (its thresholds follow σ). Caught here, and by
    tests/audit/test_review4_audits.py on the noisy counts themselves."""
    if broken:
        import os
        import sys

        import dpkit.domain.metadata as metadata

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "audit"))
        from dp_audit import rewritten

        monkeypatch.setattr(metadata, "noise_plan", rewritten(metadata, "noise_plan", [
            ("_ceil_step(columns / (2 * rho))", "_ceil_step(1 / (2 * rho))"),
            ("cdp_delta(columns / (2 * float(sigma2)), epsilon)", "cdp_delta(1 / (2 * float(sigma2)), epsilon)"),
        ]))
        with pytest.raises(AssertionError):
            _gaussian_plans_pay_for_sqrt_m()
    else:
        _gaussian_plans_pay_for_sqrt_m()
