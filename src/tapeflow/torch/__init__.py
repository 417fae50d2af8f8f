"""Run a PyTorch program on tapeflow, unchanged: `python -m tapeflow.torch train.py --its --args`.

`install()` makes `import torch` (and `torch.nn`, `torch.nn.functional`, `torch.optim`, `torch.utils.data`,
`torch.autograd`, `torch.func`, `torch.linalg`, ...) resolve to tapeflow, whose public layout mirrors
torch's: `torch.X` is `tapeflow.X`. What a program touches that tapeflow lacks fails at once with an error
naming the torch API: an `AttributeError` subclass for a missing name (so `hasattr` feature checks keep
working) and `ModuleNotFoundError` for a missing module. `uninstall()` undoes it.

Example (in a notebook):
    >>> import tapeflow.torch
    >>> tapeflow.torch.install()
    >>> import torch
    >>> torch.ones(2).sum()
    tensor(2.)
    >>> tapeflow.torch.uninstall()
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import runpy
import sys
import types

from .. import _dtype

__all__ = ["install", "uninstall", "installed", "run", "UnsupportedTorchAPI"]

#: What `torch.__version__` reads under the alias: the PyTorch API version tapeflow follows.
TORCH_API_VERSION = "2.13.0+tapeflow"


class UnsupportedTorchAPI(AttributeError):
    """A torch attribute that tapeflow does not provide (yet)."""


#: torch modules that tapeflow keeps elsewhere than `tapeflow.X`.
_RELOCATED = {"torch.ops": "tapeflow.torch._ops", "torch._C": "tapeflow.torch._C"}


def _target_name(fullname: str) -> str:
    return _RELOCATED.get(fullname) or "tapeflow" + fullname[len("torch"):]


#: Module attributes the import system sets on a module it creates.
_IMPORT_ATTRS = frozenset({"__spec__", "__loader__", "__package__", "__path__", "__file__", "__cached__"})


class _Alias(types.ModuleType):
    """`torch.X` seen through tapeflow: attribute reads and writes go to the tapeflow module."""

    def __init__(self, name: str, target: types.ModuleType):
        super().__init__(name, target.__doc__)
        object.__setattr__(self, "_tapeflow_module", target)
        object.__setattr__(self, "__path__", [])  # a package: submodules are found by the finder below

    def __getattr__(self, attr: str):
        target = object.__getattribute__(self, "_tapeflow_module")
        if attr == "__version__" and self.__name__ == "torch":
            return TORCH_API_VERSION
        try:
            value = getattr(target, attr)
        except AttributeError:
            value = None
        if isinstance(value, types.ModuleType):
            return importlib.import_module(f"{self.__name__}.{attr}")
        if value is not None or hasattr(target, attr):
            return value
        if not attr.startswith("__"):
            try:
                return importlib.import_module(f"{self.__name__}.{attr}")
            except ModuleNotFoundError:
                pass
        raise UnsupportedTorchAPI(f"{self.__name__}.{attr} is not supported by tapeflow yet (this PyTorch program "
                                  f"runs on tapeflow through tapeflow.torch); see the docs' list of the supported "
                                  "torch API")

    def __setattr__(self, attr: str, value) -> None:
        if isinstance(value, types.ModuleType):
            existing = getattr(object.__getattribute__(self, "_tapeflow_module"), attr, None)
            if existing is not None and not isinstance(existing, types.ModuleType):
                return  # a name that is both a submodule and a function (`autograd.gradcheck`): the function wins
        if isinstance(value, types.ModuleType) or attr in _IMPORT_ATTRS:
            # The import system binds `torch.nn` on `torch` and sets `__spec__`, `__package__`, ... on each
            # alias: keep those on the alias, never on tapeflow (tapeflow.nn must stay tapeflow's own module, and
            # tapeflow's relative imports must keep resolving against tapeflow's package names).
            object.__setattr__(self, attr, value)
        else:
            setattr(object.__getattribute__(self, "_tapeflow_module"), attr, value)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_tapeflow_module"))


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return _Alias(spec.name, importlib.import_module(_target_name(spec.name)))

    def exec_module(self, module) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Finds `torch` and `torch.*` as aliases of `tapeflow` and `tapeflow.*`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        name = _target_name(fullname)
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and not name.startswith(e.name) and e.name != name:
                raise  # a dependency of an existing tapeflow module is missing: report that
            raise ModuleNotFoundError(f"{fullname} is not supported by tapeflow yet (this PyTorch program runs on "
                                      "tapeflow through tapeflow.torch)", name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


_finder = _Finder()
_saved: dict = {}


def installed() -> bool:
    """Whether `import torch` currently resolves to tapeflow."""
    return _finder in sys.meta_path


def install() -> None:
    """Make `import torch` (and its submodules) resolve to tapeflow in this process."""
    if installed():
        return
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        _saved[name] = sys.modules.pop(name)  # a real torch imported before: set aside until uninstall()
    sys.meta_path.insert(0, _finder)
    _dtype.PREFIX[0] = "torch"  # dtypes, sizes and layouts print as the program expects (torch.float32)


def uninstall() -> None:
    """Undo `install()`: `import torch` finds whatever it found before."""
    if not installed():
        return
    sys.meta_path.remove(_finder)
    _dtype.PREFIX[0] = "tapeflow"
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.modules.update(_saved)
    _saved.clear()


def run(argv: list[str]) -> None:
    """Run `argv[0]` (a script path, or `-m module`) as `__main__` with `argv` as `sys.argv`, torch aliased."""
    if not argv:
        raise SystemExit("usage: python -m tapeflow.torch script.py [args ...]  |  python -m tapeflow.torch -m "
                         "module [args ...]")
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            raise SystemExit("python -m tapeflow.torch -m: a module name is needed")
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, str(__import__("pathlib").Path(argv[0]).resolve().parent))
        runpy.run_path(argv[0], run_name="__main__")
