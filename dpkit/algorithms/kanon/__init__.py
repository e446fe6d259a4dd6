"""k-anonymity by feature selection: XGB-KA (Wang & Wan) and the Greedy-Hamdist baseline.

Not differential privacy (docs/algorithms.md §4): outputs are k-anonymous on their
quasi-identifiers. :func:`kanon_select` is the command as a library call;
:class:`KAnonymitySelector` the estimator; :func:`check_table` an independent check.
"""

from dpkit.algorithms.kanon.checks import KAnonymityCheck, check_table
from dpkit.algorithms.kanon.greedy import KAnonymitySelector, greedy_forward
from dpkit.algorithms.kanon.select import Selection, kanon_select

__all__ = [
    "KAnonymityCheck",
    "KAnonymitySelector",
    "Selection",
    "check_table",
    "greedy_forward",
    "kanon_select",
]
