"""dpkit: differentially private and k-anonymous release of CSV datasets.

The library is usable without the CLI; the CLI (``dpkit.cli``) is a thin layer over it.
"""

__version__ = "0.1.0"
