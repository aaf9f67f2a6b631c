"""absjit's asv benchmarks. Steady-state and compile benchmarks run with tiering off
(every miss compiles before it returns); ``bench_first_call`` runs its fresh processes
with tiering on, as a user's.
"""
import os

os.environ.setdefault("ABSJIT_TIERING", "0")
