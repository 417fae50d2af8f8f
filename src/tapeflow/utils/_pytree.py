"""PyTorch's pytree utilities (`torch.utils._pytree`): flatten nested containers to a list of leaves and a
`TreeSpec`, rebuild them, and map functions over their leaves.

The rules are PyTorch's, which differ from JAX's (`jax.tree_util`) in two ways programs notice: `None` is a
leaf, not an empty node, and a dict's leaves come in insertion order, not sorted by key. Tuples, lists,
dicts, named tuples, `OrderedDict`, `defaultdict` and `deque` are nodes; `register_pytree_node` adds more.
Everything else (tensors, numbers, strings) is a leaf.

Example:
    >>> from tapeflow.utils import _pytree as pytree
    >>> leaves, spec = pytree.tree_flatten({"b": 1, "a": (2, None)})
    >>> leaves
    [1, 2, None]
    >>> pytree.tree_unflatten([10, 20, 30], spec)
    {'b': 10, 'a': (20, 30)}
"""

from __future__ import annotations

import collections
import dataclasses
import types
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["PyTree", "TreeSpec", "LeafSpec", "SequenceKey", "MappingKey", "GetAttrKey", "keystr", "key_get",
           "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten",
           "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "map_only", "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only",
           "tree_any_only", "treespec_pprint", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance"]

PyTree = Any


class NodeDef(NamedTuple):
    """How one node type comes apart and goes back together."""

    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict = {}


def register_pytree_node(cls, flatten_fn: Callable, unflatten_fn: Callable, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn: Callable | None = None) -> None:
    """Make instances of `cls` pytree nodes: `flatten_fn(obj) -> (children, context)` and
    `unflatten_fn(children, context) -> obj`; `flatten_with_keys_fn(obj) -> ([(key, child), ...], context)`
    lets `tree_flatten_with_path` name the children. (The serialisation arguments are accepted and unused:
    tree specs are not serialised here.)

    Example:
        >>> from tapeflow.utils import _pytree as pytree
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
        >>> pytree.tree_leaves([Pair(1, 2), 3])
        [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None) -> None:
    """The older spelling of `register_pytree_node` (string conversions accepted and unused)."""
    register_pytree_node(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn=flatten_with_keys_fn)


# -- keys: where a leaf sits ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """A position in a sequence (`[i]`)."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """A key of a mapping (`['name']`)."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """An attribute (`.name`), as a named tuple's fields."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: tuple) -> str:
    """A key path as the indexing code that follows it.

    Example:
        >>> from tapeflow.utils._pytree import keystr, MappingKey, SequenceKey
        >>> keystr((SequenceKey(1), MappingKey("a")))
        "[1]['a']"
    """
    return "".join(str(k) for k in kp)


def key_get(obj, kp: tuple):
    """The value at key path `kp` in `obj`.

    Example:
        >>> from tapeflow.utils._pytree import key_get, MappingKey, SequenceKey
        >>> key_get([0, {"a": 5}], (SequenceKey(1), MappingKey("a")))
        5
    """
    for k in kp:
        obj = k.get(obj)
    return obj


# -- the built-in node types ---------------------------------------------------------------------------------
def is_namedtuple_class(cls) -> bool:
    """Whether `cls` is a named tuple class (a tuple subclass with `_fields` and `_make`).

    Example:
        >>> import collections
        >>> from tapeflow.utils._pytree import is_namedtuple_class
        >>> is_namedtuple_class(collections.namedtuple("P", "x y")), is_namedtuple_class(tuple)
        (True, False)
    """
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple) \
        and all(type(f) is str for f in cls._fields) and callable(getattr(cls, "_make", None))


def is_namedtuple_instance(obj) -> bool:
    """Whether `obj` is an instance of a named tuple class.

    Example:
        >>> import collections
        >>> from tapeflow.utils._pytree import is_namedtuple_instance
        >>> is_namedtuple_instance(collections.namedtuple("P", "x")(1)), is_namedtuple_instance((1,))
        (True, False)
    """
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj) -> bool:
    """Whether `obj` is a named tuple class or instance.

    Example:
        >>> from tapeflow.utils._pytree import is_namedtuple
        >>> is_namedtuple((1, 2))
        False
    """
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _sequence_keys(children) -> list:
    return [(SequenceKey(i), c) for i, c in enumerate(children)]


def _mapping_keys(d, keys) -> list:
    return [(MappingKey(k), d[k]) for k in keys]


def _register_builtins() -> None:
    node = register_pytree_node
    node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c),
         flatten_with_keys_fn=lambda t: (_sequence_keys(t), None))
    node(list, lambda t: (list(t), None), lambda c, _: list(c),
         flatten_with_keys_fn=lambda t: (_sequence_keys(t), None))
    node(dict, lambda d: (list(d.values()), list(d)), lambda c, keys: dict(zip(keys, c)),
         flatten_with_keys_fn=lambda d: (_mapping_keys(d, list(d)), list(d)))
    node(collections.namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c),
         flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)))
    node(OrderedDict, lambda d: (list(d.values()), list(d)), lambda c, keys: OrderedDict(zip(keys, c)),
         flatten_with_keys_fn=lambda d: (_mapping_keys(d, list(d)), list(d)))
    node(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
         lambda c, ctx: defaultdict(ctx[0], zip(ctx[1], c)),
         flatten_with_keys_fn=lambda d: (_mapping_keys(d, list(d)), [d.default_factory, list(d)]))
    node(deque, lambda d: (list(d), d.maxlen), lambda c, maxlen: deque(c, maxlen=maxlen),
         flatten_with_keys_fn=lambda d: (_sequence_keys(d), d.maxlen))


_register_builtins()
_BUILTIN = frozenset(SUPPORTED_NODES)
_DICTS = (dict, OrderedDict, defaultdict)


def _node_type(tree):
    return collections.namedtuple if is_namedtuple_instance(tree) else type(tree)


def tree_is_leaf(tree, is_leaf: Callable | None = None) -> bool:
    """Whether `tree` is a leaf: not of a registered node type, or `is_leaf(tree)` says so. (An empty list is a
    node without children, not a leaf.)

    Example:
        >>> from tapeflow.utils._pytree import tree_is_leaf
        >>> tree_is_leaf(1), tree_is_leaf(None), tree_is_leaf([])
        (True, True, False)
    """
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# -- tree specs ----------------------------------------------------------------------------------------------
class TreeSpec:
    """The structure of a pytree: its node type, the node's context (dict keys, a named tuple's class, ...)
    and the specs of its children; a leaf's spec is `LeafSpec()` (printed `*`).

    Example:
        >>> from tapeflow.utils._pytree import tree_structure
        >>> spec = tree_structure({"a": [1, 2], "b": 3})
        >>> spec
        TreeSpec(dict, ['a', 'b'], [TreeSpec(list, None, [*,
            *]),
          *])
        >>> spec.num_leaves, spec.num_nodes, spec.unflatten([7, 8, 9])
        (3, 5, {'a': [7, 8], 'b': 9})
    """

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs: list):
        self.type, self._context, self._children = type, context, list(children_specs)
        if type is None:
            if context is not None or self._children:
                raise AssertionError("leaf node should not have a context or children")
            self.num_nodes = self.num_leaves = 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in self._children)
            self.num_leaves = sum(c.num_leaves for c in self._children)
        self.num_children = len(self._children)

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self) -> list:
        return self._children

    def is_leaf(self) -> bool:
        """Whether this spec is a leaf's."""
        return self.type is None

    def children(self) -> list:
        """The children's specs (a new list)."""
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        """The spec of child `index`."""
        return self._children[index]

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        inner = ""
        if self._children:
            indent += 2
            parts = [self._children[0].__repr__(indent)]
            parts += ["\n" + " " * indent + c.__repr__(indent) for c in self._children[1:]]
            inner = ",".join(parts)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return str(self.type) == str(other.type) and self._context == other._context \
            and self._children == other._children

    def __hash__(self) -> int:
        ctx = self._context
        if self.type is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif self.type in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif self.type is not None and self.type not in _BUILTIN:
            ctx = None
        return hash((self.type, ctx, tuple(self._children)))

    def unflatten(self, leaves) -> PyTree:
        """The pytree of this structure holding `leaves` (in flattening order)."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.type is None:
            return next(it)
        return SUPPORTED_NODES[self.type].unflatten_fn([c._build(it) for c in self._children], self._context)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` where this spec has leaves (`tree` must have this structure down to them)."""
        out: list = []
        self._cut(tree, out)
        return out

    def _cut(self, node, out: list) -> None:
        if self.type is None:
            out.append(node)
            return
        node_type = _node_type(node)
        if self.type in _DICTS and node_type in _DICTS:  # (dicts of the three kinds match one another by keys)
            keys = self._context[1] if self.type is defaultdict else self._context
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if set(node) != set(keys):
                missing, extra = set(keys) - set(node), set(node) - set(keys)
                raise ValueError("Node keys mismatch" + (f"; missing key(s): {missing}" if missing else "")
                                 + (f"; extra key(s): {extra}" if extra else "") + ".")
            children = [node[k] for k in keys]
        else:
            if node_type != self.type:
                kind = "Node type" if self.type in _BUILTIN else "Type"
                raise ValueError(f"{kind} mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if node_type is not deque and context != self._context:
                raise ValueError(f"Node context mismatch for node type {self.type!r}; expected {self._context!r}, "
                                 f"but got {context!r}." if self.type in _BUILTIN
                                 else f"Node context mismatch for custom node type {self.type!r}.")
        for spec, child in zip(self._children, children):
            spec._cut(child, out)


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed `*`).

    Example:
        >>> from tapeflow.utils._pytree import LeafSpec
        >>> LeafSpec(), LeafSpec().is_leaf()
        (*, True)
    """

    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])


_LEAF = LeafSpec()


# -- flattening and mapping ----------------------------------------------------------------------------------
def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple:
    """`(leaves, spec)` of `tree`: its leaves left to right (dicts in insertion order) and its structure.

    Example:
        >>> from tapeflow.utils._pytree import tree_flatten
        >>> tree_flatten([1, {"z": 2, "a": None}])[0]
        [1, 2, None]
    """
    leaves: list = []

    def walk(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        node_type = _node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec: TreeSpec) -> PyTree:
    """The pytree of structure `treespec` holding `leaves` (the inverse of `tree_flatten`).

    Example:
        >>> from tapeflow.utils._pytree import tree_flatten, tree_unflatten
        >>> leaves, spec = tree_flatten((1, [2, 3]))
        >>> tree_unflatten([4, 5, 6], spec)
        (4, [5, 6])
    """
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                        f"{type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf: Callable | None = None):
    """An iterator over the leaves of `tree`, in flattening order.

    Example:
        >>> from tapeflow.utils._pytree import tree_iter
        >>> list(tree_iter({"a": (1, 2)}))
        [1, 2]
    """
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    """The leaves of `tree`, in flattening order.

    Example:
        >>> from tapeflow.utils._pytree import tree_leaves
        >>> tree_leaves([1, (2, {"k": 3})])
        [1, 2, 3]
    """
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf: Callable | None = None) -> TreeSpec:
    """The structure (`TreeSpec`) of `tree`.

    Example:
        >>> from tapeflow.utils._pytree import tree_structure
        >>> tree_structure((1, 2))
        TreeSpec(tuple, None, [*,
          *])
    """
    return tree_flatten(tree, is_leaf)[1]


def _flat_args(tree, rests, is_leaf):
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec, [leaves] + [spec.flatten_up_to(r) for r in rests]


def tree_map(func: Callable, tree, *rests, is_leaf: Callable | None = None) -> PyTree:
    """A pytree of `tree`'s structure holding `func(leaf, *corresponding subtrees of rests)`; each of `rests`
    must have `tree`'s structure down to `tree`'s leaves.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils._pytree import tree_map
        >>> tree_map(lambda a, b: a + b, [1, {"k": 2}], [10, {"k": 20}])
        [11, {'k': 22}]
        >>> tree_map(lambda t: t * 2, {"x": tp.ones(2), "y": [tp.zeros(1)]})["x"]
        tensor([2., 2.])
    """
    spec, args = _flat_args(tree, rests, is_leaf)
    return spec.unflatten(list(map(func, *args)))


def tree_map_(func: Callable, tree, *rests, is_leaf: Callable | None = None) -> PyTree:
    """Call `func` on each leaf (with the corresponding subtrees of `rests`) for its effect; return `tree`.

    Example:
        >>> from tapeflow.utils._pytree import tree_map_
        >>> seen = []
        >>> tree_map_(seen.append, [1, (2,)])
        [1, (2,)]
        >>> seen
        [1, 2]
    """
    _, args = _flat_args(tree, rests, is_leaf)
    deque(map(func, *args), maxlen=0)
    return tree


def tree_map_with_path(func: Callable, tree, *rests, is_leaf: Callable | None = None) -> PyTree:
    """`tree_map` with each leaf's key path as `func`'s first argument.

    Example:
        >>> from tapeflow.utils._pytree import tree_map_with_path, keystr
        >>> tree_map_with_path(lambda kp, v: keystr(kp), {"a": [0, 0]})
        {'a': ["['a'][0]", "['a'][1]"]}
    """
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    paths = [kp for kp, _ in pairs]
    args = [[v for _, v in pairs]] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(list(map(func, paths, *args)))


def tree_flatten_with_path(tree, is_leaf: Callable | None = None) -> tuple:
    """`([(key path, leaf), ...], spec)`: the leaves with where they sit.

    Example:
        >>> from tapeflow.utils._pytree import tree_flatten_with_path
        >>> tree_flatten_with_path([1, {"a": 2}])[0]
        [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), MappingKey(key='a')), 2)]
    """
    pairs: list = []

    def walk(node, path):
        if tree_is_leaf(node, is_leaf):
            pairs.append((path, node))
            return _LEAF
        node_type = _node_type(node)
        keyed = SUPPORTED_NODES[node_type].flatten_with_keys_fn
        if keyed is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. Please pass a "
                             "flatten_with_keys_fn argument to register_pytree_node.")
        children, context = keyed(node)
        return TreeSpec(node_type, context, [walk(c, (*path, k)) for k, c in children])

    spec = walk(tree, ())
    return pairs, spec


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    """`[(key path, leaf), ...]` of `tree`.

    Example:
        >>> from tapeflow.utils._pytree import tree_leaves_with_path, keystr
        >>> [keystr(kp) for kp, _ in tree_leaves_with_path({"w": (1, 2)})]
        ["['w'][0]", "['w'][1]"]
    """
    return tree_flatten_with_path(tree, is_leaf)[0]


def map_only(type_or_types_or_pred) -> Callable:
    """A decorator: the function applied only to values of the given type(s) (or for which the predicate holds),
    other values passed through.

    Example:
        >>> from tapeflow.utils._pytree import map_only
        >>> negate_ints = map_only(int)(lambda x: -x)
        >>> negate_ints(3), negate_ints("a")
        (-3, 'a')
    """
    t = type_or_types_or_pred
    if isinstance(t, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, t)
    elif callable(t):
        pred = t
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def decorate(func):
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return decorate


def tree_map_only(type_or_types_or_pred, func: Callable, tree, is_leaf: Callable | None = None) -> PyTree:
    """`tree_map` applying `func` only to leaves of the given type(s) (or matching the predicate).

    Example:
        >>> from tapeflow.utils._pytree import tree_map_only
        >>> tree_map_only(int, lambda x: -x, [1, "a", 2.0])
        [-1, 'a', 2.0]
    """
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func: Callable, tree, is_leaf: Callable | None = None) -> PyTree:
    """`tree_map_` calling `func` only on leaves of the given type(s) (or matching the predicate).

    Example:
        >>> from tapeflow.utils._pytree import tree_map_only_
        >>> seen = []
        >>> _ = tree_map_only_(str, seen.append, [1, "a", ("b",)])
        >>> seen
        ['a', 'b']
    """
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    """Whether `pred` holds for every leaf.

    Example:
        >>> from tapeflow.utils._pytree import tree_all
        >>> tree_all(lambda x: x > 0, [1, (2,)])
        True
    """
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    """Whether `pred` holds for some leaf.

    Example:
        >>> from tapeflow.utils._pytree import tree_any
        >>> tree_any(lambda x: x is None, [1, (None,)])
        True
    """
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    """Whether `pred` holds for every leaf of the given type(s).

    Example:
        >>> from tapeflow.utils._pytree import tree_all_only
        >>> tree_all_only(int, lambda x: x > 0, [1, -2.5])
        True
    """
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred: Callable, tree, is_leaf: Callable | None = None) -> bool:
    """Whether `pred` holds for some leaf of the given type(s).

    Example:
        >>> from tapeflow.utils._pytree import tree_any_only
        >>> tree_any_only(int, lambda x: x > 1, [1, 2.5])
        False
    """
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


class _Star:
    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The structure drawn as the pytree itself with `*` at the leaves.

    Example:
        >>> from tapeflow.utils._pytree import tree_structure, treespec_pprint
        >>> treespec_pprint(tree_structure([1, {"a": 2}]))
        "[*, {'a': *}]"
    """
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))
