"""Generated kernels as real modules on disk, compiled with Numba's own cache.

Every backend that compiles Python source with Numba keeps its modules under
``<cache root>/<backend name>/``. A kernel's module is ``<dir>/absjit_k_<hash>.py`` where
``hash`` covers the source, the compile options and every version that changes compiled
code. Because the file and the
module name are real, ``numba.njit(cache=True)`` stores the machine code next to it
(``__pycache__/``) and a later process loads it instead of compiling.

Robustness rules:

* files are written to a temporary name and renamed (atomic on POSIX); the directory is
  created with mode 0700;
* a module file whose text does not match its name's hash is rewritten;
* after a successful compile a checksum of Numba's cache files is recorded
  (``<module>.sum``); files that do not match it (truncated, corrupted, written by a
  foreign process) are deleted before loading, so they are rebuilt, never trusted;
* two processes racing on one kernel both succeed: each rename replaces equal text,
  and a loser of the race at worst recompiles.
"""
from __future__ import annotations

import glob
import hashlib
import os
import tempfile

__all__ = ["cache_root", "kernel_dir", "enabled", "write_module", "cache_files",
           "verify_or_purge", "record_checksum", "purge", "clear", "info"]


def enabled() -> bool:
    return os.environ.get("ABSJIT_DISABLE_DISK_CACHE", "") not in ("1", "true", "True", "yes")


def cache_root() -> str:
    root = os.environ.get("ABSJIT_CACHE_DIR")
    if not root:
        root = os.path.join(os.path.expanduser("~"), ".cache", "absjit")
    return root


BACKEND_DIR = "numba_cpu"  # the directory of the default (cpu) backend


def kernel_dir(backend: str = BACKEND_DIR) -> str:
    """The directory of one backend's kernels, created (mode 0700) if needed."""
    path = os.path.join(cache_root(), backend)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_module(module_name: str, text: str, backend: str = BACKEND_DIR) -> str:
    """The path of the module file holding ``text``, written if absent or different."""
    path = os.path.join(kernel_dir(backend), module_name + ".py")
    data = text.encode()
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return path
    except OSError:
        pass
    # Different or missing: stale Numba artefacts of this name are worthless too.
    purge(module_name, keep_module=True, backend=backend)
    _atomic_write(path, data)
    return path


def cache_files(module_name: str, backend: str = BACKEND_DIR) -> list:
    pattern = os.path.join(kernel_dir(backend), "__pycache__", glob.escape(module_name) + ".*")
    return sorted(p for p in glob.glob(pattern) if not os.path.basename(p).startswith(".tmp"))


def _checksum(files) -> str:
    h = hashlib.sha256()
    for p in files:
        h.update(os.path.basename(p).encode() + b"\0")
        with open(p, "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()


def _sum_path(module_name: str, backend: str = BACKEND_DIR) -> str:
    return os.path.join(kernel_dir(backend), module_name + ".sum")


def verify_or_purge(module_name: str, backend: str = BACKEND_DIR) -> bool:
    """True when Numba's files for the module match the recorded checksum; otherwise
    they are deleted (so Numba compiles afresh) and False is returned."""
    files = cache_files(module_name, backend)
    if not files:
        return False
    try:
        with open(_sum_path(module_name, backend)) as f:
            expected = f.read().strip()
        if _checksum(files) == expected:
            return True
    except OSError:
        pass
    purge(module_name, keep_module=True, backend=backend)
    return False


def record_checksum(module_name: str, backend: str = BACKEND_DIR) -> None:
    files = cache_files(module_name, backend)
    if files:
        try:
            _atomic_write(_sum_path(module_name, backend), _checksum(files).encode())
        except OSError:
            pass


def purge(module_name: str, keep_module: bool = False, backend: str = BACKEND_DIR) -> None:
    """Delete a kernel's cache files (and its module file unless ``keep_module``)."""
    paths = cache_files(module_name, backend) + [_sum_path(module_name, backend)]
    if not keep_module:
        paths.append(os.path.join(kernel_dir(backend), module_name + ".py"))
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass


def _walk(root):
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            yield os.path.join(dirpath, name)


def clear() -> None:
    """Delete every kernel under the cache directory."""
    root = cache_root()
    for p in list(_walk(root)):
        try:
            os.unlink(p)
        except OSError:
            pass


def info() -> dict:
    root = cache_root()
    files = list(_walk(root)) if os.path.isdir(root) else []
    size = 0
    for p in files:
        try:
            size += os.path.getsize(p)
        except OSError:
            pass
    modules = [p for p in files if p.endswith(".py")]
    return {"directory": root, "kernels": len(modules), "files": len(files), "bytes": size}
