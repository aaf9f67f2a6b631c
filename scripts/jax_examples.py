"""Run the scripts in JAX's ``examples/`` on JAX and on absjit and compare their output.

Usage::

    python scripts/jax_examples.py /tmp/jaxsrc/examples [--timeout 900]

Each example runs as ``python -m examples.NAME`` in a fresh process, once with the real
jax and once with ``absjit.compat_jax.install()``, in a scratch folder holding a copy of
the example. There is no network, so ``examples.datasets.mnist()`` is replaced by a
synthetic stand-in with MNIST's shapes and value ranges (seeded, the same for both runs;
small, so each example runs in seconds); a smaller data set also means fewer steps.
Printed timings (``in 0.12 sec``, ``(0.034 sec)``) are removed; other numbers must agree
to ``rtol=1e-3`` (training loops compound float32 rounding differences), compared as in
``scripts/jax_notebooks.py``.

Left out: ``onnx2xla`` (converts an ONNX model to XLA and needs ``onnx``) and
``spmd_mnist_classifier_fromscratch`` (several devices).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jax_notebooks import REPO, first_difference  # noqa: E402

SKIPS = {
    "onnx2xla": "converts ONNX models to XLA (needs onnx and a download)",
    "spmd_mnist_classifier_fromscratch": "several devices",
}
# Command-line flags for a short run.
ARGS = {
    "differentially_private_sgd": ["--epochs=2", "--batch_size=32", "--dpsgd=True"],
}
# Examples size: train/test images.
SIZES = {"mnist_vae": (96, 32)}

SYNTHETIC_DATASETS = '''"""Synthetic stand-in for examples.datasets (no network): MNIST's shapes."""
import numpy as np


def mnist_raw():
    rng = np.random.RandomState(0)
    n_train, n_test = {n_train}, {n_test}
    def images(n):
        return (rng.rand(n, 28, 28) * 255 * (rng.rand(n, 28, 28) > 0.7)).astype(np.uint8)
    return (images(n_train), rng.randint(0, 10, n_train).astype(np.uint8),
            images(n_test), rng.randint(0, 10, n_test).astype(np.uint8))


def _one_hot(x, k, dtype=np.float32):
    return np.array(x[:, None] == np.arange(k), dtype)


def mnist(permute_train=False):
    train_images, train_labels, test_images, test_labels = mnist_raw()
    train_images = train_images.reshape(len(train_images), -1).astype(np.float32) / 255.
    test_images = test_images.reshape(len(test_images), -1).astype(np.float32) / 255.
    train_labels = _one_hot(train_labels, 10)
    test_labels = _one_hot(test_labels, 10)
    if permute_train:
        perm = np.random.RandomState(0).permutation(train_images.shape[0])
        train_images, train_labels = train_images[perm], train_labels[perm]
    return train_images, train_labels, test_images, test_labels
'''

_TIMING = re.compile(r"\(?\s*(in\s+)?\d+\.\d+\s*sec\)?")


def run(example: Path, mode: str, timeout: int):
    name = example.stem
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp, "examples")
        pkg.mkdir()
        Path(pkg, "__init__.py").write_text("")
        shutil.copy(example, pkg / example.name)
        n_train, n_test = SIZES.get(name, (256, 64))
        Path(pkg, "datasets.py").write_text(
            SYNTHETIC_DATASETS.replace("{n_train}", str(n_train)).replace("{n_test}", str(n_test)))
        boot = ("import sys, runpy\n"
                + ("import absjit.compat_jax; absjit.compat_jax.install()\n"
                   if mode == "absjit" else "")
                + f"sys.argv = ['{name}'] + {ARGS.get(name, [])!r}\n"
                + f"runpy.run_module('examples.{name}', run_name='__main__')\n")
        env = dict(os.environ, MPLBACKEND="Agg", TMPDIR=tmp)
        env.setdefault("ABSJIT_TIERING", "1")
        env["PYTHONPATH"] = tmp + os.pathsep + str(REPO)
        start = time.time()
        try:
            p = subprocess.run([sys.executable, "-c", boot], cwd=tmp, env=env, text=True,
                               capture_output=True, timeout=timeout)
            return p.returncode, p.stdout, p.stderr, time.time() - start
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return "timeout", out, "", time.time() - start


def run_examples(paths, timeout=900):
    files = []
    for p in paths:
        p = Path(p)
        files += sorted(q for q in p.glob("*.py") if q.stem not in ("__init__", "datasets")) \
            if p.is_dir() else [p]
    ok = 0
    for f in files:
        if f.stem in SKIPS:
            print(f"{f.stem}: skipped ({SKIPS[f.stem]})")
            continue
        rc_j, out_j, err_j, t_j = run(f, "jax", timeout)
        rc_a, out_a, err_a, t_a = run(f, "absjit", timeout)
        if rc_j != 0:
            print(f"{f.stem}: fails under jax (rc {rc_j}): {err_j.strip().splitlines()[-1:]}")
            continue
        diff = None
        if rc_a != 0:
            tail = err_a.strip().splitlines()[-1:] if err_a else []
            diff = f"absjit rc {rc_a}: {tail}"
        else:
            diff = first_difference(_TIMING.sub("", out_a), _TIMING.sub("", out_j), rtol=1e-3)
        lines = len(out_j.splitlines())
        if diff is None:
            ok += 1
            print(f"{f.stem}: agrees ({lines} lines; jax {t_j:.0f} s, absjit {t_a:.0f} s)")
        else:
            print(f"{f.stem}: DIFFERS: {diff}  (jax {t_j:.0f} s, absjit {t_a:.0f} s)")
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args(argv)
    run_examples(args.paths, args.timeout)


if __name__ == "__main__":
    main()
