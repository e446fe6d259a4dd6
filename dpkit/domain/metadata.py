"""A table's metadata — column types, whole-number flags, missing tokens — declared or learned under DP.

Every part of a schema that a run without a schema uses or releases is either **declared** by
the user (public: ``numeric=``, ``categorical=``, ``integer=``, ``date=``, ``ignore=``,
``missing=``, ``values=``, ``bounds=``; the column names and the target are public too) or
**learned** here by an accounted DP step (docs/domain-reference.md, "Tables as they come"). Nothing is
read from the exact data.

**The mechanism.** Every value of a column falls in exactly one *shape* cell of a public list:
each public missing token (:data:`MISSING_CANDIDATES`, or the declared tokens), a whole number,
a number with a fraction, an ISO date, any other text. A record adds one to one cell per
column, so a column's shape histogram has L1 sensitivity 1 under add/remove-one, and the cells
are public (they exist whatever the data): no cell's existence depends on the data, unlike
partition selection. The noise is public too (:func:`noise_plan`, from m, ε and δ only):

* with one or two profiled columns, discrete Laplace DLap(ε_j) on every cell: ε_j-DP per column
  (the geometric mechanism, Ghosh, Roughgarden & Sundararajan 2009) with no δ; over the m
  columns the histograms together have L1 sensitivity m, and ε_j = ε/m each is basic
  composition (Dwork & Roth Thm 3.16);
* with more, the discrete Gaussian N_Z(0, σ²) on every cell of every column at once: the m
  histograms together have L2 sensitivity √m, so ρ = m/(2σ²)-zCDP (Canonne, Kamath & Steinke
  2020, Thm. 4), (ε, δ_G)-DP with δ_G = :data:`GAUSSIAN_DELTA_SHARE`·δ (their Cor. 13). It is
  chosen when its stability threshold is the lower and its noise per cell no larger (from
  m ≈ 9 columns): τ grows as m·ln(m/δ)/ε under the Laplace and only about as
  √(m·ln(1/δ_G)·ln(m/δ))/ε under the Gaussian (docs/domain-reference.md, "Why τ was so large").

Every decision below is a function of the noisy counts only: post-processing.

**The decisions** (:func:`decide`), each against τ_j, the smallest count with
P(Z ≥ τ_j − 1) ≤ δ/m for one cell's noise Z (:func:`dpkit.privacy.mechanisms.partition.threshold` or
:func:`~dpkit.privacy.mechanisms.partition.gaussian_threshold`): a cell the exact data leaves at 0
crosses τ_j because of one record with probability ≤ δ/m, and over the m columns one record
touches, ≤ δ. So a kind is *established* when its cell's noisy count reaches τ_j, and

* a token is a missing token iff its noisy count reaches τ_j (in any column: the schema's list
  is global);
* the column's type is the established kind (number, date, text) with the largest noisy count
  (numbers: whole + fractional); a number column is *integer* unless fractions are established
  (a one-record fraction in an integer column flips it with probability ≤ δ/m);
* when no kind is established (a small column: fewer than ~τ_j values) the larger noisy count
  of numbers and text decides, dates counting as text (a date must be established: a small date
  column is categorical, never numeric, which would read every date as missing). That is still
  ε-DP, but near a tie one record can tip it: declare the types of a small table.
* with the missing tokens learned (not declared), a column *holds missing values*
  (:func:`holds_missing`: the learned schema's per-column
  ``missing: true``, which under ``missing_policy: keep`` gives it a ``(missing)`` leaf or a
  missing bucket) iff a token was learned in it, or the sum of its k noisy cells that the
  decided type cannot parse (a number column: dates and text; a date column: numbers and text)
  reaches the stability threshold of a sum of k cells (:meth:`NoisePlan.sum_threshold`: a sum
  is noisier than one cell); else ``missing: false``, and its few missing values are read
  as an unlisted value (the ``(other)`` leaf; a number's lowest interval). Post-processing of
  the counts already drawn: no new spend. The tokens not learned in the column are left out:
  a sum of many noisy cells needs a threshold too high to flag anything. With the
  tokens declared there is no flag: every column keeps its ``(missing)`` cell, as a
  hand-written schema does (the user said what missing is; a column holding a third of its
  values missing can sit below τ_j on a small table).

The metadata's ε comes out of the predictors' shares of the domain: the target keeps the share
it has when every type is declared (:func:`dpkit.api.domain.learn_schema`), so that a small
table's rarest class clears its threshold as before.

The stability threshold is why one stray ``37.5``, ``n/a`` or ``?`` does not change the released
schema except with probability ≤ δ/m per column (tests/audit/test_metadata_audit.py); the privacy
of the step does not rest on it (pure ε, or (ε, δ_G) under the Gaussian). A threshold below the
stability size would keep the privacy but not that audit: for a cell the exact data leaves at 0,
"one record flips it with probability ≤ δ/m" is P(Z ≥ τ − 1) ≤ δ/m, the definition of τ. Values that do not fit the decided type are read as missing
by the schema the run uses (``unparsable: missing`` on a numeric or date column; a categorical column's
unlisted values are its ``(other)`` leaf), never refused: a refusal that one record can cause
would be a leak. Identifier-like *names* are ignored by a public rule on the name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from dpkit.console import have_columns
from dpkit.data.encoded import is_number
from dpkit.errors import DpkitUsageError
from dpkit.privacy.mechanisms.partition import noise_sum_threshold
from dpkit.schema.names import looks_like_id, names

if TYPE_CHECKING:
    from dpkit.domain.profile import Summary
    from dpkit.privacy.accountant import Accountant

KINDS = ("categorical", "numeric", "date", "timestamp", "ignore")
#: the public list of tokens a no-schema run may learn as missing (docs/domain.md)
MISSING_CANDIDATES = ("", "?", "NA", "N/A", "n/a", "null", "NULL", "None", "-", "nan")
#: the shape cells after the tokens, in order;
#: zero has a cell of its own: it is a whole number that says nothing of whether a column's other
#: values are (a float column that is 80 % zeros is not an integer column)
SHAPES = ("whole number", "fraction", "date", "text", "zero")


#: the share of the domain's δ that the metadata's Gaussian noise spends when it is used (the rest
#: stays with partition selection, whose thresholds it raises by ln(1/0.9) ≈ 0.1 nats of ~16)
GAUSSIAN_DELTA_SHARE = 0.1


@dataclass(frozen=True)
class NoisePlan:
    """How the m profiled columns' shape counts are noised (public: a function of m, ε and δ
    only; :func:`noise_plan`), and the stability thresholds of the decisions.

    ``laplace``: DLap(ε/m) on each column's cells, pure ε (basic composition over the columns).
    ``gaussian``: the discrete Gaussian N_Z(0, σ²) on every cell of every column at once: the m
    histograms together have L2 sensitivity √m (one cell per column, by one), so ρ = m/(2σ²)
    zCDP (CKS Thm. 4), (ε, δ_G)-DP by CKS Cor. 13. ``threshold`` is the smallest τ with
    P(Z ≥ τ − 1) ≤ δ/m for one cell; :meth:`sum_threshold` the same for a sum of k cells."""

    mechanism: str
    epsilon: float
    columns: int
    #: the stability threshold of one cell: P(Z ≥ τ − 1) ≤ δ/m
    threshold: int
    #: the δ spent (0 for the Laplace plan: pure ε)
    delta: float = 0.0
    #: the discrete Gaussian's σ² (None for the Laplace plan)
    sigma2: Fraction | None = None
    #: δ/m: the bound on one record's own flip per column
    stability: float = 0.0

    @property
    def epsilon_j(self) -> float:
        """A column's share of ε (for Laplace its own ε; for Gaussian its equal share of the joint step)."""
        return self.epsilon / self.columns

    def sum_threshold(self, k: int) -> int:
        """The smallest τ with P(Z_1 + … + Z_k ≥ τ − 1) ≤ δ/m, the Z_i this plan's i.i.d. noise: a
        decision on the sum of k noisy cells that the exact data leaves at 0 crosses it because of
        one record with probability ≤ δ/m (as one cell against :attr:`threshold`). Chernoff:
        P(S ≥ x) ≤ e^{−λx}·M(λ)^k for every λ > 0, M the moment generating function — the
        discrete Gaussian's M(λ) ≤ e^{λ²σ²/2} (CKS Cor. 9: σ-subgaussian), so
        P(S ≥ x) ≤ e^{−x²/(2kσ²)}; DLap(a)'s M(λ) = (1 − q)²/((1 − qe^λ)(1 − qe^{−λ})),
        λ < a, q = e^{−a}, minimized over a grid of λ (any λ gives a valid bound)."""
        if k <= 1:
            return self.threshold
        return noise_sum_threshold(self.mechanism, self.epsilon_j, self.sigma2, k, self.stability)


def noise_plan(columns: int, epsilon: float, delta: float) -> NoisePlan:
    """The metadata's noise for ``columns`` profiled columns sharing ``epsilon``: the discrete
    Gaussian (spending :data:`GAUSSIAN_DELTA_SHARE`·δ) when its stability threshold is lower
    than the discrete Laplace's and its noise per cell no larger (σ ≤ √2/ε_j, the Laplace's
    standard deviation: from m ≈ 9 columns at the default shares), else the discrete Laplace
    (pure ε). Public: m, ε and δ only.

    Why it matters: τ ≈ ln(m/δ)/ε_j with ε_j = ε/m grows as m·ln(m/δ)/ε under Laplace — one
    record touches every column, so each column gets 1/m of ε — but only as √m·… under the
    Gaussian, which pays the joint histogram's L2 sensitivity √m. Adult's 13 columns at
    ε = 0.0306, δ = 10⁻⁶: τ 6,669 (Laplace) against 2,591 (σ 493 ≤ 601). With 4 columns at
    ε = 0.02 the Gaussian's τ would be 2,059 against 2,904, but its σ 409 against 283: the
    Laplace is kept. At m ≤ 2 its τ is the lower too (pure ε, the audit of one column)."""
    from dpkit.privacy.concentrated import MARGIN, cdp_delta, cdp_rho
    from dpkit.privacy.mechanisms.partition import (
        _ceil_step,
        gaussian_threshold,
        prefer_gaussian,
        threshold,
    )

    stability = delta / columns
    lap = NoisePlan("laplace", epsilon, columns, threshold(epsilon / columns, stability), stability=stability)
    d_gauss = delta * GAUSSIAN_DELTA_SHARE
    rho = cdp_rho(epsilon, d_gauss)
    sigma2 = max(Fraction(1), _ceil_step(columns / (2 * rho)))
    if not cdp_delta(columns / (2 * float(sigma2)), epsilon) <= d_gauss * (1 - MARGIN):  # pragma: no cover
        return lap  # rounding only adds noise; kept as a guard
    gauss = NoisePlan("gaussian", epsilon, columns, gaussian_threshold(sigma2, stability), delta=d_gauss,
                      sigma2=sigma2, stability=stability)
    # Pareto: the Gaussian only when no decision gets worse — a lower threshold (the established
    # kinds and tokens) AND no larger noise per cell (a small column's type, the larger of two
    # noisy sums, when nothing is established: at m = 4 the Gaussian's σ is 1.4× the Laplace's
    # standard deviation √2/ε_j and Iris's columns flipped to categorical)
    lap_sd = math.sqrt(2) / lap.epsilon_j
    return gauss if prefer_gaussian([(lap.threshold, gauss.threshold)], [(lap_sd, math.sqrt(sigma2))]) else lap


@dataclass(frozen=True)
class ColumnMeta:
    """One column's metadata: its kind and whole-number flag, what the user declared
    (``given``: the type; ``declared``: the parts) and what was learned under DP (``learned``,
    at ``epsilon`` with stability threshold ``threshold``)."""

    name: str
    kind: str
    integer: bool = False
    given: bool = False
    why: str = ""
    #: a public value list the user gave (``values=``): not learned, nothing spent on it
    values: tuple[str, ...] | None = None
    #: public bounds the user gave (``bounds=``): only split points are learned, if any
    bounds: tuple[float, float] | None = None
    #: the parts the user declared ("type", "integer", "missing tokens", "values", "bounds")
    declared: tuple[str, ...] = ()
    #: the parts learned under DP from the noisy shape counts ("type", "integer", "missing tokens")
    learned: tuple[str, ...] = ()
    #: the ε of this column's shape counts (0: nothing learned)
    epsilon: float = 0.0
    #: the stability threshold τ_j of the decisions
    threshold: int | None = None
    #: missing values established from the noisy counts (:func:`holds_missing`); None: not learned
    missing: bool | None = None
    #: ``missing`` is True by a public rule, not learned (:func:`structural_missing`: a run
    #: without a schema's numeric and date columns keep their bucket whatever the noisy counts said)
    missing_structural: bool = False
    #: a numeric column whose whole-number flag was learned: were fractions *established* (their
    #: noisy count reached τ_j)? False: not established, whatever the flag says (the bounds are then
    #: drawn on the whole-number grid, dpkit.domain.discover); None: not learned
    fractions: bool | None = None
    #: a learned numeric column's noisy counts (post-processing of its shape cells): of its numbers
    #: (whole, fraction, zero) and of every other value (tokens, dates, text) — a date or timestamp
    #: column's: of its dates and of every other value; None: not profiled
    noisy_numbers: int | None = None
    noisy_others: int | None = None
    #: of the others, the values neither a missing token nor of the column's kind (what it reads
    #: as missing: text in a numeric column, anything but a date in a date column)
    noisy_unread: int | None = None


@dataclass(frozen=True)
class Declarations:
    """What the user declared as public (each a list of column names, or "a,b"; ``missing``: the
    tokens, None to learn them, ``()`` for none)."""

    numeric: str | Iterable[str] | None = None
    categorical: str | Iterable[str] | None = None
    integer: str | Iterable[str] | None = None
    date: str | Iterable[str] | None = None
    ignore: str | Iterable[str] | None = None
    missing: tuple[str, ...] | None = None
    values: Mapping[str, Sequence[str]] | None = None
    bounds: Mapping[str, Sequence[float]] | None = None
    #: columns named like identifiers to learn all the same (:func:`looks_like_id`)
    keep: str | Iterable[str] | None = None


@dataclass
class Metadata:
    """What :func:`learn_metadata` returns: every column's :class:`ColumnMeta`, the missing
    tokens, whether they were declared, and the spend."""

    metas: list[ColumnMeta]
    tokens: tuple[str, ...]
    tokens_declared: bool
    epsilon: float = 0.0
    #: token -> the columns where it was learned as missing (public: a DP outcome)
    token_columns: dict[str, list[str]] = field(default_factory=dict)
    #: the δ spent (the Gaussian plan's; 0 under Laplace or with nothing learned)
    delta: float = 0.0
    #: how the counts were noised (None: nothing learned)
    plan: NoisePlan | None = None


def declared_tokens(missing: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``missing=`` as declared tokens: ``"auto"`` (learn them: None), None or ``"none"``
    (declare none: ``()``), a string (one token, or several comma-separated when it has a comma
    and is not itself a candidate) or a list."""
    if isinstance(missing, str) and missing == "auto":
        return None
    if missing is None or (isinstance(missing, str) and missing.lower() == "none"):
        return ()
    if isinstance(missing, str):
        tokens: Sequence[str] = [t.strip() for t in missing.split(",")] if "," in missing else [missing]
    else:
        tokens = [str(t) for t in missing]
    return tuple(dict.fromkeys(tokens))


def named_ids(columns: Sequence[str], target: str | None, declared: Declarations) -> list[str]:
    """The columns the public name rule leaves out (:func:`looks_like_id`): named like an
    identifier, not the target, no type declared, not kept (``declared.keep``, checked against
    the header: a usage error naming ``keep`` otherwise)."""
    kept = set(names(declared.keep, "keep", columns))
    given = resolve_declarations(columns, target, declared)[0]
    return [c for c in columns if c != target and c not in given and c not in kept and looks_like_id(c)]


def is_date(value: str) -> bool:
    """An ISO date (or a timestamp, read as its day) as every reader parses it
    (:func:`dpkit.schema.dates.parse`: the one place that decides what is a date)."""
    from dpkit.schema.dates import parse

    return parse(value, "date") is not None


def shape_counts(summary: Summary, tokens: Sequence[str]) -> np.ndarray:
    """The exact count of each shape cell — one per token, then :data:`SHAPES` — of a column
    (PRIVATE: only noised). Each value is in exactly one cell (a token first)."""
    index = {t: i for i, t in enumerate(tokens)}
    k = len(tokens)
    out = np.zeros(k + len(SHAPES), dtype=np.int64)
    for value, n in zip(summary.values, summary.counts, strict=True):
        i = index.get(value)
        if i is None:
            x = is_number(value)
            if x is not None:
                i = k + 4 if x == 0 else k if x.is_integer() else k + 1
            else:
                i = k + 2 if is_date(value) else k + 3
        out[i] += int(n)
    return out


@dataclass(frozen=True)
class Decision:
    """The decisions of one column's noisy shape counts (post-processing only)."""

    kind: str
    integer: bool
    tokens: tuple[str, ...]
    #: the noisy counts (token cells, then SHAPES), for :func:`holds_missing` once the type is final
    noisy: tuple[int, ...] = ()
    #: the fraction cell reached τ: fractions are established (not only not ruled out)
    fractions: bool = False


def decide(noisy: np.ndarray, tokens: Sequence[str], tau: int) -> Decision:
    """The module docstring's rules on one column's noisy shape counts (cells as
    :func:`shape_counts`). Ties go to numbers, then text."""
    k = len(tokens)
    whole, frac, date, text, zero = (int(noisy[k + i]) for i in range(5))
    learned_tokens = tuple(t for t, n in zip(tokens, noisy[:k], strict=True) if n >= tau)
    scores = {"numeric": whole + frac + zero, "categorical": text, "date": date}
    established = [kind for kind, ok in (("numeric", whole >= tau or frac >= tau or zero >= tau),
                                         ("categorical", text >= tau),
                                         ("date", date >= tau)) if ok]
    if not established:
        # a date column must be established; below τ its dates count as text, so a small date
        # column is categorical (its days listed or '(other)'), never numeric: a numeric column
        # reads every date as missing and would drop every row (bench/bench_dates.py, 2,000 rows)
        scores["categorical"] += date
    pool = established or ["numeric", "categorical"]
    kind = max(pool, key=lambda c: scores[c])  # max keeps the first of equal scores
    integer = frac < tau and (whole >= tau or whole > frac)
    return Decision(kind, integer, learned_tokens, tuple(int(x) for x in noisy), fractions=frac >= tau)


def holds_missing(dec: Decision, kind: str, tokens: Sequence[str], sum_threshold: Callable[[int], int]) -> bool:
    """Does a column of type ``kind`` hold missing values, established from ``dec``'s noisy counts
    (cells as :func:`shape_counts` over ``tokens``)? Yes when a token was learned in it
    (``dec.tokens``: its own cell reached τ_j), or when the sum of the k cells ``kind`` reads as
    missing (``unparsable: missing``: a number column's dates and text; a date column's numbers
    and text) reaches ``sum_threshold(k)`` — the stability threshold of a sum of k noisy cells
    (:meth:`NoisePlan.sum_threshold`): a sum is noisier than one cell, and against τ_j one stray
    ``unknown`` in a number column would set its flag with probability above δ/m.
    Post-processing of counts already drawn (no ε spent; module docstring)."""
    if dec.tokens:
        return True
    k = len(tokens)
    whole, frac, date, text, zero = dec.noisy[k:k + 5]
    cells = {"numeric": (date, text), "date": (whole, frac, zero, text),
             "timestamp": (whole, frac, zero, text)}.get(kind, ())
    return bool(cells) and sum(cells) >= sum_threshold(len(cells))


#: the kinds :func:`structural_missing` gives a missing child (a number or a date: what a
#: numeric split reads; a categorical column's missing value is a category)
STRUCTURAL_KINDS = ("numeric", "date", "timestamp")


def structural_missing(metas: Sequence[ColumnMeta]) -> list[ColumnMeta]:
    """``metas`` with every numeric or date column whose missingness was learned and not
    established (``missing`` False) given it all the same, by a public rule
    (``missing_structural``): a data-independent choice — a function of the column's kind,
    itself learned under DP — so nothing is read or spent, and the audit's stability is
    untouched (the flag no longer depends on the noisy counts at all).

    The schema writes ``missing: structural`` (:attr:`dpkit.schema.parse.NumericColumn.structural`):
    a forest gives the column a missing child. A run without a schema applies it in the forest
    only (``DomainPlan.structural_missing``); a no-schema publish keeps the learned flag, as an
    empty bucket costs the release utility. Given a schema that says it,
    publish sets the bucket apart at the column's first split and its automatic depth counts it
    as a fraction of a cell (:data:`dpkit.algorithms.publish.maxgddp.STRUCTURAL_BUCKET`).

    Why: a column is flagged only when its missing values reach the stability threshold of
    :meth:`NoisePlan.sum_threshold`, ≈ 4,100 records on a 15,000-row table of 7 predictors, so
    a column with 10–20 % of its values missing was ``missing: false`` and its missing values
    were read as its lowest ones (docs/results/missing.md, "Narrow tables";
    docs/decisions/0005-structural-missing.md)."""
    import dataclasses

    return [dataclasses.replace(m, missing=True, missing_structural=True)
            if m.missing is False and m.kind in STRUCTURAL_KINDS else m for m in metas]


def resolve_declarations(columns: Sequence[str], target: str | None, declared: Declarations
                         ) -> tuple[dict[str, str], set[str], dict[str, tuple[str, ...]], dict[str, tuple[float, float]]]:
    """The declared kinds (column -> kind), integer columns, value lists and bounds, checked
    against the header (usage errors: unknown column, two types, a non-categorical target)."""
    given: dict[str, str] = {}

    def declare(name: str, kind: str) -> None:
        if name in given and given[name] != kind:
            raise DpkitUsageError(f"column {name!r} is declared two types ({given[name]} and {kind})")
        given[name] = kind

    for kind, value, param in (("numeric", declared.numeric, "numeric"),
                               ("categorical", declared.categorical, "categorical"),
                               ("date", declared.date, "date"), ("ignore", declared.ignore, "ignore")):
        for name in names(value, param, columns):
            declare(name, kind)
    ints = set(names(declared.integer, "integer", columns))
    for name in sorted(ints):
        declare(name, "numeric")  # integer= declares the column numeric too
    public_values: dict[str, tuple[str, ...]] = {}
    values = declared.values or {}
    for name in names(list(values), "values", columns):
        vals = tuple(dict.fromkeys(str(v) for v in values[name]))
        if not vals or given.get(name, "categorical") != "categorical":
            raise DpkitUsageError(f"values: column {name!r} needs a non-empty list and a categorical type")
        declare(name, "categorical")
        public_values[name] = vals
    public_bounds: dict[str, tuple[float, float]] = {}
    bounds = declared.bounds or {}
    for name in names(list(bounds), "bounds", columns):
        if given.get(name) == "date":  # ISO dates, as a schema writes them
            from dpkit.schema.dates import parse_bound

            got = [parse_bound(str(x), "date") for x in bounds[name]]
            if len(got) != 2 or None in got or not got[0] < got[1]:  # type: ignore[operator]
                raise DpkitUsageError(f"bounds: date column {name!r} needs two ISO dates lo < hi "
                                      f"(e.g. 2019-01-01, 2025-01-01), got {bounds[name]!r}")
            public_bounds[name] = (got[0], got[1])  # type: ignore[assignment]
            continue
        try:
            lo, hi = (float(x) for x in bounds[name])
        except (TypeError, ValueError):
            raise DpkitUsageError(f"bounds: column {name!r} needs two numbers (lo, hi)") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or given.get(name, "numeric") != "numeric":
            raise DpkitUsageError(f"bounds: column {name!r} needs finite lo < hi and a numeric type, got {bounds[name]!r}")
        declare(name, "numeric")
        public_bounds[name] = (lo, hi)
    if target is not None and given.get(target, "categorical") != "categorical":
        raise DpkitUsageError(f"the target {target!r} must be categorical, not {given[target]}")
    if target is not None and len(public_values.get(target, (None, None))) < 2:
        # as when fewer than two classes are learned (domain.discover): a one-class release, or a
        # forest trained on one class, predicts that class for every row
        raise DpkitUsageError(f"values: the target {target!r} needs at least two classes, got "
                              f"{list(public_values[target])!r}; give every class name")
    return given, ints, public_values, public_bounds


def learn_metadata(
    summaries: Mapping[str, Summary],
    *,
    target: str | None,
    declared: Declarations,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str = "domain",
) -> Metadata:
    """Every column's metadata: as declared, else learned from noisy shape counts under
    DP (module docstring). Spends ``epsilon`` over the columns that learn something (nothing
    when every part is declared); ``delta`` sets the stability thresholds (δ/m per column), and
    under the Gaussian plan (:func:`noise_plan`, m ≥ 3 or so) :data:`GAUSSIAN_DELTA_SHARE` of it
    is spent (``Metadata.delta``: the caller leaves it out of the steps that follow); under the
    Laplace plan none (pure ε: the counts are of public cells). Usage errors come before any spend."""
    columns = list(summaries)
    if target is not None and target not in columns:
        raise DpkitUsageError(f"target {target!r} is not a column of the data {have_columns(columns)}",
                              param="target")
    given, ints, public_values, public_bounds = resolve_declarations(columns, target, declared)
    tokens_declared = declared.missing is not None
    cells = declared.missing if declared.missing is not None else MISSING_CANDIDATES

    by_name = set(named_ids(columns, target, declared))

    def plan(name: str) -> tuple[str, ...]:
        """The parts of column ``name`` to learn."""
        kind = given.get(name)
        if name == target or kind == "ignore" or name in by_name:
            return ()
        parts = []
        if kind is None:
            parts.append("type")
        if kind in (None, "numeric") and name not in ints:
            parts.append("integer")
        if not tokens_declared:
            parts.append("missing tokens")
        return tuple(parts)

    plans = {name: plan(name) for name in columns}
    profiled = [name for name in columns if plans[name]]
    noise = noise_plan(len(profiled), epsilon, delta) if profiled else None
    eps_j = noise.epsilon_j if noise is not None else 0.0
    tau = noise.threshold if noise is not None else None
    exact_counts = {name: shape_counts(summaries[name], cells) for name in profiled}
    decisions = _decisions(exact_counts, noise, cells, epsilon=epsilon, rng=rng, accountant=accountant, step=step)
    metas: list[ColumnMeta] = []
    for name in columns:
        kind = given.get(name)
        parts = plans[name]
        dec = decisions.get(name)
        if name == target:
            metas.append(ColumnMeta(name, "categorical", given=True, why="the target", values=public_values.get(name),
                                    declared=("type",) + (("values",) if name in public_values else ())))
            continue
        if kind is None and dec is None:  # ignored by the public name rule
            metas.append(ColumnMeta(name, "ignore", why="named like an identifier"))
            continue
        declared_parts = tuple(p for p, ok in (("type", kind is not None), ("integer", name in ints),
                                               ("missing tokens", tokens_declared),
                                               ("values", name in public_values), ("bounds", name in public_bounds))
                               if ok)
        if kind == "ignore":
            metas.append(ColumnMeta(name, "ignore", given=True, declared=("type",)))
            continue
        final = kind if kind is not None else dec.kind  # type: ignore[union-attr]
        integer = name in ints or (final == "numeric" and dec is not None and "integer" in parts and dec.integer)
        # a date column counts whole days (dpkit.schema.dates): integer, as a declared one
        metas.append(ColumnMeta(name, final, integer=integer if final == "numeric" else final == "date",
                                given=kind is not None,
                                values=public_values.get(name), bounds=public_bounds.get(name),
                                declared=declared_parts,
                                learned=tuple(p for p in parts if p != "integer" or final == "numeric"),
                                epsilon=eps_j if dec is not None else 0.0,
                                threshold=tau if dec is not None else None,
                                # declared tokens: the user says what missing is, every column
                                # keeps its (missing) cell (no flag, as a hand-written schema)
                                missing=(holds_missing(dec, final, cells, noise.sum_threshold)  # type: ignore[union-attr]
                                         if dec is not None and not tokens_declared else None),
                                fractions=(dec.fractions if final == "numeric" and dec is not None and "integer" in parts
                                           else None),
                                **(_number_counts(dec, len(cells), final)
                                   if final in ("numeric", "date", "timestamp") and dec is not None else {})))
    token_columns: dict[str, list[str]] = {}
    if not tokens_declared:
        for name, dec in decisions.items():
            for t in dec.tokens:
                token_columns.setdefault(t, []).append(name)
    tokens = (declared.missing if tokens_declared else
              tuple(t for t in MISSING_CANDIDATES if t in token_columns))
    return Metadata(metas, tuple(tokens or ()), tokens_declared, eps_j * len(profiled), token_columns,
                    delta=noise.delta if noise is not None else 0.0, plan=noise)


def _decisions(exact_counts: dict[str, np.ndarray], noise: NoisePlan | None, cells: Sequence[str], *, epsilon: float,
               rng: np.random.Generator, accountant: Accountant, step: str) -> dict[str, Decision]:
    """Each profiled column's decision (type, whole numbers, missing tokens) from its noisy shape
    counts: one joint discrete Gaussian over every column under the Gaussian plan, a discrete
    Laplace per column under the Laplace one (:func:`noise_plan`)."""
    from dpkit.privacy.mechanisms import discrete_laplace

    profiled = list(exact_counts)
    eps_j = noise.epsilon_j if noise is not None else 0.0
    tau = noise.threshold if noise is not None else None
    decisions: dict[str, Decision] = {}
    if noise is not None and noise.mechanism == "gaussian":
        from dpkit.privacy.mechanisms import joint_discrete_gaussian

        # one step for the m columns at once: L2 sensitivity √m, (ε, δ_G) by zCDP (NoisePlan)
        noisy_counts = joint_discrete_gaussian(
            [exact_counts[name] for name in profiled], sigma2=noise.sigma2,  # type: ignore[arg-type]
            epsilon=epsilon, delta=noise.delta, rng=rng, accountant=accountant,
            step=f"{step}: types and missing tokens of {len(profiled)} columns",
            mechanism=(f"discrete gaussian on public cells (sigma^2 {float(noise.sigma2):.6g}, "  # type: ignore[arg-type]
                       f"rho {len(profiled) / (2 * float(noise.sigma2)):.6g}, threshold {noise.threshold})"))  # type: ignore[arg-type]
        for name, noisy in zip(profiled, noisy_counts, strict=True):
            decisions[name] = decide(noisy, cells, noise.threshold)
    else:
        for name in profiled:
            noisy = discrete_laplace(exact_counts[name], epsilon=eps_j, rng=rng, accountant=accountant,
                                     step=f"{step}: type and missing tokens of {name}")
            decisions[name] = decide(noisy, cells, tau)  # type: ignore[arg-type]
    return decisions


def _number_counts(dec: Decision, k: int, kind: str = "numeric") -> dict[str, int]:
    """A numeric column's noisy count of numbers and of the rest — a date or timestamp column's
    of dates and of the rest — from its decision's cells (token cells, then :data:`SHAPES`): sums
    of noisy counts already drawn (post-processing)."""
    whole, frac, date, text, zero = dec.noisy[k:k + 5]
    tokens = sum(dec.noisy[:k])
    if kind != "numeric":
        return {"noisy_numbers": int(date), "noisy_others": int(tokens + whole + frac + text + zero),
                "noisy_unread": int(whole + frac + text + zero)}
    return {"noisy_numbers": int(whole + frac + zero), "noisy_others": int(tokens + date + text),
            "noisy_unread": int(date + text)}


def numeric_summary(summary: Summary, tokens: Sequence[str]) -> Summary:
    """``summary`` restricted to the values a numeric column reads as numbers (the others are
    read as missing on load: ``unparsable: missing``), for :func:`dpkit.domain.profile.numbers`."""
    from dpkit.domain.profile import Summary as _Summary

    skip = set(tokens)
    keep = [i for i, v in enumerate(summary.values) if v not in skip and is_number(v) is not None]
    return _Summary(tuple(summary.values[i] for i in keep), np.asarray(summary.counts)[keep])
