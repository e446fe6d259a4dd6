"""The sweep tasks: one evaluation protocol per command (``run_experiment(params, seed)``)."""
