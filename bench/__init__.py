"""dpkit benchmarks (not tests): each ``bench_<name>.py`` has ``main(quick=False) -> str``.

Run them with ``python -m bench.run [name ...] [--quick]`` (``make bench``); each writes its
markdown section to ``docs/results/bench-<name>.md``.
"""
