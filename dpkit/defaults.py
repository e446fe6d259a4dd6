"""The defaults that more than one layer names, each defined once.

The command line shows them in ``--help`` and the library takes them as keyword defaults, so
they live on the lowest floor (docs/architecture.md, "Defaults once"): standard library only,
importable by the CLI at start-up without loading numpy or pandas. A default that only one
algorithm uses stays beside that algorithm.
"""

from __future__ import annotations

#: the text encoding of a CSV input: UTF-8, a leading byte-order mark skipped (csvkit's convention)
DEFAULT_ENCODING = "utf-8-sig"
#: ``taxonomy infer``: a column with more distinct values than this is not drafted as categorical
MAX_CATEGORIES = 50
#: how a forest turns class probabilities into labels: the most probable class (DiffPRFs §2.2)
DEFAULT_DECISION = "argmax"
#: the delimiters a CSV is sniffed for, in order (and that a column name holding one betrays a
#: header split on the wrong one, :func:`dpkit.console.have_columns`)
DELIMITERS = (",", ";", "\t", "|")
#: column names a message lists before it says how many there are in all
LISTED_COLUMNS = 12
#: a share of the rows above which a column is named with its share: missing values a draft
#: sees, values a release does not hold (docs/publish.md)
LARGE_SHARE = 0.2
