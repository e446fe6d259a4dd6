"""Private schema discovery: a schema whose domains were learned under (ε, δ)-DP.

I/O-free: takes the public metadata (:mod:`dpkit.domain.metadata`), the exact per-column
counts (:mod:`dpkit.domain.profile`: from Frames), an accountant and a generator, and returns
a :class:`~dpkit.schema.parse.Schema` the private commands accept (docs/domain.md).

Budget (defaults in :class:`DomainOptions`, the only place they live):

* ε is split over the used columns in proportion to a weight per column (1 for a
  categorical column, ``numeric_weight`` for a numeric one, ``target_weight`` for the
  target): basic composition over the columns, as every record holds one value in each
  (docs/domain-reference.md, "Many columns"). The target weighs more because a release needs two of
  its classes, and on an imbalanced table the minority class is the value nearest the
  threshold (docs/domain-reference.md, "Defaults, and why").
* δ goes wholly to the categorical columns (the quantile mechanisms are pure ε). With no
  categorical column nothing spends δ.
* The categorical columns: partition selection, one of two ways (``partition``; docs/domain-reference.md,
  "Many columns"). Per column with discrete Laplace noise
  (:func:`dpkit.privacy.mechanisms.partition.partition_selection`), each with its (ε_j, δ/m); or all m
  at once with discrete Gaussian noise (:func:`~dpkit.privacy.mechanisms.partition.joint_partition_selection`),
  their summed ε_j and δ together, which pays the L2 sensitivity √m instead of the L1 m. A
  column's noise s.d. relative to a predictor's is 1/weight in both (the Gaussian's ρ shares
  are the weights squared). The Laplace is the default; ``"auto"`` (a forest's default without
  a schema) takes the Gaussian when it lowers every column's threshold and at least halves the
  largest (a predictor's), a choice from public numbers only
  (:func:`~dpkit.privacy.mechanisms.partition.choose_partition`): from 10–12 categorical predictors. publish
  keeps the Laplace: on Adult and on the held-out UCI mushroom table the Gaussian's longer lists
  made its releases worse (docs/domain-reference.md, "Many columns").
* The released values of a column become a flat ``values:`` list plus a catch-all leaf
  ``(other)`` that every unreleased value is read as (``other: (other)``); the target gets
  no catch-all: a record whose class was not released is read as missing
  (``unlisted: missing``) and dropped. A target with fewer than two released classes is
  refused: a one-class release or model predicts that class for everyone.
* A released value that is a token of the public missing list (``candidates``: the no-schema
  run's :data:`~dpkit.domain.metadata.MISSING_CANDIDATES` when the tokens are not declared) is
  no category: it becomes its column's missing token (:func:`released_tokens`), and for the
  target a missing class. Post-processing of the release with a public list (docs/domain-reference.md,
  "Missing values").
* A numeric column: its ε_j for both bounds at once on the public nice grid (a prior that
  favours 0 as the lower bound and charges a negative one: ``zero_bonus``, ``negative_lower``)
  and, with ``levels`` > 0, ``split_share`` of it for a binary interval hierarchy of recursive
  medians (:mod:`dpkit.privacy.mechanisms.quantiles`). A learned bound at 0 gives the column one public
  split point beside it (``points``, :func:`~dpkit.domain.grid.zero_edge`): a function of
  the released bounds, nothing spent (docs/domain-reference.md, "Zero-heavy and skewed columns"); with
  ``decade_points`` (off by default: a held-out table lost with them), bounds that hold 0 also
  offer log-spaced points between 0 and each bound
  (:func:`~dpkit.domain.grid.decade_points`), likewise post-processing.
* A numeric column whose fractions are not established (the metadata's noisy fraction count
  under τ_j) draws its bounds on the whole-number grid, and a whole-number column's upper bound
  lies past its largest value (``integer_top``: publish splits at whole numbers strictly inside
  the bounds). A column mostly missing with too few numbers for its bounds (the metadata's noisy
  counts: :data:`FEW_SHARE`, :data:`FEW_EPS_N`) is left out (declared ignore, its note
  ``left_out``; the run warns, naming ``bounds=``). ``bounds_reward`` (off) adds a reward for the
  bulk below the upper bound (:func:`~dpkit.privacy.mechanisms.quantiles.bounds_on_grid`). (docs/domain-reference.md,
  "Identifiers, whole numbers and bounds a person would write").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpkit.domain.grid import decade_points, nice_grid, reward_window, zero_edge
from dpkit.domain.metadata import ColumnMeta
from dpkit.domain.profile import Categories
from dpkit.domain.vocabulary import Thresholds, Vocabularies
from dpkit.domain.vocabulary import decide as decide_vocabulary
from dpkit.domain.vocabulary import thresholds as vocabulary_thresholds
from dpkit.errors import DataError, DpkitUsageError
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.mechanisms import discrete_laplace
from dpkit.privacy.mechanisms.partition import (
    Selection,
    choose_partition,
    first_round,
    gaussian_plan,
    joint_partition_selection,
    second_round,
)
from dpkit.privacy.mechanisms.quantiles import (
    BOUND_PRIOR,
    NEGATIVE_LOWER,
    ZERO_BONUS,
    Profile,
    SplitNode,
    bounds_on_grid,
    split_tree,
)
from dpkit.schema.dates import (
    COUNT_SHARE,
    MONTH_PRIOR,
    REFINE_MIN,
    REFINE_SHARE,
    REFINE_YEARS,
    TIME_KINDS,
    YEAR_PRIOR,
    bounds_grid,
    refine_grid,
)
from dpkit.schema.parse import (
    CategoricalColumn,
    Column,
    IgnoredColumn,
    IntervalNode,
    NumericColumn,
    Schema,
    TaxonomyNode,
)

#: the catch-all leaf's name, and the spellings tried when a released value already has it
OTHER_NAMES = ("(other)", "(other values)", "(any other value)", "(not listed)")

#: the share of the categorical predictors' ε and δ kept for a second round of partition selection on
#: the columns the first left open (DomainOptions.second_round; docs/domain-reference.md, "A budget that fits")
SECOND_ROUND = 0.0
#: a predictor is open after the first round when its listed noisy mass is below this share of the
#: noisy record count (the largest listed mass over the categorical columns)
OPEN_BELOW = 0.7
#: the second round goes to at most second_round·m / OPEN_GAIN open predictors (m: the categorical
#: predictors), so that each gets at least OPEN_GAIN times the ε it had in one round
OPEN_GAIN = 2.0
EMPTY = ("error", "ignore")
PARTITIONS = ("auto", "laplace", "gaussian")


def _refused(name: str, what: str, value: object) -> DpkitUsageError:
    """The refusal of a :class:`DomainOptions` field, naming it (the command line names its flag)."""
    return DpkitUsageError(f"{name} must be {what}, got {value!r}", param=name)


@dataclass(frozen=True)
class DomainOptions:
    """How the domain budget is spent (the defaults are documented in docs/domain.md)."""

    #: a numeric column's share of ε relative to a categorical column's (1: equal shares)
    numeric_weight: float = 1.0
    #: the target's share of ε relative to a categorical predictor's (its minority class must
    #: clear the threshold; measured in bench/bench_domain.py)
    target_weight: float = 4.0
    #: levels of the numeric interval hierarchy (0: bounds only; publish then splits on its grid)
    levels: int = 0
    #: with levels > 0, the share of a numeric column's ε for the split points (the rest: bounds)
    split_share: float = 0.4
    #: γ, nats per nice-grid step, of the bounds' prior (dpkit.privacy.mechanisms.quantiles)
    bound_prior: float = BOUND_PRIOR
    #: the prior's extra weight (nats) on 0 as the lower bound (dpkit.privacy.mechanisms.quantiles.ZERO_BONUS)
    zero_bonus: float = ZERO_BONUS
    #: the prior's extra cost (nats) of a negative lower bound (dpkit.privacy.mechanisms.quantiles.NEGATIVE_LOWER)
    negative_lower: float = NEGATIVE_LOWER
    #: a predictor none of whose values survives: "error" (refuse, naming it) or "ignore"
    empty: str = "error"
    #: the categorical columns' selection: "laplace" (per column), "gaussian" (all at once) or
    #: "auto": the Gaussian when it lowers every column's threshold (public numbers only:
    #: dpkit.privacy.mechanisms.partition.choose_partition; docs/domain-reference.md, "Many columns")
    partition: str = "laplace"
    #: the share of ε that learns the metadata not declared (types, whole-number flags, missing
    #: tokens: dpkit.domain.metadata); nothing is taken when everything is declared
    meta_share: float = 0.2
    #: offer publish log-spaced split points (1, 2, 5 × 10^k) between 0 and a learned bound
    #: (dpkit.domain.grid.decade_points). Off: it helped the table it was tuned on but not
    #: a held-out public one (docs/domain-reference.md, "Zero-heavy and skewed columns";
    #: docs/decisions/0007-decade-points-off.md)
    decade_points: bool = False
    #: the share of the categorical predictors' ε and δ kept for a second round of partition
    #: selection on the predictors the first round left open (0: one round; the per-column Laplace
    #: only; dpkit.domain.discover._two_rounds)
    second_round: float = SECOND_ROUND
    #: the learned schema's ``missing_policy`` (with missing tokens or a target): ``keep`` (a
    #: missing value is a value: the ``(missing)`` leaf / bucket) or ``drop`` (its row is dropped)
    missing_policy: str = "keep"
    #: the bounds' utility rewards an upper bound whose upper half-range holds the bulk's top
    #: (dpkit.privacy.mechanisms.quantiles.bounds_on_grid's ``reward``; γ is then halved, as the mechanism's ε
    #: per record is). Off: the bounds came out tighter but the releases' utility fell on some
    #: tables (docs/domain-reference.md, "Bounds a person would write"; docs/decisions/0008-bounds-reward-off.md)
    bounds_reward: bool = False
    #: with the reward, γ of the lower bound's side of the prior as a multiple of ``bound_prior``
    #: (the upper side's is half of it)
    lower_prior: float = 0.5
    #: a whole-number column's upper bound lies past its largest value (a value at hi counts as
    #: clipped): publish splits it at whole numbers strictly inside the bounds, so [0, 1] could
    #: not separate a flag's 0 from its 1 (dpkit.privacy.mechanisms.quantiles.bounds_on_grid's ``below_top``)
    integer_top: bool = True
    #: leave out a numeric column with too few values for its bounds (:data:`FEW_SHARE`, :data:`FEW_EPS_N`)
    few_values: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.numeric_weight) and self.numeric_weight > 0):
            raise _refused("numeric_weight", "> 0", self.numeric_weight)
        if not (math.isfinite(self.target_weight) and self.target_weight > 0):
            raise _refused("target_weight", "> 0", self.target_weight)
        if not isinstance(self.levels, int) or isinstance(self.levels, bool) or not 0 <= self.levels <= 8:
            raise _refused("levels", "an integer from 0 to 8", self.levels)
        if not (math.isfinite(self.split_share) and 0 < self.split_share < 1):
            raise _refused("split_share", "between 0 and 1 (exclusive)", self.split_share)
        if self.empty not in EMPTY:
            raise _refused("empty", f"one of {', '.join(EMPTY)}", self.empty)
        if self.partition not in PARTITIONS:
            raise _refused("partition", f"one of {', '.join(PARTITIONS)}", self.partition)
        if not (math.isfinite(self.meta_share) and 0 < self.meta_share < 1):
            raise _refused("meta_share", "between 0 and 1 (exclusive)", self.meta_share)
        if not (math.isfinite(self.second_round) and 0 <= self.second_round < 1):
            raise _refused("second_round", "at least 0 and below 1", self.second_round)
        if self.missing_policy not in ("keep", "drop"):
            raise _refused("missing_policy", "keep or drop", self.missing_policy)
        if not (math.isfinite(self.bound_prior) and self.bound_prior > 0):
            raise _refused("bound_prior", "> 0", self.bound_prior)
        if not (math.isfinite(self.zero_bonus) and self.zero_bonus >= 0):
            raise _refused("zero_bonus", ">= 0", self.zero_bonus)
        if not (math.isfinite(self.negative_lower) and self.negative_lower >= 0):
            raise _refused("negative_lower", ">= 0", self.negative_lower)


@dataclass
class ColumnNote:
    """What the discovery did to one column (public: for the YAML comments and the report)."""

    name: str
    kind: str
    learned: str
    epsilon: float = 0.0
    delta: float = 0.0
    threshold: int | None = None
    #: a predictor left out (declared ignore) because none of its values cleared the threshold
    left_out: bool = False
    #: public missing tokens among the column's released values, read as its missing value (not
    #: categories; :func:`released_tokens`): named because partition selection released them
    missing_tokens: tuple[str, ...] = ()


@dataclass
class Discovery:
    """The learned schema and the public account of how it was learned."""

    schema: Schema
    notes: list[ColumnNote] = field(default_factory=list)
    #: a noisy record count (the largest over the categorical columns of the released noisy
    #: counts, missing tokens included): post-processing, for the δ > 1/Ñ warning. None
    #: when no categorical column was selected
    noisy_records: int | None = None
    #: the categories' noise: "discrete Laplace" (per column) or "discrete Gaussian" (joint)
    noise: str = "discrete Laplace"
    #: the selection used: "laplace" or "gaussian" (``DomainOptions.partition``, or its choice)
    partition: str = "laplace"
    #: the public vocabularies were candidates of the categorical columns (dpkit.domain.vocabulary)
    vocabulary: bool = False

    @property
    def released_tokens(self) -> dict[str, tuple[str, ...]]:
        """Column → the public missing tokens its partition selection released, which the schema
        reads as the column's missing value (:func:`released_tokens`; public: released values)."""
        return {n.name: n.missing_tokens for n in self.notes if n.missing_tokens}


def learns(m: ColumnMeta, options: DomainOptions) -> bool:
    """Does column ``m`` spend budget? Not when ignored, given a public value list, or given
    public bounds with no split levels to learn."""
    if m.kind == "categorical":
        return m.values is None
    if m.kind in TIME_KINDS:  # bounds only: publish splits a date on its calendar grid
        return m.bounds is None
    return m.kind == "numeric" and (m.bounds is None or options.levels > 0)


def column_weight(m: ColumnMeta, options: DomainOptions, target: str | None) -> float:
    """A column's weight in the split of ε (``options.numeric_weight`` for a numeric column,
    ``options.target_weight`` for ``target``, 1 for any other)."""
    return (options.target_weight if m.name == target else
            options.numeric_weight if m.kind in ("numeric", *TIME_KINDS) else 1.0)


def column_budgets(metas: Sequence[ColumnMeta], epsilon: float, delta: float,
                   options: DomainOptions, target: str | None = None,
                   target_epsilon: float | None = None) -> dict[str, tuple[float, float]]:
    """(ε_j, δ_j) per column that learns something: ε by weight (:func:`column_weight`), δ
    equally over the learned categorical columns. Columns taken wholly as public get nothing.
    ``target_epsilon``: the target's ε fixed in advance (the metadata step took its ε from the
    predictors' shares only; :func:`dpkit.api.domain.learn_schema`), the others share the rest."""
    if all(m.kind == "ignore" for m in metas):
        raise DpkitUsageError("no column to learn: every column is ignored")
    used = [m for m in metas if learns(m, options)]
    weights = [column_weight(m, options, target) for m in used]
    total = math.fsum(weights)
    n_cat = sum(m.kind == "categorical" for m in used)
    others = math.fsum(w for m, w in zip(used, weights, strict=True) if m.name != target)
    fixed = target_epsilon is not None and others > 0 and any(m.name == target for m in used)
    out = {}
    for m, w in zip(used, weights, strict=True):
        if fixed:
            eps = target_epsilon if m.name == target else (epsilon - target_epsilon) * w / others  # type: ignore[operator]
        else:
            eps = epsilon * w / total
        out[m.name] = (eps, delta / n_cat if m.kind == "categorical" else 0.0)
    return out


def _other_name(values: Sequence[str]) -> str:
    taken = set(values)
    for name in OTHER_NAMES:
        if name not in taken:
            return name
    i = 2
    while f"(other {i})" in taken:
        i += 1
    return f"(other {i})"


def _flat(name: str, values: Sequence[str], *, other: str | None, unlisted: str) -> CategoricalColumn:
    leaves = tuple(values)
    root_name = next(r for r in ("Any", "All", "Any value", "(all)") if r not in leaves)
    kids = tuple(TaxonomyNode(v, (), i, i + 1, 1) for i, v in enumerate(leaves))
    root = TaxonomyNode(root_name, kids, 0, len(leaves), 0)
    return CategoricalColumn(name, root, leaves, other=other, unlisted=unlisted)


def released_tokens(kept: Sequence[str], candidates: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
    """Split a column's released values into categories and public missing tokens.

    ``kept``: the values partition selection released; ``candidates``: the public list of missing
    tokens a run without declared tokens may learn (:data:`dpkit.domain.metadata.MISSING_CANDIDATES`;
    ``()`` when the user declared the tokens: then they said what missing is, and a released
    ``'NA'`` stays a value). A released value in that list is returned as a token, in the list's
    order, and the column reads it as its missing value — the ``(missing)`` leaf under ``keep``,
    its row dropped under ``drop`` — exactly as if the metadata step had learned it there.

    Why it costs nothing and leaks nothing: the input is partition selection's *output* (values
    already released under its (ε_j, δ_j)) and a public list fixed before the data is seen; the
    split is a deterministic function of the two — post-processing (Dwork & Roth Prop. 2.1): no
    ε, no δ, no random draw. What it changes is how the released schema *reads* a value it
    already names (a leaf ``''`` becomes the leaf ``(missing)``), not which values were released.
    Needed because the metadata's stability threshold τ_j (one cell's, ≈ m·ln(m/δ)/ε of the
    metadata's ε) is far above partition selection's for a column (e.g. on 8,000 rows with eight
    predictors, ``''`` in 10 % of ``region`` is 800 records against τ_j = 914, and partition
    selection, at 226, listed ``''`` as a category)."""
    public = set(candidates)
    found = [v for v in kept if v in public]
    return [v for v in kept if v not in public], tuple(t for t in candidates if t in found)


@dataclass(frozen=True)
class Listing:
    """What one column's selection lists (public: released values and noisy counts only)."""

    #: the first (or only) round's selection
    selection: Selection
    #: released values that are not vocabulary cells (missing tokens excluded), in cell order
    values: tuple[str, ...]
    #: vocabulary values listed (dpkit.domain.vocabulary.decide)
    vocabulary: tuple[str, ...]
    #: the noisy mass of the listed cells and the public missing tokens (a noisy record count)
    records: int
    epsilon: float = 0.0
    delta: float = 0.0
    #: the second round's threshold, when the column had one
    second: int | None = None


def _listing(cat: Categories, sel: Selection, vocabulary: Vocabularies | None, limits: Thresholds | None,
             epsilon: float = 0.0, delta: float = 0.0, target: bool = False) -> Listing:
    """A column's listing from one selection: its released private values, and the vocabulary
    values listed by the pure-ε rule on the vocabulary cells' noisy counts (post-processing)."""
    vocab = cat.vocabulary if cat.vocabulary is not None else np.zeros(len(cat.values), dtype=bool)
    pairs = list(zip(sel.selected, sel.noisy, strict=True))
    values = tuple(cat.values[i] for i, _ in pairs if not cat.public[i] and not vocab[i])
    listed: tuple[str, ...] = ()
    if vocabulary is not None and limits is not None:
        noisy = {cat.values[i]: int(x) for i, x in pairs if vocab[i]}
        mass = sum(max(int(x), 0) for i, x in pairs if not vocab[i])
        listed = tuple(decide_vocabulary(vocabulary, noisy, limits, mass, target))
    keep = set(values) | set(listed)
    records = int(max(sum(int(x) for i, x in pairs if cat.public[i] or cat.values[i] in keep), 0))
    return Listing(sel, values, listed, records, epsilon, delta)


def _two_rounds(learned: Sequence[str], categories: Mapping[str, Categories], budgets: Mapping[str, tuple[float, float]],
                target: str | None, opts: DomainOptions, vocabulary: Vocabularies | None, rng: np.random.Generator,
                accountant: Accountant, step: str) -> dict[str, Listing]:
    """Per-column Laplace partition selection, in two rounds (docs/domain-reference.md, "A budget that fits
    the table").

    Round 1: every learned categorical column at its (ε_j, δ_j) — the predictors at
    (1 − ``opts.second_round``) of theirs, the target at all of its. A predictor is *open* when the
    noisy mass of what round 1 listed is below :data:`OPEN_BELOW` of Ñ, the largest listed mass of
    any column (a noisy record count): post-processing of round 1's output. Round 2: the kept
    share of the predictors' ε and δ, split equally over the open predictors only, runs their
    partition selection again with fresh noise; a column lists what either round listed. Adaptive
    sequential composition: which columns run round 2 is a function of round 1's output, and
    round 2 spends at most the fixed (ε₂, δ₂) whatever it is (Dwork & Roth Thm 3.16; the filter
    of Rogers, Roth, Ullman & Vadhan 2016 for budgets chosen adaptively with a fixed total); with no
    open predictor round 2 spends nothing, and a run without a schema gives what is left to its
    release. The column-level form of the policy mechanisms of Gopi, Gulhane, Kulkarni, Shen,
    Shokouhi & Yekhanin, "Differentially private set union" (ICML 2020): the budget goes to the
    values still under the threshold, not to the columns already listed."""
    share = opts.second_round
    preds = [c for c in learned if c != target]
    if len(preds) < 2:
        share = 0.0  # one predictor: a second round only splits its budget
    out: dict[str, Listing] = {}

    first: dict[str, np.ndarray] = {}  # PRIVATE: every cell's first-round noisy count, for second_round only

    def listing(c: str, sel: Selection, eps: float, d: float) -> Listing:
        lim = vocabulary_thresholds(vocabulary, sel.threshold, epsilon=eps) if vocabulary is not None else None
        return _listing(categories[c], sel, vocabulary, lim, eps, d, c == target)

    for c in learned:
        e, d = budgets[c]
        if c != target and share:
            e, d = e * (1 - share), d * (1 - share)
        sel, first[c] = first_round(categories[c].counts, epsilon=e, delta=d, rng=rng, accountant=accountant,
                                    step=f"{step}: categories of {c}", public=_public(categories[c]))
        out[c] = listing(c, sel, e, d)
    if not share:
        return out
    n_hat = max(p.records for p in out.values())
    # the open predictors, the least listed first; at most as many as leave each OPEN_GAIN times
    # a predictor's one-round ε (more would each get less than one round gave them)
    open_ = sorted((c for c in preds if out[c].records < OPEN_BELOW * n_hat), key=lambda c: (out[c].records, c))
    open_ = open_[:max(1, int(share * len(preds) / OPEN_GAIN))]
    if not open_:
        return out  # round 2's budget is not spent
    e2 = share * math.fsum(budgets[c][0] for c in preds) / len(open_)
    d2 = share * math.fsum(budgets[c][1] for c in preds) / len(open_)
    for c in open_:
        cat, once = categories[c], out[c]
        sel = second_round(cat.counts, first[c], epsilon=e2, first_epsilon=once.epsilon, delta=d2, rng=rng,
                           accountant=accountant, step=f"{step}: categories of {c} (second round)", public=_public(cat))
        again = listing(c, sel, e2, d2)
        first_ = once
        values = (*first_.values, *(v for v in again.values if v not in first_.values))
        listed = (*first_.vocabulary, *(v for v in again.vocabulary if v not in first_.vocabulary))
        out[c] = Listing(first_.selection, values, listed, max(first_.records, again.records),
                         first_.epsilon + e2, first_.delta + d2, again.selection.threshold)
    return out


def _public(cat: Categories) -> np.ndarray:
    """The cells partition selection noises whatever their count: the declared missing tokens
    and the vocabularies' values."""
    return cat.public if cat.vocabulary is None else cat.public | cat.vocabulary


def _interval(node: SplitNode) -> IntervalNode:
    return IntervalNode(node.lo, node.hi, tuple(_interval(c) for c in node.children))


def discover(
    metas: Sequence[ColumnMeta],
    categories: Mapping[str, Categories],
    numbers: Mapping[str, Profile],
    *,
    target: str | None,
    tokens: Sequence[str],
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    options: DomainOptions | None = None,
    step: str = "domain",
    target_epsilon: float | None = None,
    candidates: Sequence[str] = (),
    vocabulary: Vocabularies | None = None,
) -> Discovery:
    """Learn every used column's domain; spends ``epsilon`` and ``delta`` (module docstring).

    ``candidates``: the public missing tokens a released value is read as missing for
    (:func:`released_tokens`; a run that learns its tokens passes
    :data:`~dpkit.domain.metadata.MISSING_CANDIDATES`, one that declared them ``()``). A
    predictor's released token joins the schema's ``missing_tokens`` and sets its ``missing:
    true``; the target's is no class (its records read as missing, as an unreleased class's).

    ``vocabulary``: the public vocabularies (:mod:`dpkit.domain.vocabulary`) the categories were
    counted with (``categories[c].vocabulary``): their cells are public, noised with the column's
    noise and listed by the pure-ε rule of :func:`dpkit.domain.vocabulary.decide`.

    A predictor with no surviving value is refused (DataError naming it and the public
    threshold) or, with ``options.empty == "ignore"``, declared ``ignore``; the target with
    none is always refused. Such a refusal comes after the noise is drawn: it is itself a
    DP outcome (post-processing), and the spend stays on the record.
    """
    opts = options or DomainOptions()
    budgets = column_budgets(metas, epsilon, delta, opts, target, target_epsilon)
    cats = _select_categories(metas, categories, budgets, delta, target, opts, vocabulary, rng, accountant, step)
    columns: dict[str, Column] = {}
    notes: list[ColumnNote] = []
    record_estimates: list[int] = []
    failures: list[str] = []
    for m in metas:
        public = _public_column(m, target, m.name in budgets)
        if public is not None:
            columns[m.name], note = public
            notes.append(note)
            continue
        eps_j, delta_j = budgets[m.name]
        if m.kind == "categorical":
            pick = cats.pick(m.name, categories[m.name], vocabulary, target)
            record_estimates.append(pick.records)
            col, note, failure = _categorical(m, pick, cats.epsilon_delta(m.name, pick), candidates, target, opts)
            if col is not None:
                columns[m.name] = col
            if failure is not None:
                failures.append(failure)
            notes.append(note)
        elif m.kind in TIME_KINDS:
            columns[m.name], learned = _time(m, numbers[m.name], eps_j, rng, accountant, f"{step}: {m.name}")
            notes.append(ColumnNote(m.name, m.kind, learned, eps_j, 0.0))
        else:
            col, learned = _numeric(m, numbers[m.name], eps_j, opts, rng, accountant, f"{step}: {m.name}")
            columns[m.name] = col if col is not None else IgnoredColumn(m.name)
            notes.append(ColumnNote(m.name, "numeric", learned, eps_j, 0.0, left_out=col is None))
    if failures:
        _refuse(failures, notes, target)
    schema = _learned_schema(columns, notes, metas, target, tokens, candidates, opts)
    return Discovery(schema, notes, max(record_estimates) if record_estimates else None,
                     "discrete Gaussian" if cats.joint else "discrete Laplace", "gaussian" if cats.joint else "laplace",
                     vocabulary is not None and bool(cats.learned))


@dataclass
class _Categories:
    """The categorical columns' selections, drawn before the columns are walked: per column
    (one or two rounds of the Laplace, ``picks``) or all at once (the joint Gaussian, ``joint``,
    with its vocabularies' thresholds ``limits``); ``epsilon`` is their total ε."""

    learned: list[str]
    epsilon: float
    delta: float
    picks: dict[str, Listing]
    joint: dict[str, Selection]
    limits: dict[str, Thresholds]

    def pick(self, name: str, cat: Categories, vocabulary: Vocabularies | None, target: str | None) -> Listing:
        if self.joint:  # drawn all columns at once
            return _listing(cat, self.joint[name], vocabulary, self.limits.get(name), target=name == target)
        return self.picks[name]  # drawn in one or two rounds (_two_rounds)

    def epsilon_delta(self, name: str, pick: Listing) -> tuple[float, float]:
        """The (ε, δ) a column's note shows: the shared one of the joint Gaussian, or its own."""
        return (self.epsilon, self.delta) if self.joint else (pick.epsilon, pick.delta)


def _select_categories(metas: Sequence[ColumnMeta], categories: Mapping[str, Categories],
                       budgets: Mapping[str, tuple[float, float]], delta: float, target: str | None,
                       opts: DomainOptions, vocabulary: Vocabularies | None, rng: np.random.Generator,
                       accountant: Accountant, step: str) -> _Categories:
    """Partition selection of every learned categorical column (its draws come first)."""
    learned_cats = [m.name for m in metas if m.kind == "categorical" and m.name in budgets]
    cat_weights = [opts.target_weight if c == target else 1.0 for c in learned_cats]
    cat_eps = math.fsum(budgets[c][0] for c in learned_cats)
    rho_weights = [w * w for w in cat_weights]
    mechanism = opts.partition
    if learned_cats and mechanism == "auto":
        # public: the learned columns' kinds (declared or DP outcomes), their weights, ε and δ
        mechanism = choose_partition([budgets[c] for c in learned_cats], rho_weights, cat_eps, delta)
    joint: dict[str, Selection] = {}
    limits: dict[str, Thresholds] = {}
    picks: dict[str, Listing] = {}
    if learned_cats and mechanism == "laplace":
        picks = _two_rounds(learned_cats, categories, budgets, target, opts, vocabulary, rng, accountant, step)
    if learned_cats and mechanism == "gaussian":
        sels = joint_partition_selection(
            [categories[c].counts for c in learned_cats], rho_weights, epsilon=cat_eps,
            delta=delta, rng=rng, accountant=accountant, step=f"{step}: categories of {', '.join(learned_cats)}",
            public=[_public(categories[c]) for c in learned_cats])
        joint = dict(zip(learned_cats, sels, strict=True))
        if vocabulary is not None:
            plan = gaussian_plan(rho_weights, cat_eps, delta)
            limits = {c: vocabulary_thresholds(vocabulary, tau, sigma2=s2)
                      for c, s2, tau in zip(learned_cats, plan.sigma2, plan.thresholds, strict=True)}
    return _Categories(learned_cats, cat_eps, delta, picks, joint, limits)


def _public_column(m: ColumnMeta, target: str | None, learned: bool) -> tuple[Column, ColumnNote] | None:
    """The column of what the user declared public (ignored, a value list, bounds), or None when
    its domain is to be learned."""
    if m.kind == "ignore":
        return IgnoredColumn(m.name), ColumnNote(m.name, "ignore", "public: ignored")
    if m.kind == "categorical" and m.values is not None:
        col = (_flat(m.name, m.values, other=None, unlisted="missing") if m.name == target else
               _flat(m.name, [*m.values, _other_name(m.values)], other=_other_name(m.values), unlisted="other"))
        return col, ColumnNote(m.name, "public", "public: the value list was given")
    if m.kind in TIME_KINDS and m.bounds is not None and not learned:
        return (NumericColumn(m.name, m.bounds[0], m.bounds[1], True, time=m.kind, unparsable="missing"),
                ColumnNote(m.name, "public", "public: the bounds were given"))
    if m.kind == "numeric" and m.bounds is not None and not learned:
        return (NumericColumn(m.name, m.bounds[0], m.bounds[1], m.integer, unparsable="missing"),
                ColumnNote(m.name, "public", "public: the bounds were given"))
    return None


def _categorical(m: ColumnMeta, pick: Listing, eps_delta: tuple[float, float], candidates: Sequence[str],
                 target: str | None, opts: DomainOptions) -> tuple[Column | None, ColumnNote, str | None]:
    """(the column, its note, a failure to report or None) of a categorical column from its
    selection — post-processing only: nothing is drawn here."""
    sel = pick.selection
    kept, from_vocabulary = [*pick.values, *pick.vocabulary], list(pick.vocabulary)
    # a released public missing token is the column's missing value, not a category
    # (post-processing of the release with a public list: released_tokens)
    kept, found = released_tokens(kept, candidates)
    if m.name == target:
        # an empty cell is never a class (a public rule, post-processing of the selection):
        # a target with NaN in 5 % of a DataFrame's rows released a class '' that a model
        # then predicted; those records are read as missing (dropped, with the warning),
        # as are a released token's (it is left out of the classes: unlisted: missing)
        kept = [v for v in kept if v != ""]
    kept.sort(key=str)
    note = ColumnNote(m.name, "categorical", "", *eps_delta, sel.threshold,
                      missing_tokens=found if m.name != target else ())
    if not kept and note.missing_tokens:
        # only a missing token was released: the column is '(other)' and its missing
        # value (a fact about missingness, released): kept, not refused
        other = _other_name(())
        note.learned = (f"no value but the missing token(s) {', '.join(map(repr, found))} "
                        f"(partition selection, threshold {sel.threshold}); {other!r} for every other value")
        return _flat(m.name, [other], other=other, unlisted="other"), note, None
    if not kept:
        if m.name == target:
            note.learned = "no class survived"
            return None, note, f"the target {m.name!r}"
        if opts.empty == "ignore":
            note.learned = f"no value held by enough records (threshold {sel.threshold}): ignored"
            note.left_out = True
            return IgnoredColumn(m.name), note, None
        note.learned = "no value survived"
        return None, note, repr(m.name)
    if m.name == target and len(kept) < 2:
        # a release (or model) of one class predicts it for everyone: refused, naming
        # the class that survived (released under DP, as every value of a schema)
        raise DataError(
            f"only one class of the target {m.name!r} ({kept[0]!r}) is held by enough records to be "
            f"released at this epsilon/delta (threshold {sel.threshold} records), and a release needs "
            "two: give the class names as public values if they are, or raise epsilon or the domain share "
            "(docs/domain.md, \"Small and imbalanced tables\")")
    at = f"threshold {sel.threshold}" + (f", then {pick.second} in a second round" if pick.second else "")
    if m.name == target:
        col = _flat(m.name, kept, other=None, unlisted="missing")
        note.learned = (f"{len(kept)} classes (partition selection, {at}); "
                        "records of any other class are read as missing")
    else:
        other = _other_name(kept)
        col = _flat(m.name, [*kept, other], other=other, unlisted="other")
        note.learned = (f"{len(kept)} values (partition selection, {at}) "
                        f"+ {other!r} for every other value")
    if from_vocabulary:
        note.learned += (f"; {', '.join(map(repr, from_vocabulary))} of a public vocabulary (its noisy counts "
                         "cleared a pure-epsilon threshold)")
    if found:
        note.learned += (f"; {', '.join(map(repr, found))} released too, a token of the public missing list: "
                         + ("read as a missing class (its records dropped)" if m.name == target else
                            "the column's missing token (post-processing, nothing spent)"))
    return col, note, None


def _refuse(failures: list[str], notes: list[ColumnNote], target: str | None) -> None:
    """Refuse the run: a column (or the target) with no value released — after the noise is
    drawn, so a DP outcome, the spend on the record."""
    thresholds = sorted({n.threshold for n in notes if n.threshold is not None and n.learned.startswith("no ")})
    at = f"at this epsilon/delta (threshold {', '.join(map(str, thresholds))} records)"
    if failures[0].startswith("the target"):
        # the target cannot be left out: say what can be done
        tau = next((n.threshold for n in notes if n.name == target and n.threshold is not None), None)
        err = DataError(
            f"no class of {failures[0]} is held by enough records to be released at this epsilon/delta "
            f"(threshold {tau} records): the data needs more "
            "records per class, or raise epsilon, or give the class names as public with values= "
            "(nothing is spent on them)")
        err.param = "values"  # type: ignore[attr-defined]
        raise err
    err = DataError(
        f"no value of column(s) {', '.join(failures)} is held by enough records to be released "
        f"{at}: raise epsilon, or declare the column ignored (ignore='COLUMN')"
    )
    err.param = "ignore"  # type: ignore[attr-defined]  # the CLI names its flag instead
    raise err


def _learned_schema(columns: dict[str, Column], notes: list[ColumnNote], metas: Sequence[ColumnMeta],
                    target: str | None, tokens: Sequence[str], candidates: Sequence[str],
                    opts: DomainOptions) -> Schema:
    """The learned schema: each column's missingness as established from the metadata's noisy
    counts (post-processing, dpkit.domain.metadata.holds_missing) — under keep, only those
    columns get a (missing) leaf or bucket — and the missing tokens."""
    import dataclasses

    flags = {m.name: m.missing for m in metas if m.missing is not None and m.name != target}
    # a token partition selection released in a column: missing there, as a token the metadata
    # learned in it (metadata.holds_missing), and one of the schema's tokens (the list is global)
    released = {n.name: n.missing_tokens for n in notes if n.missing_tokens}
    flags |= dict.fromkeys(released, True)
    if released:
        new = {t for ts in released.values() for t in ts}
        tokens = [*(t for t in candidates if t in tokens or t in new), *(t for t in tokens if t not in candidates)]
    # a numeric/date column's bucket given by the public rule (metadata.structural_missing)
    structural = {m.name for m in metas if m.missing_structural}
    columns = {n: dataclasses.replace(c, holds_missing=flags[n],
                                      **({"structural": True} if n in structural and isinstance(c, NumericColumn) else {}))
               if n in flags and isinstance(c, CategoricalColumn | NumericColumn) else c
               for n, c in columns.items()}
    # a numeric column reads a non-number as missing, a date column a non-date (unparsable:
    # missing), which must then drop the row, never refuse the run on the exact data
    numeric = any(isinstance(c, NumericColumn) for c in columns.values())
    return Schema(columns=columns, target=target, missing_tokens=tuple(tokens),
                  missing_policy=opts.missing_policy if tokens or target is not None or numeric else "error",
                  path="<learned schema>", learned=True)


#: the share of a numeric column's bounds ε for a noisy count ñ of its numbers when the metadata
#: has none (every part declared): the reward's window is a share of ñ
NUMBER_COUNT_SHARE = 0.05
#: a numeric column is left out when its missing values are established, its noisy count of
#: numbers is below this share of its noisy cells (mostly missing) ...
FEW_SHARE = 0.5
#: ... and too small for the bounds to land around the data: ε_b·ñ below twice 2·ln|G| ≈ 12 (the
#: exponential mechanism's error bound over the |G|²/2 pairs of the grid; twice, as ñ is a noisy
#: count of σ ≈ 400 on a 5,000-row table: a 94 %-NULL column's 200 numbers pass 12 in one run of four)
FEW_EPS_N = 25.0


def _numeric(m: ColumnMeta, prof: Profile, eps: float, opts: DomainOptions, rng: np.random.Generator,
             accountant: Accountant, step: str) -> tuple[NumericColumn | None, str]:
    """Bounds (and a hierarchy of split points) of one numeric column; (None, why) when it is left
    out for too few values (the metadata's noisy counts: :data:`FEW_SHARE`, :data:`FEW_EPS_N`)."""
    if m.bounds is not None:  # public bounds: the whole ε learns the split points
        lo, hi = m.bounds
        tree = split_tree(prof, lo, hi, opts.levels, epsilon=eps, integer=m.integer, rng=rng,
                          accountant=accountant, step=step)
        hierarchy = _interval(tree) if tree.children else None
        return (NumericColumn(m.name, lo, hi, m.integer, hierarchy, unparsable="missing"),
                f"public bounds (given); {len(tree.points())} split points (DP quantiles)")
    eps_bounds = eps * (1 - opts.split_share) if opts.levels > 0 else eps
    # ñ: the metadata's noisy count of the column's numbers (post-processing, nothing spent), else
    # (every part declared) a count of its own
    n_hat = m.noisy_numbers
    eps_count = eps_bounds * NUMBER_COUNT_SHARE if opts.bounds_reward and n_hat is None else 0.0
    eps_draw = eps_bounds - eps_count
    if eps_count > 0:
        n_hat = int(discrete_laplace(prof.n, epsilon=eps_count, rng=rng, accountant=accountant,
                                     step=f"{step} size")[()])
    # a column mostly missing (a 94 %-NULL one) with too few numbers for its bounds, which would be
    # the prior's ([2.5e13, 1e14] from a few hundred values): its missing values established
    # (metadata.holds_missing: thousands of them), fewer numbers than missing values and ε·ñ too
    # small for the bounds to land. Decided on the metadata's noisy counts only (post-processing):
    # whether it is left out depends on one record as those counts do, and the message names no count
    if (opts.few_values and m.missing is True and not m.missing_structural and m.noisy_numbers is not None
            and m.noisy_others is not None
            and m.noisy_numbers < FEW_SHARE * (m.noisy_numbers + max(m.noisy_others, 0))
            and eps_draw * m.noisy_numbers < FEW_EPS_N):
        return None, ("left out: too few values to learn bounds from (on its noisy counts, mostly missing and too "
                      "few numbers for the bounds); give public bounds")
    # the reals' grid below 1 (10^-4 … 0.1) only for a column whose fractions are established or
    # declared: a learned flag is a coin flip when the column's non-zero values are fewer than the
    # noise (a rare 0/1 flag, a count that is mostly 0: whole > fraction decided by the noise), and
    # on the reals' grid such a column took [0, 0.001] — five steps to reach 1, more than clipping
    # its few ones. Whole-number bounds still hold a fraction column ([0, 1] for a share): a
    # function of the noisy counts already drawn (post-processing)
    grid = nice_grid(m.integer or m.fractions is False)
    # with the reward the mechanism's ε per record is halved (not monotone): so is γ per grid
    # step, which keeps the width's price against clipping as it was (a zero-heavy column's range
    # from 0 to its bulk); the terms on 0 as the lower bound stay whole (they hold lo at 0 against
    # the prior's geometric tail below it, which a smaller γ lengthens)
    halve = 0.5 if opts.bounds_reward else 1.0
    lo, hi = bounds_on_grid(prof, grid, epsilon=eps_draw, rng=rng, accountant=accountant, step=f"{step} bounds",
                            gamma=opts.bound_prior * (opts.lower_prior if opts.bounds_reward else 1.0),
                            gamma_upper=opts.bound_prior * halve, zero_bonus=opts.zero_bonus,
                            negative_lower=opts.negative_lower,
                            reward=reward_window(n_hat) if opts.bounds_reward and n_hat is not None else None,
                            below_top=opts.integer_top and bool(m.integer or m.fractions is False))
    learned = "bounds (DP quantiles on the public nice grid)"
    hierarchy = None
    if opts.levels > 0:
        tree = split_tree(prof, lo, hi, opts.levels, epsilon=eps - eps_bounds, integer=m.integer, rng=rng,
                          accountant=accountant, step=step)
        if tree.children:
            hierarchy = _interval(tree)
            learned = f"bounds and {len(tree.points())} split points (DP quantiles)"
    # a bound at 0 (a count, an amount, mostly zeros): offer publish a split separating 0 from
    # the rest — a function of the learned bounds only (post-processing, nothing spent)
    edge = zero_edge(lo, hi, m.integer) if hierarchy is None else None
    points: tuple[float, ...] = (edge,) if edge is not None else ()
    if points:
        learned += f"; a split point at {edge:g} offered beside the bound 0"
    # bounds holding 0 span decades (a zero-heavy or skewed column, or a loose bound: only the
    # prior places it past the data): log-spaced points too, so a split can land in each decade
    # between 0 and the bound — again a function of the learned bounds only (post-processing)
    decades = decade_points(lo, hi, m.integer) if hierarchy is None and opts.decade_points else ()
    if decades:
        points = tuple(sorted({*points, *decades}))
        learned += "; log-spaced split points (1, 2, 5 × 10^k) offered between 0 and the bounds"
    return NumericColumn(m.name, lo, hi, m.integer, hierarchy, unparsable="missing", points=points), learned


#: a declared date column whose noisy count of dates ñ has ε_c·ñ below this gets a warning (ε_c
#: the count's ε): with no date at all P(warning) = 1 − e^{−3}/2 ≈ 97.5 %; with ε_c·n ≥ 6 dates
#: ≤ e^{−3}/2
NO_DATES = 3.0


def _few_dates(m: ColumnMeta, eps_count: float, n_hat: int) -> bool:
    """Does a declared date column hold few or no dates? On the metadata's noisy shape counts when
    the column was profiled: fewer dates than values that are neither a date nor a missing token
    (both noised alike, so the comparison does not hang on ε; a column of dates does not warn
    however small its ε). Otherwise on the size count's ñ: ε_c·ñ below :data:`NO_DATES`. Both are
    post-processing of counts already drawn."""
    if m.noisy_numbers is not None and m.noisy_unread is not None:
        return m.noisy_numbers < m.noisy_unread
    return eps_count * n_hat < NO_DATES


def _warn_no_dates(m: ColumnMeta) -> None:
    """Warn that a column declared a date holds (almost) no date. Decided on the noisy count ñ
    already drawn for the month refinement (post-processing: nothing more is spent, and the
    warning — which a log or a notebook keeps — says no more than the released count would):
    the exact count would tell a run with one parsable date from one with none."""
    from dpkit.errors import DpkitWarning, warn

    what = {"date": "ISO 8601 dates (YYYY-MM-DD)", "timestamp": "ISO 8601 timestamps (YYYY-MM-DDTHH:MM:SS)"}[m.kind]
    warn(DpkitWarning(f"column {m.name!r} is declared a {m.kind} (date=) but few or none of its values are {what}, "
                      "judged on a noisy count: the others are read as missing; check the column's format",
                      param="date"))


def _time(m: ColumnMeta, prof: Profile, eps: float, rng: np.random.Generator, accountant: Accountant,
          step: str) -> tuple[NumericColumn, str]:
    """Bounds of a date/timestamp column (days/seconds since 1970) on the public calendar grid.

    The numeric mechanism (:func:`~dpkit.privacy.mechanisms.quantiles.bounds_on_grid`: both bounds at
    once, utility −#clipped, sensitivity 1, monotone) over every year start 1800–2200
    (:func:`dpkit.schema.dates.bounds_grid`), with a width prior of γ = :data:`YEAR_PRIOR` nats per
    year; publish's calendar grid then splits months and days inside the bounds. The column
    reads what is not a date as missing (``unparsable: missing``)."""
    grid = bounds_grid(m.kind)
    eps_refine, eps_count = eps * REFINE_SHARE, eps * COUNT_SHARE
    lo, hi = bounds_on_grid(prof, grid, epsilon=eps - eps_refine - eps_count, rng=rng, accountant=accountant,
                            step=f"{step} bounds", gamma=YEAR_PRIOR)
    # a noisy count of the column's dates says whether a month draw can resolve anything
    # (ε·ñ large enough: with few records its firm prior per month wins over the clipping and
    # collapses the bounds onto a few months; measured: 300 dates over 8 months at ε_j = 0.05)
    n_hat = int(discrete_laplace(prof.n, epsilon=eps_count, rng=rng, accountant=accountant,
                                 step=f"{step} size")[()])
    if "type" in m.declared and _few_dates(m, eps_count, n_hat):
        _warn_no_dates(m)
    learned = "bounds (DP quantiles on the public calendar grid of year starts)"
    # a second draw on the month starts inside the year-start bounds (a function of the released
    # bounds and count: sequential composition), so a column concentrated in a few months gets
    # quarter or month bounds; its width prior per month is firm because its window is local
    span = (hi - lo) / (1 if m.kind == "date" else 86400)
    if span <= REFINE_YEARS * 366 and eps_refine * n_hat >= REFINE_MIN:
        months, bonus = refine_grid(lo, hi, m.kind)
        lo, hi = bounds_on_grid(prof, months, epsilon=eps_refine, rng=rng, accountant=accountant,
                                step=f"{step} bounds refined", gamma=MONTH_PRIOR, point_bonus=bonus)
        learned = "bounds (DP quantiles on the public calendar grid of year starts, then of month starts inside them)"
    return NumericColumn(m.name, lo, hi, True, time=m.kind, unparsable="missing"), learned
