"""Experiment sweeps (``dpkit evaluate sweep``): a YAML grid of runs -> a journal, summaries, plots.

``spec`` (the YAML, runs and seeds) <- ``journal`` (results.csv) <- ``groups`` (statistics per
grid point) <- ``plots`` <- ``summary`` (summary.csv/.md) <- ``runner`` (the process pool). The
``tasks`` are the papers' evaluation protocols, one module per command, each a
``run_experiment(params, seed) -> {metric: value}`` over the algorithms' library API.
"""
