"""The one check of each parameter every front end shares: ε, δ, shares of ε, k, seeds,
caps, and the keywords a function takes.

One rule and one message per parameter, wherever it is given (a library call, a flag, a
config file, a ledger): each function returns the value as the run uses it, or raises a
:class:`~dpkit.errors.DpkitUsageError` (a ``ValueError``; a wrong type is also a
``TypeError``) naming the parameter (``param=``), so that the CLI can write its flag instead.

Nothing here imports numpy: ``import dpkit`` and ``dpkit --help`` stay light.
"""

from __future__ import annotations

import difflib
import functools
import math
import numbers
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from dpkit.errors import DpkitUsageError, ParameterTypeError

F = TypeVar("F", bound=Callable[..., Any])

#: the largest δ a run accepts: a δ near 1/N lets a mechanism release a record's data outright
MAX_DELTA = 1e-3

#: a secret key: "0x" + 128 to 256 bits in hex
KEY = re.compile(r"0x[0-9a-f]{32,64}")
#: a key below 2^100, or written with fewer distinct hex digits, was not drawn at random
WEAK_KEY_BITS = 100
MIN_KEY_DIGITS = 8
HOW_TO_KEY = "make one with: openssl rand -hex 16 (and 0x in front)"


def _number(value: object, bad: str, name: str) -> float:
    """``value`` as a float (a bool or a non-number is refused with ``bad``)."""
    if isinstance(value, bool):
        raise DpkitUsageError(bad, param=name)
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise DpkitUsageError(bad, param=name) from None


def epsilon(value: object, name: str = "epsilon") -> float:
    """ε (or any privacy budget, a ledger's cap): a finite number > 0."""
    eps = _number(value, f"{name} must be a number > 0, got {value!r}", name)
    if not (math.isfinite(eps) and eps > 0):
        raise DpkitUsageError(f"{name} must be a finite number > 0, got {value!r}", param=name)
    return eps


def delta(value: object, name: str = "delta", *, zero: bool = False) -> float:
    """A run's δ: 0 < δ ≤ :data:`MAX_DELTA` (``zero``: 0 too, a pure-ε run)."""
    low = "0 (pure epsilon) or a number > 0" if zero else "a number > 0"
    bad = f"{name} must be {low} and at most {MAX_DELTA:g} (e.g. 1e-6), got {value!r}"
    d = _number(value, bad, name)
    if not (math.isfinite(d) and (0 < d <= MAX_DELTA or (zero and d == 0))):
        raise DpkitUsageError(bad, param=name)
    return d


def mechanism_delta(value: object, name: str = "delta", *, zero: bool = False) -> float:
    """The δ a mechanism or an accountant is handed: 0 < δ < 1 (``zero``: 0 too). A run's
    own δ is checked by :func:`delta` first; this only keeps the mathematics defined."""
    low = "0 <=" if zero else "0 <"
    bad = f"{name} must be a number with {low} {name} < 1, got {value!r}"
    d = _number(value, bad, name)
    if not (math.isfinite(d) and (0 < d < 1 or (zero and d == 0))):
        raise DpkitUsageError(bad, param=name)
    return d


def share(value: object, name: str = "domain_share") -> float:
    """A share of ε: strictly between 0 and 1."""
    bad = f"{name} must be a number between 0 and 1 (exclusive), got {value!r}"
    s = _number(value, bad, name)
    if not (math.isfinite(s) and 0 < s < 1):
        raise DpkitUsageError(bad, param=name)
    return s


def k(value: object, name: str = "k") -> int:
    """A count of clusters, or the k of k-anonymity: an integer ≥ 1."""
    bad = f"{name} must be ≥ 1 (an integer), got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(bad, param=name)
    if int(value) < 1:
        raise DpkitUsageError(bad, param=name)
    return int(value)


def cap(value: object, name: str = "cap") -> float:
    """A ledger's ε cap: a finite number > 0 (the rule of :func:`epsilon`)."""
    return epsilon(value, name)


def delta_cap(value: object, name: str = "delta_cap") -> float | None:
    """A ledger's δ cap (None: the data set's runs may spend no δ): 0 < cap < 1 — a total over
    runs, each of which :func:`delta` bounds."""
    if value is None:
        return None
    bad = f"{name} must be a number in (0, 1), got {value!r}"
    c = _number(value, bad, name)
    if not 0 < c < 1:
        raise DpkitUsageError(bad, param=name)
    return c


def is_key(value: object) -> bool:
    """True for a ≥128-bit hex key (a seeded run that keeps its ε-DP guarantee)."""
    return isinstance(value, str) and KEY.fullmatch(value) is not None


def seed(value: object, name: str = "seed") -> int | str:
    """A seed as a non-negative int, or as a normalised key ``0x…`` (32–64 hex digits).

    Anything else — negative, fractional, a short hex string, a key that is plainly not random —
    is refused, naming it.
    """
    bad = f"{name} must be a non-negative integer or a key of 0x + 32 to 64 hex digits, got {value!r}"
    if isinstance(value, bool):
        raise DpkitUsageError(bad, param=name)
    if isinstance(value, str) and value.strip().lower().startswith("0x"):
        key = value.strip().lower()
        if not is_key(key):
            raise DpkitUsageError(bad, param=name)
        # a key is only as strong as its randomness: 0x000…0003 is a seed in disguise
        # (docs/ledger.md, "seeded runs"); a random 128-bit key fails either test with odds of about 2^-24
        if int(key, 16) < 2**WEAK_KEY_BITS or len(set(key[2:])) < MIN_KEY_DIGITS:
            raise DpkitUsageError(f"{name} key {value} does not look random (below 2^{WEAK_KEY_BITS} or fewer than "
                                  f"{MIN_KEY_DIGITS} distinct hex digits); {HOW_TO_KEY}", param=name)
        return key
    try:
        n = int(str(value), 10) if isinstance(value, str) else int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(float("inf"))
        raise DpkitUsageError(bad, param=name) from None
    if n < 0 or (not isinstance(value, str) and n != value):
        raise DpkitUsageError(bad, param=name)
    return n


def keywords(given: Iterable[str], known: Iterable[str], where: str, *, named: Iterable[str] = ()) -> None:
    """Refuse a keyword ``where`` (a function's name) does not take in its ``**options`` — whatever
    its value, None included — naming the closest one it takes (``known``, or one of its ``named``
    parameters): a ``TypeError``, as Python's own for a function without ``**``. A keyword closest
    to a deprecated name (:data:`RENAMED`) is pointed to the name that replaces it."""
    known = list(known)
    unknown = [g for g in given if g not in known]
    if not unknown:
        return
    name = unknown[0]
    named = list(named)
    old = [o for o, new in RENAMED.get(where, {}).items() if new in named or new in known]
    close = difflib.get_close_matches(name, [*known, *named, *old], n=1, cutoff=0.6)
    hint = (f"; did you mean {RENAMED[where].get(close[0], close[0])!r}?" if close and close[0] in old
            else f"; did you mean {close[0]!r}?" if close
            else f" (its options: {', '.join(known)})" if known else "")
    raise ParameterTypeError(f"{where}() got an unexpected keyword argument {name!r}{hint}", param=name)

#: the release that drops the deprecated names below (0.6 announced 0.7; 0.7 keeps them one more
#: round and says 0.8, rather than warn of a removal in the version that runs)
REMOVED_IN = "0.8"

#: a public function's (or method's) deprecated keyword -> the name that replaced it, one name
#: per concept across the functions and the estimators (scikit-learn's where they meet:
#: ``n_clusters``, ``n_estimators``, ``max_depth``, ``random_state``); docs/library.md, "Names".
#: The old name keeps working until :data:`REMOVED_IN`, with a ``DeprecationWarning``.
RENAMED: dict[str, dict[str, str]] = {
    "publish": {"seed": "random_state"},
    "forest": {"trees": "n_estimators", "depth": "max_depth", "seed": "random_state"},
    "cluster": {"k": "n_clusters", "seed": "random_state"},
    "infer_schema": {"seed": "random_state"},
    "learn_schema": {"seed": "random_state"},
    "kanon_select": {"seed": "random_state"},
    "evaluate_classifier": {"seed": "random_state"},
}


def deprecated(old: str, new: str, where: str = "") -> None:
    """Warn (``DeprecationWarning``, at the caller's line) that ``old`` (of ``where``) is now ``new``."""
    from dpkit.errors import warn

    warn(f"{where + ': ' if where else ''}{old} is deprecated and will be removed in dpkit {REMOVED_IN}; "
         f"use {new} instead", DeprecationWarning)


def renamed(where: str) -> Callable[[F], F]:
    """Decorate the public function ``where`` so that its deprecated keywords (:data:`RENAMED`)
    still work, with a ``DeprecationWarning``, as the names that replace them — before the
    function runs, so its ``locals()`` (a keyed run's identity) are those of a call with the new
    names, and so are its outputs. Giving both names is a ``TypeError``, as Python's own for a
    keyword given twice. The signature (``inspect.signature``) is the function's own."""
    names = RENAMED[where]

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old in [k for k in kwargs if k in names]:
                new = names[old]
                if new in kwargs:
                    raise ParameterTypeError(f"{where}() got both {old!r} (deprecated) and {new!r}; give {new} only",
                                             param=new)
                deprecated(f"{old}=", f"{new}=", f"{where}()")
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate

