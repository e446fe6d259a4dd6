"""Utility evaluation: classification metrics and classifiers (``metrics``, ``classify``),
clustering metrics (``clustering``), experiment sweeps (``experiments``), plots (``plots``).

Submodules are imported on demand (they pull in scikit-learn and matplotlib).
"""
