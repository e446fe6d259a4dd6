"""The release card: a self-contained HTML page of a run's report (``dpkit report``).

:func:`render` takes the report dict (and, optionally, the public domain and the owner's
evaluation) and returns HTML; it reads no file and imports nothing but the standard library.
:mod:`dpkit.api.card` gathers its inputs and writes the file.
"""

from dpkit.card.page import render

__all__ = ["render"]
