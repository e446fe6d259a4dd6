"""Private domain discovery (docs/domain.md): learn a schema's domains under (ε, δ)-DP.

:mod:`~dpkit.domain.metadata` (the public metadata: names, types, missing tokens),
:mod:`~dpkit.domain.profile` (exact per-column counts through the Frame protocol),
:mod:`~dpkit.domain.discover` (the algorithm: partition selection and DP quantiles, I/O-free),
:mod:`~dpkit.domain.render` (the YAML with its provenance header). The public entry point is
:func:`dpkit.api.domain.infer_schema`; the mechanisms live in :mod:`dpkit.privacy.mechanisms.partition`
and :mod:`dpkit.privacy.mechanisms.quantiles`. docs/domain.md describes it all.
"""

from dpkit.domain.discover import Discovery, DomainOptions, column_budgets, discover

__all__ = ["Discovery", "DomainOptions", "column_budgets", "discover"]
