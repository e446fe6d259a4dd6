"""The noise mechanisms; the only place in dpkit that turns private values into noisy ones.

Every public function here takes keyword-only ``epsilon``, ``rng`` (from
:func:`dpkit.privacy.rng.make_rng`), ``accountant`` and ``step``; it validates its arguments,
checks the budget *before* drawing, and records the spend in the accountant at the point
of noise (as diffprivlib's models do: a failed call spends nothing). Samplers prefixed
``sample_`` draw raw noise with no accounting and are only for use inside this package and
its tests.

Selection mechanisms take a utility vector and return the chosen index. ``monotone=True``
states that adding a record can only raise every utility (e.g. counts and MAXGDDP's Max
score); report-noisy-max and the exponential mechanism may then use half the noise
(McSherry & Talwar 2007, Thm 6; Dwork & Roth Claim 3.9).

One family a module: ``laplace``, ``gaussian`` and ``selection`` on ``base``; domain
discovery's two, imported by their module path: ``partition`` (partition selection: a column's
released categories) and ``quantiles`` (DP bounds and split points on a public grid, the grids
themselves in :mod:`dpkit.domain.grid`).
"""

# what tests and the domain's modules import from here besides the public mechanisms
from dpkit.privacy.mechanisms.base import _INTERVAL_GRID as _INTERVAL_GRID
from dpkit.privacy.mechanisms.base import ArrayLike as ArrayLike
from dpkit.privacy.mechanisms.base import _utilities as _utilities
from dpkit.privacy.mechanisms.gaussian import (
    joint_discrete_gaussian,
)
from dpkit.privacy.mechanisms.laplace import (
    discrete_laplace,
    discrete_laplace_pmf,
    grid_laplace,
    positive_noise_probability,
    sample_discrete_laplace,
    sample_geometric,
    sample_sparse_positive_dlap,
    sparse_discrete_laplace,
)
from dpkit.privacy.mechanisms.selection import (
    exponential,
    exponential_interval,
    permute_and_flip,
    report_noisy_max,
)

__all__ = [
    "sample_geometric",
    "sample_discrete_laplace",
    "discrete_laplace_pmf",
    "discrete_laplace",
    "grid_laplace",
    "positive_noise_probability",
    "sample_sparse_positive_dlap",
    "sparse_discrete_laplace",
    "joint_discrete_gaussian",
    "report_noisy_max",
    "exponential",
    "exponential_interval",
    "permute_and_flip",
]
