"""README's first command runs ``examples/quickstart.py``: it must run and show the tour."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_quickstart_runs():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "quickstart.py")],
                         capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "lambda" in out.stdout  # it prints a jaxpr
    # each demonstrated error shows its type, its first line and its fixes
    lines = out.stdout.splitlines()
    shown = [i for i, line in enumerate(lines) if " raises TracerBoolConversionError: " in line]
    assert len(shown) == 2
    for i in shown:
        assert "Abstract tracer value encountered" in lines[i]
        assert any(line.strip().startswith("Possible fixes:") and "lax.cond" in line
                   for line in lines[i + 1:i + 3])
    assert any("raises TypeError:" in line and "immutable" in line for line in lines)
    assert any("x.at[idx].set(y)" in line for line in lines)
