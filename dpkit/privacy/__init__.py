"""The privacy core: budgets, the accountant, noise mechanisms and randomness.

Every other dpkit package draws noise only through this one.
"""

from dpkit.privacy.accountant import (
    Accountant,
    Budget,
    BudgetExceededError,
    ParallelScope,
    Spend,
    validate_epsilon,
)
from dpkit.privacy.mechanisms import (
    discrete_laplace,
    exponential,
    exponential_interval,
    grid_laplace,
    permute_and_flip,
    report_noisy_max,
    sparse_discrete_laplace,
)
from dpkit.privacy.rng import check_seed, derive_seed, is_key, make_rng

__all__ = [
    "Accountant",
    "Budget",
    "BudgetExceededError",
    "ParallelScope",
    "Spend",
    "validate_epsilon",
    "discrete_laplace",
    "exponential",
    "exponential_interval",
    "grid_laplace",
    "permute_and_flip",
    "report_noisy_max",
    "sparse_discrete_laplace",
    "check_seed",
    "derive_seed",
    "is_key",
    "make_rng",
]
