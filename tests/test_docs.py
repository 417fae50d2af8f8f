"""The docstring examples run as doctests, and every function of the op namespace has one."""

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import tapeflow as tp
from tapeflow import _ops

# Every tapeflow module's docstring examples run, except:
SKIPPED = {
    # examples that build and run whole models; each takes 10-60 s, mostly XLA compilation
    "tapeflow.nn.modules.transformer", "tapeflow.nn.modules.rnn", "tapeflow.nn.modules.attention",
}
DOCTEST_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(tp.__path__, "tapeflow.")
    if m.name not in SKIPPED and not m.name.startswith("tapeflow.torch") and not m.name.endswith("__main__")
)


def _examples(module_name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, globs={"tp": tp}) if t.examples]


@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_docstring_examples(module_name):
    tests = _examples(module_name)
    if not tests:
        pytest.skip(f"{module_name} has no examples")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for t in tests:
        tp.manual_seed(0)
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {module_name} failed (output above)"


def test_the_doctests_find_examples():
    names = {t.name.rsplit(".", 1)[-1] for t in _examples("tapeflow._ops.elementwise") + _examples("tapeflow._ops.unary")}
    assert {"add", "exp", "where", "bitwise_or"} <= names


def test_every_op_has_an_example():
    missing = sorted(name for name in _ops.__all__
                     if callable(getattr(_ops, name)) and not isinstance(getattr(_ops, name), type)
                     and ">>>" not in (getattr(_ops, name).__doc__ or ""))
    assert not missing, f"op namespace functions without a `>>>` example in their docstring: {missing}"


def test_a_wrong_example_fails():
    def f():
        """
        >>> tp.tensor([1.0, 2.0]) * 2
        tensor([2., 5.])
        """
    test = doctest.DocTestFinder().find(f, "f", globs={"tp": tp})[0]
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 1


def _python_blocks(page: str) -> list[str]:
    text = (Path(__file__).resolve().parent.parent / "docs" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("page", ["getting_started.md", "from_jax.md"])
def test_tutorial_pages_run(page, capsys):
    """The pages' code blocks run in order in one namespace (training loops shortened to 3 steps)."""
    blocks = _python_blocks(page)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block.replace("range(201)", "range(3)"), page, "exec"), namespace)
    if page == "getting_started.md":
        assert "step   0  loss" in capsys.readouterr().out
        assert namespace["grads"]["0.weight"].shape == (32, 2)
        assert tuple(namespace["z"].grad.shape) == (3,)


PUBLIC_MODULES = ["tapeflow", "tapeflow.nn", "tapeflow.nn.functional", "tapeflow.nn.init", "tapeflow.nn.utils",
                  "tapeflow.nn.utils.prune",
                  "tapeflow.linalg", "tapeflow.utils.data", "tapeflow.optim", "tapeflow.optim.lr_scheduler",
                  "tapeflow.autograd", "tapeflow.autograd.functional", "tapeflow.func", "tapeflow.interop",
                  "tapeflow.distributions", "tapeflow.testing", "tapeflow.special"]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_callable_has_an_example(module_name):
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    missing = [n for n in names if callable(obj := getattr(module, n, None)) and not isinstance(obj, type(tp))
               and ">>>" not in (getattr(obj, "__doc__", None) or "")]
    assert not missing, f"{module_name}: public callables without a docstring example: {missing}"
