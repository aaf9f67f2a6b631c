"""Tier 0's block evaluator: one Numba function per float type, compiled once per machine
(:mod:`.block_vm`), that runs runs of elementwise equations as small programs over
cache-sized blocks (its loads and stores in :mod:`.block_kernels`), and the schedules
of the NumPy interpreter that call it (:mod:`.block_plan`)."""
