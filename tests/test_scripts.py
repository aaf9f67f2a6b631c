"""The benchmark plot script draws what compare.py writes."""
import json
import os
import runpy

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
plot_bench = runpy.run_path(os.path.join(ROOT, "scripts", "plot_bench.py"))

RUN = {"machine": {"cpu": "Test CPU", "cores": 2, "load_average": 0.3},
       "times_s": {"selu": {"absjit": 5e-4, "jax": 4e-4, "numba": 7e-3, "numpy": 6e-3},
                   "norm": {"absjit": 1e-4, "jax": 1.5e-4, "numpy": 6e-4},
                   "no-jax": {"absjit": 1e-3}}}


def test_relative_times_are_ratios_to_jax_and_skip_rows_without_jax():
    rel = plot_bench["relative_times"](RUN["times_s"])
    assert set(rel) == {"selu", "norm"}
    assert rel["selu"]["absjit"] == pytest.approx(1.25)
    assert rel["norm"]["jax"] == 1.0 and "numba" not in rel["norm"]


def test_plot_writes_a_png_with_one_panel_per_run(tmp_path):
    paths = []
    for i in range(2):
        p = tmp_path / f"run{i}.json"
        p.write_text(json.dumps(RUN))
        paths.append(str(p))
    out = tmp_path / "bench.png"
    plot_bench["main"](paths + ["-o", str(out)])
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
