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
