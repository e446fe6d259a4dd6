"""Column names as the header gives them — public, never the values: the ``keep=``/``ignore=``
style lists a user names (:func:`names`) and the identifier-name rule (:func:`looks_like_id`)
that both a learned run (``dpkit.domain``) and a drafted schema (``dpkit.schema.draft``) apply."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from dpkit.console import have_columns
from dpkit.errors import DpkitUsageError

__all__ = ["ID_NAMES", "ID_SUFFIXES", "looks_like_id", "name_words", "names"]


def names(value: str | Iterable[str] | None, param: str, columns: Sequence[str]) -> list[str]:
    """Column names given as a list or "a,b", each checked against ``columns`` (a usage
    error naming ``param`` otherwise)."""
    if value is None:
        return []
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    items = [v for v in items if v]
    unknown = [v for v in items if v not in columns]
    if unknown:
        raise DpkitUsageError(
            f"{param}: column(s) {', '.join(map(repr, unknown))} are not in the data "
            f"{have_columns(columns)}", param=param
        )
    return items


#: whole names (lower case, separators dropped) that name a row or record number, not a quantity
ID_NAMES = frozenset({"id", "uid", "uuid", "guid", "key", "index", "idx", "row", "rowid", "rownum", "rownumber",
                      "rowno", "recordid", "recordnumber"})
#: a name whose last word is one of these names an identifier (``customer_id``, ``CustomerId``, ``userID``)
ID_SUFFIXES = frozenset({"id", "uid", "uuid", "guid", "key"})


def name_words(name: str) -> list[str]:
    """A column name's words, lower case: split at separators and case changes
    (``CustomerId`` -> customer, id; ``userID`` -> user, id; ``HTTPCode`` -> http, code)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def looks_like_id(name: str) -> bool:
    """The public name rule (docs/domain-reference.md, "Identifiers"): a column named like a row or record
    identifier is ignored by a run without a schema unless its type is declared or it is kept
    (``keep=``). On the name only — the header is public — never on the values: ``id``, ``ID``,
    ``uuid``, ``key``, ``index``, ``RowNumber``, ``row_id``; a last word ``id``/``uuid``/``guid``/
    ``key``/``uid`` (``customer_id``, ``CustomerId``, ``userID``, ``api-key``); pandas' written
    index ``Unnamed: 0``. ``paid``, ``valid``, ``Idade`` are not (one word each)."""
    if re.fullmatch(r"\s*unnamed:\s*\d+\s*", name, flags=re.IGNORECASE):
        return True
    words = name_words(name)
    return bool(words) and ("".join(words) in ID_NAMES or words[-1] in ID_SUFFIXES)
