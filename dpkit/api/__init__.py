"""The library: dpkit's public functions and the results they return.

Each function opens one private run (:class:`dpkit.run.PrivateRun`: ε, seed, ledger, report),
reads the data (:mod:`dpkit.engine.inputs`), calls one algorithm and returns a small result
object that holds the output and the report. The command line (:mod:`dpkit.cli`) is a veneer
over these functions: each command parses its flags, calls one of them and prints.

Import them from :mod:`dpkit` (``dpkit.publish``, ``dpkit.Release``, ...); the modules here are
imported on first use, so that ``import dpkit`` stays light.
"""
