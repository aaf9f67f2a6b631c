"""Generated kernels as real modules on disk, compiled with Numba's own cache — trusted
only after authentication.

Layout: ``<cache root>/<backend>/absjit_k_<hash>.py`` (the generated module; ``hash``
covers the source, signature, compile flags and every version that changes compiled
code), Numba's index and data files for it in ``<cache root>/<backend>/__pycache__/``
(Numba's locator is pinned there: never ``~/.cache/numba``, never the package
directory), and ``<module>.mac``, an HMAC of those files.

Trust model (docs/jit-and-caches.md, "The disk cache's trust model"): compiled code is
machine code and Numba's files are pickles, so whoever can write the cache can run code
in this process. Therefore

* the cache root and every directory below it is created 0700 and must be a real
  directory owned by the current user and not writable by group or others; otherwise
  absjit warns once and runs without a disk cache;
* every entry is authenticated with an HMAC-SHA256 keyed by a per-user secret
  (``<root>/.secret``, 32 random bytes, created 0600 on first use) **before** Numba
  unpickles or loads anything; an entry without a valid MAC is deleted and rebuilt;
* anything unexpected — a non-regular file (a FIFO, a directory, a link), a read error —
  counts as a corrupt entry: it is removed (one debug log line) and rebuilt, and reads
  never block (files are opened non-blocking, without following links);
* :func:`clear` renames each entry aside before deleting it, so a concurrent clear or
  a concurrent reader never sees half a directory; a vanished entry means a compile.
* processes compiling one kernel at once each save it and record a MAC; the MAC is
  rewritten until it matches the files on disk (:func:`record_mac`), so the entry they
  leave authenticates. Numba's temporary files (saves in progress) are never part of
  an entry's MAC.

Size cap: ``ABSJIT_CACHE_MAX_BYTES`` (default :data:`DEFAULT_MAX_BYTES`, 2 GiB; a number
of bytes, optionally with a ``k``/``M``/``G`` suffix) bounds each backend's directory.
absjit stamps an entry's ``.mac`` file with the time it was last used (written, or
authenticated before a load: absjit's own record, not the file system's atime); after
writing an entry, when the directory is over the cap, the least recently used entries
are deleted until it is under 90% of it. Deleting an entry another process is about to
load costs that process a compile, never a failed call.
"""
from __future__ import annotations

import glob
import hashlib
import hmac
import logging
import os
import shutil
import stat
import tempfile
import threading
import warnings

__all__ = ["cache_root", "kernel_dir", "numba_dir", "enabled", "usable", "write_module",
           "cache_files", "verify_or_purge", "record_mac", "purge", "clear", "info",
           "max_bytes", "evict", "BACKEND_DIR", "DEFAULT_MAX_BYTES", "HELPER_PREFIX"]

log = logging.getLogger("absjit.diskcache")

BACKEND_DIR = "numba_cpu"  # the directory of the default (cpu) backend
#: Entries of helpers generated kernels call (compiled once per machine), not kernels.
HELPER_PREFIX = "absjit_k_helper_"
_SECRET = ".secret"
_MAX_ENTRY_BYTES = 1 << 28  # a Numba cache file larger than this is not ours
#: The default cap on one backend's cache directory (``ABSJIT_CACHE_MAX_BYTES``).
DEFAULT_MAX_BYTES = 2 << 30
_LOW_WATER = 0.9  # eviction goes down to this fraction of the cap
_RECORD_ATTEMPTS = 8  # MAC rewrites while concurrent writers keep changing the files
_lock = threading.Lock()
_refused: set = set()  # roots refused this process (warned once each)


def enabled() -> bool:
    return os.environ.get("ABSJIT_DISABLE_DISK_CACHE", "") not in ("1", "true", "True", "yes")


def cache_root() -> str:
    root = os.environ.get("ABSJIT_CACHE_DIR")
    if not root:
        root = os.path.join(os.path.expanduser("~"), ".cache", "absjit")
    return root


# -- trust ---------------------------------------------------------------------------
def _check_dir(path: str) -> str | None:
    """Why ``path`` cannot be trusted, or None when it is a private directory of ours."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot inspect it ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory (a link or a file)"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"it is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _private_dir(path: str) -> str | None:
    """Create ``path`` 0700 if missing; why it is untrusted, or None."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        return f"cannot create it ({e.strerror})"
    return _check_dir(path)


def _refuse(root: str, why: str) -> None:
    with _lock:
        if root in _refused:
            return
        _refused.add(root)
    warnings.warn(f"absjit: not using the kernel cache directory {root!r}: {why}. "
                  "Kernels compile in every process until it is fixed (a private "
                  "directory owned by you, mode 0700) or ABSJIT_CACHE_DIR names another.",
                  RuntimeWarning, stacklevel=4)


def usable(backend: str = BACKEND_DIR) -> bool:
    """Whether the disk cache is on and its directories and secret can be trusted
    (warns once per root when they cannot)."""
    if not enabled():
        return False
    root = cache_root()
    for path in (root, os.path.join(root, backend), numba_dir(backend, create=False)):
        why = _private_dir(path)
        if why is not None:
            _refuse(path, why)
            return False
    try:
        _secret(root)
    except OSError as e:
        _refuse(root, f"its secret key file is unusable ({e})")
        return False
    return True


def _secret(root: str) -> bytes:
    """The per-user HMAC key, created 0600 on first use."""
    path = os.path.join(root, _SECRET)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        key = os.urandom(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:  # another process made it first: read theirs
            return _secret(root)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or \
                (hasattr(os, "geteuid") and st.st_uid != os.geteuid()):
            raise OSError("not a private regular file of this user")
        key = f.read(64)
    if len(key) != 32:
        raise OSError("wrong size")
    return key


def kernel_dir(backend: str = BACKEND_DIR) -> str:
    """The directory of one backend's kernels, created (mode 0700) if needed."""
    path = os.path.join(cache_root(), backend)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def numba_dir(backend: str = BACKEND_DIR, create: bool = True) -> str:
    """Where Numba's index and data files go (the pinned locator's directory)."""
    path = os.path.join(cache_root(), backend, "__pycache__")
    if create:
        os.makedirs(path, mode=0o700, exist_ok=True)
    return path


# -- files ---------------------------------------------------------------------------
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


def _read_regular(path: str, limit: int = _MAX_ENTRY_BYTES) -> bytes:
    """The bytes of a regular file, never following a link nor blocking on a FIFO;
    ``OSError`` for anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        if st.st_size > limit:
            raise OSError(f"{path} is larger than a cache entry can be")
        data = f.read(limit + 1)
    if len(data) != st.st_size:
        raise OSError(f"{path} changed while it was read")
    return data


def _remove(path: str) -> None:
    """Delete a file, link, FIFO or directory tree; a missing one is fine."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    try:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def write_module(module_name: str, text: str, backend: str = BACKEND_DIR) -> str:
    """The path of the module file holding ``text``, written if absent or different."""
    path = os.path.join(kernel_dir(backend), module_name + ".py")
    data = text.encode()
    try:
        if _read_regular(path) == data:
            return path
    except OSError:
        pass
    # Different, missing or not a file: stale Numba artefacts of this name are worthless.
    purge(module_name, keep_module=True, backend=backend)
    _remove(path)
    _atomic_write(path, data)
    return path


def cache_files(module_name: str, backend: str = BACKEND_DIR, partial: bool = False) -> list:
    """Numba's files for ``module_name`` (whatever kind of file they turn out to be);
    with ``partial``, also the temporary files of saves in progress (``*.tmp.<uid>``,
    which Numba renames into place when done, or a crash leaves behind)."""
    pattern = os.path.join(numba_dir(backend), glob.escape(module_name) + ".*")
    return sorted(p for p in glob.glob(pattern)
                  if partial or ".tmp." not in os.path.basename(p))


def _mac_path(module_name: str, backend: str) -> str:
    return os.path.join(kernel_dir(backend), module_name + ".mac")


def _mac(module_name: str, files, backend: str) -> str:
    mac = hmac.new(_secret(cache_root()), digestmod=hashlib.sha256)
    mac.update(module_name.encode() + b"\0")
    mac.update(_read_regular(os.path.join(kernel_dir(backend), module_name + ".py")))
    for p in files:
        data = _read_regular(p)
        mac.update(os.path.basename(p).encode() + b"\0" + len(data).to_bytes(8, "little"))
        mac.update(data)
    return mac.hexdigest()


def verify_or_purge(module_name: str, backend: str = BACKEND_DIR) -> bool:
    """True when Numba's files for the module carry a valid MAC: only then may Numba
    read them. Otherwise they are deleted (Numba compiles afresh) and False is
    returned."""
    files = cache_files(module_name, backend)
    if not files:
        return False
    try:
        expected = _read_regular(_mac_path(module_name, backend), 1024).decode("ascii")
        if hmac.compare_digest(_mac(module_name, files, backend), expected.strip()):
            _touch(_mac_path(module_name, backend))  # last used: now (the LRU's clock)
            return True
        reason = "its MAC does not match"
    except (OSError, UnicodeDecodeError, ValueError) as e:
        reason = f"it cannot be authenticated ({e})"
    log.debug("absjit disk cache: dropping %s: %s", module_name, reason)
    purge(module_name, keep_module=True, backend=backend)
    return False


def record_mac(module_name: str, backend: str = BACKEND_DIR) -> None:
    """Authenticate the files Numba just wrote for the module.

    Processes compiling the same kernel at once each save their own (equivalent, not
    byte-identical) data file and then record a MAC; one process's MAC, computed before
    another's save, may land after the other's. So each writer reads the files again
    after writing and rewrites the MAC until it matches them: the last MAC written is
    then always checked against files no save has changed since (a later save is
    followed by its own record)."""
    for _ in range(_RECORD_ATTEMPTS):
        files = cache_files(module_name, backend)
        if not files:
            return
        try:
            mac = _mac(module_name, files, backend)
            _atomic_write(_mac_path(module_name, backend), mac.encode())
            settled = _mac(module_name, cache_files(module_name, backend), backend) == mac
        except OSError:
            return  # files vanished under us: whoever removed them decides the entry
        if settled:
            break
    evict(backend=backend, keep=module_name)


# -- size cap ------------------------------------------------------------------------
def max_bytes() -> int:
    """The cap on one backend's cache directory: ``ABSJIT_CACHE_MAX_BYTES`` (bytes, or
    with a ``k``/``M``/``G`` suffix, powers of 1024), default :data:`DEFAULT_MAX_BYTES`.

    Raises
    ------
    ValueError
        When the variable is not a positive size.

    Examples
    --------
    >>> import os
    >>> os.environ["ABSJIT_CACHE_MAX_BYTES"] = "512M"
    >>> max_bytes()
    536870912
    >>> del os.environ["ABSJIT_CACHE_MAX_BYTES"]
    """
    text = os.environ.get("ABSJIT_CACHE_MAX_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(text[-1].lower())
    try:
        value = int(float(text[:-1] if scale else text) * (scale or 1))
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"ABSJIT_CACHE_MAX_BYTES={text!r} is not a positive size (bytes, "
                         "or a number with a k, M or G suffix, e.g. 2G)")
    return value


def _touch(path: str) -> None:
    try:
        os.utime(path, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


def _entries(backend: str) -> dict:
    """``{module name: [bytes, last used (ns)]}`` for every entry of a backend."""
    entries: dict = {}
    for directory in (kernel_dir(backend), numba_dir(backend)):
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if not name.startswith("absjit_k_"):
                continue
            module = name.split(".", 1)[0]
            try:
                st = os.lstat(os.path.join(directory, name))
            except OSError:
                continue  # deleted under us
            e = entries.setdefault(module, [0, 0, 0])
            e[0] += st.st_size
            if name.endswith(".mac"):
                e[1] = st.st_mtime_ns  # the use stamp
            e[2] = max(e[2], st.st_mtime_ns)
    # an entry without a MAC (being written, or left by a crash): its newest file's time
    return {m: (size, used or newest) for m, (size, used, newest) in entries.items()}


def evict(backend: str = BACKEND_DIR, keep: str | None = None, limit: int | None = None
          ) -> int:
    """Delete least-recently-used entries of a backend while its directory is over
    ``limit`` (default :func:`max_bytes`), down to 90% of it; ``keep`` is never
    deleted. Returns the number of entries deleted. Safe against other processes
    doing the same (a file already gone is skipped)."""
    limit = max_bytes() if limit is None else limit
    entries = _entries(backend)
    total = sum(size for size, _ in entries.values())
    if total <= limit:
        return 0
    target = int(limit * _LOW_WATER)
    dropped = 0
    for module, (size, _) in sorted(entries.items(), key=lambda kv: kv[1][1]):
        if total <= target:
            break
        if module == keep:
            continue
        purge(module, backend=backend)
        total -= size
        dropped += 1
    log.debug("absjit disk cache: evicted %d entries (cap %d bytes)", dropped, limit)
    return dropped


def purge(module_name: str, keep_module: bool = False, backend: str = BACKEND_DIR) -> None:
    """Delete a kernel's cache files (and its module file unless ``keep_module``)."""
    paths = cache_files(module_name, backend, partial=True) + [_mac_path(module_name, backend)]
    if not keep_module:
        paths.append(os.path.join(kernel_dir(backend), module_name + ".py"))
    for p in paths:
        _remove(p)


def clear() -> None:
    """Delete everything under the cache directory but its secret. Each entry is first
    renamed aside, so concurrent users see it either whole or gone."""
    root = cache_root()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if name == _SECRET or name.startswith(".trash-"):
            continue
        _discard(root, os.path.join(root, name))  # False: gone, or another clear() took it
    for name in names:  # trash left by an interrupted clear()
        if name.startswith(".trash-"):
            _remove(os.path.join(root, name))
    _renew_bad_secret(root)


def _discard(root: str, path: str) -> bool:
    """Rename ``path`` aside under ``root``, then remove it: concurrent users see it
    either whole or gone. False when it could not be renamed (gone, or taken by another
    process's clear())."""
    trash = os.path.join(root, f".trash-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        os.rename(path, trash)
    except OSError:
        return False
    _remove(trash)
    return True


def _renew_bad_secret(root: str) -> None:
    """Replace a secret that cannot be used (wrong size, a directory, a FIFO, a link,
    the wrong mode): after a clear no entry was signed with it, so a fresh one loses
    nothing and the cache works again. A good secret is kept (other processes use it)."""
    if _check_dir(root) is not None:
        return
    try:
        _secret(root)
        return
    except OSError:
        pass
    if not _discard(root, os.path.join(root, _SECRET)):
        return  # gone already, or another clear() renewed it
    with _lock:
        _refused.discard(root)
    try:
        _secret(root)  # a new one, 0600
    except OSError:
        pass


def _walk(root):
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            yield os.path.join(dirpath, name)


def info() -> dict:
    root = cache_root()
    files = [p for p in _walk(root) if os.path.basename(p) != _SECRET] \
        if os.path.isdir(root) else []
    size = 0
    for p in files:
        try:
            size += os.lstat(p).st_size
        except OSError:
            pass
    modules = [os.path.basename(p) for p in files if p.endswith(".py")]
    helpers = sum(m.startswith(HELPER_PREFIX) for m in modules)
    return {"directory": root, "kernels": len(modules) - helpers, "helpers": helpers,
            "files": len(files), "bytes": size, "max_bytes": max_bytes()}
