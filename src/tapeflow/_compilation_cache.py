"""The persistent compilation cache: an XLA program compiled once is kept on disk, so that a
program's second run (a new process) compiles nothing it compiled before.

On by default, in `$XDG_CACHE_HOME/tapeflow/xla` (`~/.cache/tapeflow/xla`), in a subdirectory named
after the JAX and jaxlib versions; JAX's own key also holds the backend, the device and the XLA
flags, so an upgrade never loads a stale program. The environment variable `TAPEFLOW_CACHE_DIR`
moves it (`0`, `off` or an empty value turn it off), and so does `set_compilation_cache_dir` at any
time. A cache directory the user configured in JAX itself is left as it is. The cache is bounded:
when a process starts with more than 2 GiB in it, the programs used least recently are deleted down
to 1.5 GiB (one directory scan per process, on a thread of its own: with ~100,000 entries it takes
~0.4 s; JAX's own eviction would scan the directory at every compilation). Processes may share it:
an entry is written once, and an unreadable one is compiled again.
"""

from __future__ import annotations

import functools
import os
import threading

import jax
import jaxlib

__all__ = ["set_compilation_cache_dir", "get_compilation_cache_dir"]

ENV = "TAPEFLOW_CACHE_DIR"
MAX_BYTES = 2 << 30
_OFF = ("", "0", "off", "none", "false")
_current: list = [None]


def _default_dir() -> str | None:
    env = os.environ.get(ENV)
    if env is not None:
        return None if env.strip().lower() in _OFF else os.path.expanduser(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tapeflow", "xla")


def set_compilation_cache_dir(path: str | os.PathLike | None) -> None:
    """Keep compiled XLA programs in `path` from now on (None: keep none).

    Example:
        >>> import tapeflow as tp
        >>> old = tp.get_compilation_cache_dir()
        >>> tp.set_compilation_cache_dir(None)
        >>> tp.get_compilation_cache_dir() is None
        True
        >>> tp.set_compilation_cache_dir(old)
    """
    from jax.experimental.compilation_cache import compilation_cache

    where = None
    if path is not None:
        where = os.path.join(os.fspath(path), f"jax-{jax.__version__}-jaxlib-{jaxlib.__version__}")
        os.makedirs(where, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", where)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # every program: most are small
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    compilation_cache.reset_cache()  # the next compilation opens the new directory
    if where is not None:  # (a scan of the whole directory: off the program's own thread)
        threading.Thread(target=_trim, args=(where, MAX_BYTES), name="tapeflow-cache-trim", daemon=True).start()
    _current[0] = None if path is None else os.fspath(path)


def _trim(where: str, max_bytes: int) -> None:
    """Delete the least recently used programs in `where` when it holds more than `max_bytes`."""
    try:
        entries = [(e.stat().st_atime, e.stat().st_size, e.path) for e in os.scandir(where) if e.is_file()]
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return
    with XLA_LOCK:  # (no entry of this process is read or written meanwhile)
        for _, size, path in sorted(entries):
            if total <= max_bytes * 3 // 4:
                break
            try:
                os.remove(path)
                total -= size
            except OSError:  # removed by another process meanwhile
                pass


def get_compilation_cache_dir() -> str | None:
    """Where compiled XLA programs are kept (None when the cache is off or JAX's own setting is used).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.get_compilation_cache_dir()
        >>> d is None or isinstance(d, str)
        True
    """
    return _current[0]


#: Held while the adaptive-eager compiler thread compiles and while any thread reads or writes a cache entry:
#: XLA's CPU client can abort when an executable is serialised while another thread compiles. Other threads
#: skip the cache rather than wait while the compiler thread holds it.
XLA_LOCK = threading.RLock()


#: Cache entries of programs the compiler thread compiled, written later by another thread (`write_deferred`).
_deferred: list = []


def write_deferred(block: bool = False) -> None:
    """Write the cache entries of the programs the compiler thread compiled. The compiler thread does not
    write them itself: it would serialise them right after its compilation, while the program's other threads
    may be compiling. The caller (not the compiler thread) holds `XLA_LOCK` meanwhile, so no background
    compilation runs; without `block` it gives up at once when the compiler thread is busy."""
    if not _deferred or not XLA_LOCK.acquire(blocking=block):
        return
    try:
        while _deferred:
            fn, args, kwargs = _deferred.pop()
            try:
                fn(*args, **kwargs)
            except Exception:  # noqa: BLE001 - an entry not written is compiled again next time
                pass
    finally:
        XLA_LOCK.release()


def _locked(fn, writes: bool):
    skipped = None if writes else (None, None)  # (what the entry points return for no entry)

    @functools.wraps(fn)
    def locked(*args, **kwargs):
        if threading.current_thread().name == COMPILER_THREAD:
            if writes:  # written later by another thread (see `write_deferred`)
                _deferred.append((fn, args, kwargs))
                return None
            with XLA_LOCK:
                return fn(*args, **kwargs)
        # Another thread: while the compiler thread holds the lock for a long compilation, compiling this op
        # again costs less than waiting for it; its entry is written later.
        if not XLA_LOCK.acquire(blocking=False):
            if writes:
                _deferred.append((fn, args, kwargs))
            return skipped
        try:
            return fn(*args, **kwargs)
        finally:
            XLA_LOCK.release()
    locked._tapeflow_locked = True
    return locked


COMPILER_THREAD = "tapeflow-compiler"


def _guard_cache_io() -> None:
    """Serialise JAX's cache reads and writes with the compiler thread (see `XLA_LOCK`)."""
    try:
        from jax._src import compilation_cache as cc
    except ImportError:  # pragma: no cover - a JAX without that module has no such entry points either
        return
    for name in ("put_executable_and_time", "get_executable_and_time"):
        fn = getattr(cc, name, None)
        if fn is not None and not getattr(fn, "_tapeflow_locked", False):
            setattr(cc, name, _locked(fn, writes=name.startswith("put")))


def install_default() -> None:
    """Turn the cache on at import, unless the environment turns it off or JAX already has a directory."""
    _guard_cache_io()
    if jax.config.jax_compilation_cache_dir:
        return
    path = _default_dir()
    if path is None:
        return
    try:
        set_compilation_cache_dir(path)
    except OSError:  # a read-only home: run without a cache
        _current[0] = None
