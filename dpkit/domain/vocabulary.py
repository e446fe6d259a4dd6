"""Public vocabularies: value lists a run without a schema may name whatever the data holds.

A yes/no column's values, the classes of a 0/1 target, month and weekday names are public: a
person writing the schema would list them without looking. Partition selection
(:mod:`dpkit.privacy.mechanisms.partition`) treats every value as private, so its δ-threshold (≈ ln(1/δ_j)/ε_j
records) also applies to ``Yes`` and ``1``, and a 0/1 target with 5 % positives on a 5k-row table
was refused. Here every value of every vocabulary (:data:`DEFAULT_FILE`, extended by a user's
file), in each of its public spellings (:func:`spellings`), is a **public cell** of every learned
categorical column (docs/domain-reference.md, "Public vocabularies"):

* its count — 0 when the data does not hold it — is noised with the column's own partition
  selection noise, like the declared missing tokens' public cells. Which cells exist is fixed
  before the data is read, so for these cells the mechanism is the geometric (or discrete
  Gaussian) mechanism on a public histogram: pure ε_j (ρ under the Gaussian), no δ; the column's
  other values keep partition selection. One record is in one cell of the column, so the whole
  column — vocabulary cells and private values together — is partition selection with a larger
  public set, (ε_j, δ_j)-DP by the same proof (DVGM Thm 1 with public partitions, as
  :func:`~dpkit.privacy.mechanisms.partition.partition_selection`'s ``public`` argument).
* which vocabulary values are listed is decided from those noisy counts only (post-processing:
  :func:`decide`): a vocabulary (in one spelling) whose k noisy counts sum to at least the
  pure-ε threshold of a sum of k cells, and to at least :data:`COVERAGE` of the column's listed
  noisy mass, is listed whole — so the rare class of a 0/1 target comes with the common one —,
  and any other vocabulary value whose own noisy count reaches the column's partition-selection
  threshold (as if it were private). The coverage keeps single letters from matching by accident:
  ``N`` of a compass column (E, N, S, W) would bring an empty ``Y`` with it. The sum's threshold is set so
  that a column matches a vocabulary the data does not hold with probability at most
  :data:`FALSE_POSITIVE` (a union bound over its vocabularies): a matter of utility (an empty
  category, or an empty class of the target), not of privacy, since every candidate is public.

Overlapping vocabularies (``F`` is in ``T/F`` and ``M/F``) are matched greedily, the largest
noisy sum first, a vocabulary sharing a value with one already matched left out.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpkit.errors import DpkitUsageError

#: the package's vocabulary file (shipped as package data)
DEFAULT_FILE = Path(__file__).with_name("vocabularies.yaml")
#: the probability that a column matches a vocabulary its data does not hold (a union bound over
#: the vocabularies; utility only: every candidate is public)
FALSE_POSITIVE = 0.01
#: a vocabulary is matched only when its noisy counts hold at least this share of the column's
#: listed noisy mass (the released values', its own included)
COVERAGE = 0.5
#: the target's: a class the data does not hold is worse than an empty category (a release or a
#: model with a class of no record), so a vocabulary must hold nearly all of the target (a -1/1
#: target does not bring 0 with its 1), and each of its classes must clear :attr:`Thresholds.present`
TARGET_COVERAGE = 0.9


@dataclass(frozen=True)
class Vocabularies:
    """Public value lists (``groups``: each a tuple of values in one spelling) and every candidate
    value they name (``values``, in a fixed order)."""

    groups: tuple[tuple[str, ...], ...]

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for g in self.groups for v in g))



def spellings(values: Sequence[str]) -> list[tuple[str, ...]]:
    """A vocabulary in each public spelling: as written, lower case, UPPER case, Capitalized."""
    out = [tuple(values), tuple(v.lower() for v in values), tuple(v.upper() for v in values),
           tuple(v[:1].upper() + v[1:].lower() for v in values)]
    return list(dict.fromkeys(out))


def _read(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as e:
        raise DpkitUsageError(f"vocabulary file {os.fspath(path)!r} cannot be read: {e.strerror or e}",
                              param="vocabulary") from None
    except yaml.YAMLError as e:
        raise DpkitUsageError(f"vocabulary file {os.fspath(path)!r} is not valid YAML ({str(e).splitlines()[0]}): "
                              "write one 'name: [value, value, ...]' a line", param="vocabulary") from None
    if not isinstance(data, Mapping) or not data:
        raise DpkitUsageError(f"vocabulary file {os.fspath(path)!r} must map names to lists of values "
                              "('yes-no: [yes, no]')", param="vocabulary")
    out = {}
    for name, vals in data.items():
        if not isinstance(vals, list) or not vals or not all(isinstance(v, str | int | bool) for v in vals):
            raise DpkitUsageError(f"vocabulary file {os.fspath(path)!r}: {name!r} must be a non-empty list of values",
                                  param="vocabulary")
        out[str(name)] = [str(v).strip() for v in vals]
    return out


@functools.lru_cache(maxsize=8)
def _load(extra: str | None) -> Vocabularies:
    lists = dict(_read(DEFAULT_FILE))
    if extra is not None:
        lists.update({f"user:{k}": v for k, v in _read(extra).items()})
    groups = [g for vals in lists.values() for g in spellings(vals)]
    return Vocabularies(tuple(dict.fromkeys(groups)))


def load(vocabulary: str | os.PathLike[str] | None = None) -> Vocabularies:
    """The package's vocabularies, extended by the file ``vocabulary`` (YAML: name → list of values)."""
    return _load(None if vocabulary is None else os.fspath(vocabulary))


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of one column's vocabulary decisions (public: from its noise)."""

    #: a single vocabulary value outside a matched vocabulary: the column's partition-selection τ
    value: int
    #: k -> the pure-ε threshold of a sum of k noisy cells
    group: Mapping[int, int]
    #: the target's classes of a matched vocabulary: a cell at 0 reaches it with probability
    #: ≤ FALSE_POSITIVE (a pure-ε test that the class is held at all)
    present: int = 0


def thresholds(vocab: Vocabularies, tau: int, *, epsilon: float | None = None, sigma2: object = None) -> Thresholds:
    """The thresholds for a column whose partition selection has threshold ``tau`` and noise DLap
    at ``epsilon`` (the rate :func:`~dpkit.privacy.mechanisms.partition.partition_selection` uses) or the
    discrete Gaussian of variance ``sigma2``: a sum of k cells the data leaves at 0 reaches
    ``group[k]`` with probability ≤ :data:`FALSE_POSITIVE` / (the number of vocabularies)
    (:meth:`dpkit.domain.metadata.NoisePlan.sum_threshold`'s Chernoff bounds)."""
    from dpkit.privacy.mechanisms.partition import (
        gaussian_threshold,
        noise_sum_threshold,
        threshold,
    )

    b = FALSE_POSITIVE / len(vocab.groups)
    sizes = sorted({len(g) for g in vocab.groups})
    if sigma2 is not None:
        one = gaussian_threshold(sigma2, b)  # type: ignore[arg-type]
        return Thresholds(tau, {k: noise_sum_threshold("gaussian", 0.0, sigma2, k, b) if k > 1 else one  # type: ignore[arg-type]
                                for k in sizes}, gaussian_threshold(sigma2, FALSE_POSITIVE))  # type: ignore[arg-type]
    if epsilon is None:
        raise DpkitUsageError("vocabulary thresholds need the column's epsilon or sigma2")
    one = threshold(epsilon, b)  # P(Z ≥ one − 1) ≤ b: a cell at 0 listed iff Z ≥ one, rarer still
    return Thresholds(tau, {k: noise_sum_threshold("laplace", epsilon, None, k, b) if k > 1 else one for k in sizes},
                      threshold(epsilon, FALSE_POSITIVE))


def decide(vocab: Vocabularies, noisy: Mapping[str, int], limits: Thresholds, listed: int = 0,
           target: bool = False) -> list[str]:
    """The vocabulary values a column lists, from the noisy counts of its vocabulary cells
    (``noisy``: value → noisy count; every candidate value) and ``listed``, the noisy mass of the
    column's other released cells (its released values and missing tokens) — post-processing only.

    Greedy, the largest noisy sum first: a group whose sum reaches ``limits.group[k]`` and
    :data:`COVERAGE` of the column's listed mass (``listed``, the vocabulary values that clear
    ``limits.value`` on their own, and the group's), and shares no value with a group already
    matched, is listed whole; then each remaining value whose own noisy count reaches
    ``limits.value`` (the column's partition-selection threshold). For the ``target``, a vocabulary
    must hold :data:`TARGET_COVERAGE` of the listed mass, and only its classes whose own noisy
    count reaches ``limits.present`` are listed."""
    # a vocabulary value that is one of the column's declared missing tokens has no cell here: it
    # is a token, never a category, and a vocabulary holding it is not matched
    groups = [(i, g) for i, g in enumerate(vocab.groups) if all(v in noisy for v in g)]
    sums = sorted(((sum(noisy[v] for v in g), i) for i, g in groups), key=lambda x: (-x[0], x[1]))
    alone = {v for v in vocab.values if v in noisy and noisy[v] >= limits.value}
    base = max(listed, 0) + sum(noisy[v] for v in alone)
    taken: set[str] = set()
    out: list[str] = []
    for total, i in sums:
        g = vocab.groups[i]
        if total < limits.group[len(g)]:
            continue
        mass = base + sum(max(noisy[v], 0) for v in g if v not in alone)
        if total < (TARGET_COVERAGE if target else COVERAGE) * mass or taken.intersection(g):
            continue
        taken.update(g)
        out.extend(v for v in g if not target or noisy[v] >= limits.present)
    out.extend(v for v in vocab.values if v not in taken and v in alone)
    return list(dict.fromkeys(out))


def cells(values: Sequence[str], vocab: Vocabularies | None) -> tuple[list[str], np.ndarray]:
    """A column's cells with the vocabulary's appended (those the data does not hold, count 0), and
    the mask of vocabulary cells. ``values``: the column's cells as :func:`dpkit.domain.profile.categories`
    orders them."""
    if vocab is None:
        return list(values), np.zeros(len(values), dtype=bool)
    have = set(values)
    order = [*values, *(v for v in vocab.values if v not in have)]
    cand = set(vocab.values)
    return order, np.fromiter((v in cand for v in order), dtype=bool, count=len(order))

