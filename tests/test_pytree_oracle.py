"""`tapeflow.utils._pytree` against PyTorch's `torch.utils._pytree`: the same leaves, specs (and their printed
form), rebuilt trees, key paths, maps and errors over a table of trees."""

from __future__ import annotations

import collections
from collections import OrderedDict, defaultdict, deque

import pytest

import tapeflow as tp
from tapeflow.utils import _pytree as ours

torch = pytest.importorskip("torch")
theirs = pytest.importorskip("torch.utils._pytree")

Point = collections.namedtuple("Point", "x y")

TREES = {
    "leaf": 5,
    "none": None,
    "string": "abc",
    "empty list": [],
    "empty dict": {},
    "empty tuple": (),
    "flat list": [1, 2, 3],
    "dict insertion order": {"b": 1, "a": 2, "c": 3},
    "nested": {"b": 1, "a": (2, None, [3, 4]), "c": OrderedDict(x=5)},
    "namedtuple": Point(1, [2, Point(3, 4)]),
    "defaultdict": defaultdict(int, {"z": 1, "y": [2]}),
    "deque": deque([1, (2, 3)], maxlen=4),
    "deep": [[[[[1]]]], {"k": {"k": {"k": (2,)}}}],
    "mixed leaves": [1.5, "s", b"b", True, None, 3j],
}


def _run(lib, fn):
    try:
        return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name", list(TREES))
def test_flatten_and_rebuild_as_pytorch(name):
    tree = TREES[name]
    leaves_t, spec_t = theirs.tree_flatten(tree)
    leaves, spec = ours.tree_flatten(tree)
    assert leaves == leaves_t
    assert repr(spec) == repr(spec_t)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf()) == \
        (spec_t.num_leaves, spec_t.num_nodes, spec_t.num_children, spec_t.is_leaf())
    assert spec.context == spec_t.context
    assert ours.treespec_pprint(spec) == theirs.treespec_pprint(spec_t)
    new = list(range(100, 100 + len(leaves)))
    rebuilt, rebuilt_t = ours.tree_unflatten(new, spec), theirs.tree_unflatten(new, spec_t)
    assert rebuilt == rebuilt_t and type(rebuilt) is type(rebuilt_t)
    assert ours.tree_unflatten(leaves, spec) == tree
    assert ours.tree_leaves(tree) == theirs.tree_leaves(tree) == list(ours.tree_iter(tree))
    assert ours.tree_is_leaf(tree) == theirs.tree_is_leaf(tree)
    assert spec == ours.tree_structure(tree) and hash(spec) == hash(ours.tree_structure(tree))


@pytest.mark.parametrize("name", list(TREES))
def test_paths_as_pytorch(name):
    tree = TREES[name]
    pairs, spec = ours.tree_flatten_with_path(tree)
    pairs_t, spec_t = theirs.tree_flatten_with_path(tree)
    assert [(ours.keystr(kp), v) for kp, v in pairs] == [(theirs.keystr(kp), v) for kp, v in pairs_t]
    assert [repr(kp) for kp, _ in pairs] == [repr(kp) for kp, _ in pairs_t]
    assert repr(spec) == repr(spec_t)
    for kp, v in pairs:
        assert ours.key_get(tree, kp) is v
    got = ours.tree_map_with_path(lambda kp, v: (ours.keystr(kp), v), tree)
    want = theirs.tree_map_with_path(lambda kp, v: (theirs.keystr(kp), v), tree)
    assert got == want


def test_maps_as_pytorch():
    tree = {"w": [1, 2.5, "s"], "b": (None, 3)}
    for fn in (lambda P: P.tree_map(lambda v: (v, type(v).__name__), tree),
               lambda P: P.tree_map_only(int, lambda v: -v, tree),
               lambda P: P.tree_map_only((int, float), lambda v: v * 2, tree),
               lambda P: P.tree_map_only(lambda v: v is None, lambda v: "none", tree),
               lambda P: P.tree_map(lambda a, b: (a, b), [1, 2], [[3], {"z": 4}]),
               lambda P: P.tree_map(lambda a, b: a, {"a": 1, "b": 2}, OrderedDict(b=3, a=4)),
               lambda P: P.tree_all(lambda v: v is not None, tree), lambda P: P.tree_any(lambda v: v is None, tree),
               lambda P: P.tree_all_only(int, lambda v: v > 0, tree), lambda P: P.tree_any_only(str, len, tree),
               lambda P: P.tree_leaves(tree, is_leaf=lambda v: isinstance(v, list)),
               lambda P: P.tree_map(len, tree, is_leaf=lambda v: isinstance(v, (list, tuple)))):
        assert _run(ours, fn) == _run(theirs, fn)
    seen, seen_t = [], []
    assert ours.tree_map_(seen.append, tree) is tree
    theirs.tree_map_(seen_t.append, tree)
    assert seen == seen_t


BAD = {
    "arity": lambda P: P.tree_map(lambda a, b: a, [1, 2], [10]),
    "type": lambda P: P.tree_map(lambda a, b: a, [1], (1,)),
    "keys": lambda P: P.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}),
    "keys both ways": lambda P: P.tree_map(lambda a, b: a, {"a": 1, "c": 2}, {"b": 1, "a": 2}),
    "namedtuple class": lambda P: P.tree_map(lambda a, b: a, Point(1, 2), collections.namedtuple("Q", "x y")(1, 2)),
    "unflatten length": lambda P: P.tree_unflatten([1], P.tree_structure([1, {"a": 2}])),
    "unflatten not a spec": lambda P: P.tree_unflatten([1], [1]),
    "map_only argument": lambda P: P.map_only(3),
}


@pytest.mark.parametrize("name", list(BAD))
def test_errors_as_pytorch(name):
    got, want = _run(ours, BAD[name]), _run(theirs, BAD[name])
    assert got[0] == want[0] != "ok"
    assert got[1] == want[1]


def test_registered_nodes():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __eq__(self, other):
            return type(other) is Pair and (self.a, self.b) == (other.a, other.b)

    for P in (ours, theirs):
        P.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"), lambda c, ctx: Pair(*c),
                               flatten_with_keys_fn=lambda p, P=P: ([(P.GetAttrKey("a"), p.a),
                                                                     (P.GetAttrKey("b"), p.b)], "ctx"))
    try:
        tree = [Pair(1, (2, 3)), 4]
        assert ours.tree_leaves(tree) == theirs.tree_leaves(tree) == [1, 2, 3, 4]
        assert repr(ours.tree_structure(tree)) == repr(theirs.tree_structure(tree))
        assert ours.tree_map(lambda v: v * 2, tree) == theirs.tree_map(lambda v: v * 2, tree)
        assert [ours.keystr(k) for k, _ in ours.tree_leaves_with_path(tree)] == \
            [theirs.keystr(k) for k, _ in theirs.tree_leaves_with_path(tree)]
        again = lambda P: P.register_pytree_node(Pair, lambda p: ([], None), lambda c, ctx: Pair(0, 0))  # noqa: E731
        assert _run(ours, again) == _run(theirs, again)
    finally:
        del ours.SUPPORTED_NODES[Pair]
        theirs._deregister_pytree_node(Pair)


def test_without_keys_function_paths_are_refused():
    class Box:
        def __init__(self, v):
            self.v = v

    ours.register_pytree_node(Box, lambda b: ([b.v], None), lambda c, _: Box(*c))
    try:
        assert ours.tree_leaves([Box(1)]) == [1]
        with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn"):
            ours.tree_flatten_with_path([Box(1)])
    finally:
        del ours.SUPPORTED_NODES[Box]


def test_tensors_are_leaves_and_move_through_maps():
    batch = {"x": tp.ones(2, 3), "y": [tp.zeros(2), None], "meta": "id"}
    out = ours.tree_map_only(tp.Tensor, lambda t: t.to(tp.float64) + 1, batch)
    assert out["x"].dtype == tp.float64 and out["y"][1] is None and out["meta"] == "id"
    tp.testing.assert_close(out["y"][0], tp.ones(2, dtype=tp.float64))


def test_torch_namespace_finds_it():
    """Under `python -m tapeflow.torch`, `torch.utils._pytree` is this module."""
    import importlib

    assert importlib.import_module("tapeflow.torch")._target_name("torch.utils._pytree") == "tapeflow.utils._pytree"
