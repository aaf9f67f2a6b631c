"""The CUDA runtime side: device detection, allocation, transfers, launch sizes, and
the device functions generated kernels call.

Everything here imports ``numba.cuda`` lazily, on first use: ``import absjit`` never
does. Whether Numba's CUDA simulator is on is decided by ``NUMBA_ENABLE_CUDASIM``,
which Numba reads when ``numba.cuda`` is first imported.
"""
from __future__ import annotations

import ctypes.util
import functools
import importlib.util
import math
import os
import sys

import numpy as np

__all__ = ["CudaOutOfMemoryError", "cuda_module", "simulator", "unavailable_reason",
           "device_info", "launch_shape", "empty", "to_device", "as_device", "to_host",
           "kernel_namespace", "is_device_array"]


class CudaOutOfMemoryError(MemoryError):
    """A device allocation failed: the message names the array that was being
    allocated (shape, dtype, bytes) and the device's memory when it can be read."""


def simulator() -> bool:
    """Whether kernels run under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``,
    read by Numba when ``numba.cuda`` is first imported)."""
    if "numba.cuda" in sys.modules:
        from numba import config
        return bool(config.ENABLE_CUDASIM)
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def installed() -> bool:
    """Whether numba-cuda is installed (its top-level package ``numba_cuda``; looked up
    without importing Numba)."""
    try:
        return importlib.util.find_spec("numba_cuda") is not None
    except (ImportError, ValueError):
        return False


_LIBCUDA_PATHS = ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
                  "/usr/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1")
# Present whenever an NVIDIA kernel driver is loaded (the last one under WSL).
_DRIVER_NODES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg")


def _driver_present() -> bool:
    """Whether a CUDA driver library can be found (checked before importing numba.cuda,
    which takes a second or two). On Linux a machine without an NVIDIA kernel driver is
    answered from a few file checks: the library search (``ldconfig``, 10 ms) runs only
    where a driver is loaded but its library is not at a standard path."""
    if any(os.path.exists(p) for p in _LIBCUDA_PATHS):
        return True
    if sys.platform.startswith("linux") and not any(os.path.exists(p) for p in _DRIVER_NODES):
        return False
    return ctypes.util.find_library("cuda") is not None


@functools.lru_cache(maxsize=None)
def cuda_module():
    """``numba.cuda``, or None when it cannot be imported."""
    if not installed():
        return None
    try:
        from numba import cuda
    except Exception:  # noqa: BLE001 - a broken CUDA toolkit is "not available"
        return None
    return cuda


_NO_GPU = ("no CUDA GPU or driver was found (numba.cuda.is_available() is False); "
           "install an NVIDIA driver, or set NUMBA_ENABLE_CUDASIM=1 to run kernels in "
           "Numba's CUDA simulator")


@functools.lru_cache(maxsize=None)
def unavailable_reason():
    """None when kernels can run here; otherwise why not and what to install."""
    from . import compat
    if not installed():
        return ("numba-cuda is not installed (pip install 'absjit[cuda]', which installs "
                "numba-cuda; or set NUMBA_ENABLE_CUDASIM=1 with numba-cuda installed to "
                "run kernels in Numba's CUDA simulator)")
    if not simulator() and not _driver_present():  # file checks: cheap on a CPU machine
        return _NO_GPU
    problem = compat.numba_cuda_problem()
    if problem:
        return problem
    cuda = cuda_module()
    if cuda is None:
        return "numba.cuda failed to import (reinstall numba-cuda: pip install 'absjit[cuda]')"
    if simulator():
        return None
    try:
        ok = cuda.is_available()
    except Exception:  # noqa: BLE001 - driver errors mean "no GPU"
        ok = False
    return None if ok else _NO_GPU


@functools.lru_cache(maxsize=None)
def device_info() -> dict:
    """``{"name", "cc", "sm_count", "max_threads"}`` of the current device; the
    simulator reports ``cc="sim"`` (a fixed cache-key part)."""
    cuda = cuda_module()
    if simulator():
        return {"name": "Numba CUDA simulator", "cc": "sim", "sm_count": 1,
                "max_threads": 1024}
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    return {"name": name, "cc": "%d.%d" % dev.compute_capability,
            "sm_count": int(dev.MULTIPROCESSOR_COUNT),
            "max_threads": int(dev.MAX_THREADS_PER_BLOCK)}


def threads_per_block() -> int:
    """256 on a GPU. The simulator runs every thread as a Python thread, so it gets
    one warp's worth: results do not depend on it (kernels stride over the grid)."""
    return 32 if simulator() else 256


def launch_shape(n: int, threads: int | None = None) -> tuple:
    """``(blocks, threads)`` for a grid-stride loop over ``n`` items: enough blocks to
    fill every multiprocessor 32 times over, never more than the items need."""
    threads = threads or threads_per_block()
    info = device_info()
    cap = 2 if simulator() else info["sm_count"] * 32
    blocks = max(1, min(cap, math.ceil(max(n, 1) / threads)))
    return blocks, threads


def _describe_memory() -> str:
    try:
        free, total = cuda_module().current_context().get_memory_info()
        return f"; device memory: {free} of {total} bytes free"
    except Exception:  # noqa: BLE001 - best effort only
        return ""


def _is_oom(e) -> bool:
    text = f"{type(e).__name__} {e}".upper()
    return getattr(e, "code", None) == 2 or "OUT_OF_MEMORY" in text or \
        "OUT OF MEMORY" in text or isinstance(e, MemoryError)


def _raise_oom(e, shape, dtype, what):
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raise CudaOutOfMemoryError(
        f"CUDA out of memory while allocating {what} of shape {tuple(shape)} and dtype "
        f"{np.dtype(dtype).name} ({nbytes} bytes){_describe_memory()}") from e


def empty(shape, dtype):
    """A fresh device array; :class:`CudaOutOfMemoryError` (with the sizes) on OOM."""
    try:
        return cuda_module().device_array(tuple(shape), np.dtype(dtype))
    except Exception as e:  # noqa: BLE001 - only OOM is translated
        if _is_oom(e):
            _raise_oom(e, shape, dtype, "a device array")
        raise


def to_device(value):
    """A host value copied to a fresh device array (C-contiguous)."""
    value = np.asarray(value)
    if not value.flags.c_contiguous:  # (np.ascontiguousarray would make 0-d 1-d)
        value = value.copy(order="C")
    try:
        return cuda_module().to_device(value)
    except Exception as e:  # noqa: BLE001
        if _is_oom(e):
            _raise_oom(e, value.shape, value.dtype, "a copy of a host array")
        raise


def is_device_array(x) -> bool:
    """Whether ``x`` is a device array of Numba or of another library (anything with
    ``__cuda_array_interface__``: CuPy, PyTorch), or of the simulator."""
    return (hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray)) \
        or _is_sim_array(x)


def _is_sim_array(x) -> bool:
    return type(x).__name__ == "FakeCUDAArray"


def as_device(x, dtype=None):
    """``x`` as a device array: an absjit device Array's buffer, a device array as is,
    any object with ``__cuda_array_interface__`` (CuPy, PyTorch) as a zero-copy view,
    anything else copied from the host."""
    from .array import CudaArray
    buf = x._buf if isinstance(x, CudaArray) else None
    if buf is None:
        if _is_sim_array(x):
            buf = x
        elif hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
            buf = cuda_module().as_cuda_array(x)
        else:
            host = getattr(x, "_value", None)
            host = np.asarray(x if host is None else host)
            if dtype is not None and host.dtype != dtype:
                host = host.astype(dtype)
            return to_device(host)
    if dtype is not None and np.dtype(buf.dtype) != np.dtype(dtype):
        return to_device(to_host(buf).astype(dtype))
    return buf


def to_host(buf) -> np.ndarray:
    """A host copy of a device array (waits for the kernels writing it)."""
    return buf.copy_to_host()


# -- device functions the kernels call -----------------------------------------------
def _idiv_source(dt) -> str:
    """Integer division truncating toward zero; ``x // 0 == -1``; ``MIN // -1 == MIN``
    (the rules of ``absjit.ops.elementwise``), as Python source of a device function."""
    ctor = f"np.{np.dtype(dt).name}"
    if np.dtype(dt).kind == "i":
        return (f"def _idiv_{dt}(x, y):\n"
                f"    if y == 0:\n        return {ctor}(-1)\n"
                f"    if y == -1:\n        return {ctor}(-x)\n"
                f"    q = x // y\n"
                f"    if x % y != 0 and (x < 0) != (y < 0):\n        q += 1\n"
                f"    return {ctor}(q)\n")
    # unsigned: -1 wraps to the largest value
    return (f"def _idiv_{dt}(x, y):\n"
            f"    if y == 0:\n        return {ctor}({np.iinfo(dt).max})\n"
            f"    return {ctor}(x // y)\n")


_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

# Accumulator dtypes a tree reduction shuffles, and the type each travels as:
# ``shfl_down_sync`` moves 32- and 64-bit ints and floats only.
_SHUFFLE_AS = {"float32": None, "float64": None, "int32": None, "int64": None,
               "bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int32",
               "uint16": "int32", "uint32": "int64", "uint64": "int64"}


def _shfl_source(dt) -> str:
    """``_shfl_down_<dt>(v, delta)``: the value of lane ``lane + delta`` of the warp
    (its own value past lane 31), as Python source of a device function."""
    wide = _SHUFFLE_AS[dt]
    if wide is None:
        body = "cuda.shfl_down_sync(0xffffffff, v, delta)"
    elif dt == "bool":
        body = "cuda.shfl_down_sync(0xffffffff, np.int32(v), delta) != 0"
    else:
        body = f"np.{dt}(cuda.shfl_down_sync(0xffffffff, np.{wide}(v), delta))"
    return f"def _shfl_down_{dt}(v, delta):\n    return {body}\n"


def sim_shfl_down(v, delta, dtype):
    """The simulator's ``shfl_down_sync`` (it has no warp operations): every thread of
    the block writes its value to a block-wide scratch row, waits at a barrier, reads
    lane ``lane + delta`` of its warp, waits again. Exact as long as every thread of
    the block makes the same calls, which the tree reductions guarantee."""
    from numba.cuda.simulator.kernel import _get_kernel_context
    ctx = _get_kernel_context()
    scratch = ctx.__dict__.setdefault("absjit_shuffle", {})
    row = scratch.get(dtype)
    if row is None:
        row = scratch.setdefault(dtype, np.zeros(ctx.blockDim.x, dtype))
    tid = ctx.threadIdx.x
    row[tid] = v
    ctx.syncthreads()
    out = row[tid + delta] if tid % 32 + delta < 32 and tid + delta < len(row) else row[tid]
    ctx.syncthreads()
    return out


@functools.lru_cache(maxsize=None)
def kernel_namespace() -> dict:
    """The globals generated kernels see: ``np``, ``math`` (the NumPy-backed stand-in
    under the simulator), ``cuda``, ``numba``, the ``_idiv_*`` device functions and the
    ``_shfl_down_*`` warp shuffles (:func:`sim_shfl_down` under the simulator)."""
    import numba

    from .device_rules import SIM_MATH
    cuda = cuda_module()
    ns = {"np": np, "math": SIM_MATH if simulator() else math, "cuda": cuda,
          "numba": numba}
    helpers: dict = {"np": np}
    inline = {} if simulator() else {"forceinline": True}
    for dt in _INT_DTYPES:
        exec(_idiv_source(dt), helpers)  # noqa: S102 - our own template
        ns[f"_idiv_{dt}"] = cuda.jit(device=True, **inline)(helpers[f"_idiv_{dt}"])
    from .device_rules import LIBDEVICE_CALLS
    for fn, ufunc in LIBDEVICE_CALLS.items():
        for dt, suffix in (("float32", "f"), ("float64", "")):
            ns[f"_ld_{fn}_{dt}"] = ufunc if simulator() else \
                getattr(cuda.libdevice, fn + suffix)
    for dt in _SHUFFLE_AS:
        if simulator():
            ns[f"_shfl_down_{dt}"] = functools.partial(sim_shfl_down, dtype=np.dtype(dt))
        else:
            shfl = {"np": np, "cuda": cuda}
            exec(_shfl_source(dt), shfl)  # noqa: S102 - our own template
            ns[f"_shfl_down_{dt}"] = cuda.jit(device=True, **inline)(shfl[f"_shfl_down_{dt}"])
    # The scalar spellings shared with the cpu backend call these by name: fma (one
    # rounding: CUDA's fmaf; the simulator runs the reference implementation) and the
    # Threefry cipher (the cpu backend's functions, compiled as device functions).
    ns["_fma_float32"] = _sim_fma_float32 if simulator() else cuda.fma
    ns.update(_threefry_device_functions(cuda, inline))
    return ns


def _sim_fma_float32(a, b, c):
    from ...ops.fma import _fma_impl
    return np.float32(_fma_impl(a, b, c)[0])


def _threefry_device_functions(cuda, inline) -> dict:
    """``_threefry2x32_x0`` / ``_x1`` / ``_xor`` as device functions: the shared Python
    functions (:mod:`absjit.backends.numba.threefry`) compiled for the device (plain
    Python under the simulator)."""
    from ..numba import threefry
    made = threefry.compiled(lambda fn: fn if simulator() else
                             cuda.jit(device=True, **inline)(fn))
    return {name: made[name] for name in threefry._ENTRY_POINTS}


def host_namespace() -> dict:
    """The globals of host drivers: scalar code between launches runs as Python with
    NumPy scalars (the cpu table's vectorisable kernels, ``_exp_float32``,
    ``_sin_float64`` …, are NumPy's functions here)."""
    ns = {"np": np, "math": math}
    helpers: dict = {"np": np}
    for dt in _INT_DTYPES:
        exec(_idiv_source(dt), helpers)  # noqa: S102
        ns[f"_idiv_{dt}"] = helpers[f"_idiv_{dt}"]
    for name, fn in _CPU_KERNELS.items():
        for dt in ("float32", "float64"):
            ns[f"_{name}_{dt}"] = fn
    # fused multiply-add in host scalar code: a float32 product is exact in float64, so
    # only the sum rounds twice (float64, then float32: rarely not the fused result); a
    # float64 one is computed in long double (closer than unfused, not always fused)
    ns["_fma_float32"] = lambda a, b, c: np.float32(np.float64(a) * np.float64(b)
                                                    + np.float64(c))
    ns["_fma_float64"] = lambda a, b, c: np.float64(np.longdouble(a) * np.longdouble(b)
                                                    + np.longdouble(c))
    return ns


# The cpu backend's scalar kernels by name, as NumPy functions (same IEEE results).
_CPU_KERNELS = {"exp": np.exp, "log": np.log, "expm1": np.expm1, "log1p": np.log1p,
                "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "atan": np.arctan,
                "sin": np.sin, "cos": np.cos, "tan": np.tan}


# -- arrays on the device: what CudaArray and the device API call -----------------
def synchronize() -> None:
    """Wait for every kernel launched so far (launches are asynchronous)."""
    cuda_module().synchronize()


def device_names() -> list:
    """One name per visible device."""
    if simulator():
        return [device_info()["name"]]
    names = []
    for gpu in cuda_module().gpus:
        n = gpu.name
        names.append(n.decode() if isinstance(n, bytes) else str(n))
    return names


def array_interface(buf) -> dict:
    """``__cuda_array_interface__`` (version 3) of ``buf``, marked read-only. Under the
    simulator the pointer is the host memory the simulated device array lives in."""
    if hasattr(buf, "__cuda_array_interface__"):
        cai = dict(buf.__cuda_array_interface__)
    else:  # the simulator's arrays are NumPy arrays underneath
        host = buf._ary
        cai = {"shape": tuple(host.shape), "typestr": host.dtype.str,
               "data": (host.__array_interface__["data"][0], False), "version": 3,
               "strides": None if host.flags.c_contiguous else tuple(host.strides)}
    cai["data"] = (cai["data"][0], True)
    return cai


def dlpack(buf, **kwargs):
    """A DLPack capsule of the device buffer ``buf``, made by CuPy (zero-copy)."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001
        raise BufferError("DLPack export of a CUDA absjit.Array needs CuPy (pip install "
                          "cupy-cuda12x); __cuda_array_interface__ works without it "
                          "(torch.as_tensor(a, device='cuda'))") from e
    return cupy.asarray(buf).__dlpack__(
        **{k: v for k, v in kwargs.items() if v is not None})


def put(value, weak_type: bool = False):
    """``value`` (a host array, an absjit Array, or a CUDA array of another library) as
    an absjit ``CudaArray``; a foreign CUDA array is wrapped without a copy."""
    from .array import CudaArray
    return CudaArray._wrap(as_device(value), weak_type)
