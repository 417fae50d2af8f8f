"""`tapeflow.nn.utils.prune`: PyTorch's pruning utilities (`torch.nn.utils.prune`).

Pruning a tensor `name` of a module re-parametrises it as a parameter `name + "_orig"` times a buffer
`name + "_mask"` of zeros and ones: `module.<name>` becomes a plain tensor, recomputed before every forward
by a forward pre-hook (the pruning method itself), so gradients reach `<name>_orig` only where the mask is
one. Pruning the same tensor again narrows the mask (the methods are chained in a `PruningContainer`:
unstructured methods choose among the entries still kept, structured ones among the channels still kept),
and `remove` makes the pruning permanent. The state dict holds `<name>_orig` and `<name>_mask`, as
PyTorch's does, so checkpoints move between the two.

Masks are chosen as PyTorch chooses them: the smallest magnitudes (`topk`), norms along a dimension, or
random draws from the default generator (`rand_like` / `rand`, the same stream as PyTorch's CPU generator
after the same `manual_seed`). Where several entries tie for the last places pruned, which of them goes may
differ from PyTorch (its CPU `topk` orders ties by its selection algorithm).

Example:
    >>> import tapeflow as tp
    >>> from tapeflow.nn.utils import prune
    >>> m = tp.nn.Linear(3, 2)
    >>> with tp.no_grad():
    ...     _ = m.weight.copy_(tp.tensor([[0.1, -2.0, 0.3], [4.0, -0.5, 6.0]]))
    >>> _ = prune.l1_unstructured(m, "weight", amount=2)
    >>> m.weight_mask
    tensor([[0., 1., 0.],
            [1., 1., 1.]])
    >>> sorted(name for name, _ in m.named_parameters())
    ['bias', 'weight_orig']
    >>> _ = prune.remove(m, "weight")
    >>> m.weight
    Parameter containing:
    tensor([[ 0.0000, -2.0000,  0.0000],
            [ 4.0000, -0.5000,  6.0000]], requires_grad=True)
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import tapeflow as tp

from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way of choosing a mask; subclasses define `compute_mask` (and `PRUNING_TYPE`: "unstructured",
    "structured" with a `dim`, or "global"). An applied method is the forward pre-hook of its module.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> class KeepPositive(prune.BasePruningMethod):
        ...     PRUNING_TYPE = "unstructured"
        ...     def compute_mask(self, t, default_mask):
        ...         return default_mask * (t > 0)
        >>> m = tp.nn.Linear(2, 1)
        >>> with tp.no_grad():
        ...     _ = m.weight.copy_(tp.tensor([[-1.0, 2.0]]))
        >>> _ = KeepPositive.apply(m, "weight")
        >>> m.weight
        tensor([[-0., 2.]], grad_fn=<MulBackward0>)
    """

    _tensor_name: str  # set by `apply`

    def __call__(self, module, inputs):
        """The forward pre-hook: `module.<name>` recomputed from `<name>_orig` and `<name>_mask`."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for `t` (the importance scores of the tensor pruned), built on `default_mask` (the mask
        so far: what it zeroes stays zero)."""

    def apply_mask(self, module):
        """`<name>_mask * <name>_orig` of `module` (the mask cast to the tensor's dtype)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with `cls(*args, **kwargs)`: chained after the pruning already there, scored
        by `importance_scores` (a tensor of the same shape; the tensor itself when None). Returns the method
        now registered as the module's hook (a `PruningContainer` when the tensor was pruned before)."""
        method = _chained(cls, module, name, args, kwargs)
        orig = getattr(module, name)
        importance_scores = _scores(importance_scores, orig, f"parameter {name} of {module}")
        first = not isinstance(method, PruningContainer)
        if first:  # re-parametrise: the parameter moves to `<name>_orig`
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = tp.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=tp.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # leave the module as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask this method computes for it (scored by `importance_scores`, on top of
        `default_mask`, ones when None), without touching any module.

        Example:
            >>> import tapeflow as tp
            >>> from tapeflow.nn.utils import prune
            >>> prune.L1Unstructured(amount=1).prune(tp.tensor([3.0, -1.0, 2.0]))
            tensor([3., -0., 2.])
        """
        importance_scores = _scores(importance_scores, t, "tensor t")
        default_mask = default_mask if default_mask is not None else tp.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Make the pruning of `module` permanent: `<name>` is a parameter again, holding the pruned values;
        `<name>_orig` and `<name>_mask` are gone. (The pre-hook itself is unregistered by `prune.remove`.)"""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        pruned = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = pruned.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _scores(scores, t, what: str):
    """The importance scores: `scores` (PyTorch's check: the shape of `t`, which `what` names), or `t` itself."""
    if scores is None:
        return t
    if scores.shape != t.shape:
        raise AssertionError(f"importance_scores should have the same shape as {what}, got {scores.shape} vs "
                             f"{t.shape}")
    return scores


def _chained(cls, module, name, args, kwargs):
    """A new `cls(*args, **kwargs)` for `module.<name>`, chained after the pruning hook already on that tensor
    (which leaves the module's hooks: the result takes its place)."""
    found = [(k, h) for k, h in module._forward_pre_hooks.items()
             if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    for k, _ in found:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not found:
        return method
    old = found[0][1]
    if not isinstance(old, PruningContainer):
        old = PruningContainer(old)
    old.add_pruning_method(method)
    return old


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one tensor, in order: its mask is the latest method's, computed on what
    the earlier ones kept.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = tp.nn.Linear(4, 1)
        >>> with tp.no_grad():
        ...     _ = m.weight.copy_(tp.tensor([[1.0, -4.0, 3.0, 2.0]]))
        >>> _ = prune.l1_unstructured(m, "weight", amount=1)
        >>> hook = prune.L1Unstructured.apply(m, "weight", amount=1)
        >>> type(hook).__name__, len(hook)
        ('PruningContainer', 2)
        >>> m.weight_mask
        tensor([[0., 1., 1., 0.]])
    """

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Append `method` (acting on the same tensor) to the chain."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """`default_mask` narrowed by the latest method, which sees only what the mask keeps: the entries
        still one (unstructured), the channels along its `dim` not wholly zero (structured), or everything
        (global)."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            where = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            kept = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            where = tuple(kept if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            where = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        mask = default_mask.to(dtype=t.dtype)
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        mask[where] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the re-parametrisation with a mask of ones.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = prune.identity(tp.nn.Linear(2, 1), "bias")
        >>> m.bias_mask
        tensor([1.])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Re-parametrise `module.<name>` with a mask of ones."""
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes `amount` entries (a count, or a fraction of the entries): the flat indices `_pruned(t, n)`."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _count(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=tp.contiguous_format)
        if n:
            mask.view(-1)[self._pruned(t, n)] = 0
        return mask

    @abstractmethod
    def _pruned(self, t, n):
        """The flat indices of the `n` entries of `t` to prune."""


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries (a count, or a fraction of the entries) chosen at random.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> _ = tp.manual_seed(0)
        >>> int(prune.RandomUnstructured(amount=0.5).compute_mask(tp.ones(8), tp.ones(8)).sum())
        4
    """

    def _pruned(self, t, n):
        return tp.topk(tp.rand_like(t).view(-1), k=n).indices

    @classmethod
    def apply(cls, module, name, amount):
        """Prune `amount` random entries of `module.<name>`."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries (a count, or a fraction of the entries) of smallest magnitude.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> prune.L1Unstructured(amount=0.5).compute_mask(tp.tensor([0.5, -3.0, 0.1, 2.0]), tp.ones(4))
        tensor([0., 1., 0., 1.])
    """

    def _pruned(self, t, n):
        return tp.topk(tp.abs(t).view(-1), k=n, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prune the `amount` smallest-magnitude entries of `module.<name>` (or of `importance_scores`)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels (a count, or a fraction) along `dim`, chosen at random.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> _ = tp.manual_seed(0)
        >>> mask = prune.RandomStructured(amount=1, dim=0).compute_mask(tp.ones(3, 2), tp.ones(3, 2))
        >>> mask.sum(dim=1).tolist()
        [2.0, 2.0, 0.0]
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        channels = _channels(t, self.dim)
        n = _count(self.amount, channels)
        if not n:
            return default_mask
        drawn = tp.rand(channels)
        kept = drawn > tp.kthvalue(drawn, k=n).values
        mask = _channel_mask(t, self.dim, kept)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prune `amount` random channels of `module.<name>` along `dim`."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels (a count, or a fraction) along `dim` of smallest `n`-norm (`n` as
    `tp.norm`'s `p`: a number, `inf`, `-inf`, "fro" or "nuc").

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> t = tp.tensor([[1.0, 1.0], [3.0, 0.0], [0.5, 0.5]])
        >>> prune.LnStructured(amount=1, n=2, dim=0).compute_mask(t, tp.ones(3, 2))
        tensor([[1., 1.],
                [1., 1.],
                [0., 0.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        channels = _channels(t, self.dim)
        n = _count(self.amount, channels)
        dims = list(range(t.dim()))
        del dims[self.dim]
        keep = tp.topk(tp.norm(t, p=self.n, dim=dims), k=channels - n, largest=True).indices
        if not n:
            return default_mask
        mask = _channel_mask(t, self.dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prune the `amount` channels of `module.<name>` along `dim` of smallest `n`-norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given `mask` is zero.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> prune.CustomFromMask(tp.tensor([1, 0, 1])).compute_mask(tp.ones(3), tp.ones(3))
        tensor([1., 0., 1.])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prune `module.<name>` where `mask` is zero."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Re-parametrise `module.<name>` as `<name>_orig` times a mask of ones; returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = prune.identity(tp.nn.Linear(2, 1), "weight")
        >>> m.weight_mask
        tensor([[1., 1.]])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune `amount` entries (a count, or a fraction) of `module.<name>` chosen at random; returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> _ = tp.manual_seed(0)
        >>> m = prune.random_unstructured(tp.nn.Linear(4, 2), "weight", amount=0.25)
        >>> int((m.weight_mask == 0).sum())
        2
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the `amount` entries (a count, or a fraction) of `module.<name>` of smallest magnitude (or of
    smallest `importance_scores`, a tensor of the same shape); returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = tp.nn.Linear(3, 1, bias=False)
        >>> with tp.no_grad():
        ...     _ = m.weight.copy_(tp.tensor([[0.2, -0.1, 0.9]]))
        >>> prune.l1_unstructured(m, "weight", amount=1).weight
        tensor([[0.2000, -0.0000, 0.9000]], grad_fn=<MulBackward0>)
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune `amount` channels (a count, or a fraction) of `module.<name>` along `dim`, chosen at random;
    returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> _ = tp.manual_seed(0)
        >>> m = prune.random_structured(tp.nn.Linear(3, 4), "weight", amount=2, dim=0)
        >>> (m.weight_mask.sum(dim=1) == 0).sum().item()
        2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the `amount` channels (a count, or a fraction) of `module.<name>` along `dim` of smallest
    `n`-norm (of `importance_scores` when given); returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = tp.nn.Linear(2, 2, bias=False)
        >>> with tp.no_grad():
        ...     _ = m.weight.copy_(tp.tensor([[1.0, 2.0], [0.1, 0.1]]))
        >>> prune.ln_structured(m, "weight", amount=1, n=1, dim=0).weight_mask
        tensor([[1., 1.],
                [0., 0.]])
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the tensors `parameters` (pairs of module and name) together: `pruning_method(**kwargs)` (an
    unstructured method) chooses among all their entries at once (scored by `importance_scores`, a dict
    from pair to tensor, where given). Each tensor gets its share of the mask as a `CustomFromMask`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> a, b = tp.nn.Linear(2, 1, bias=False), tp.nn.Linear(2, 1, bias=False)
        >>> with tp.no_grad():
        ...     _ = a.weight.copy_(tp.tensor([[0.1, 0.2]])); _ = b.weight.copy_(tp.tensor([[3.0, 0.05]]))
        >>> prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=2)
        >>> a.weight_mask, b.weight_mask
        (tensor([[0., 1.]]), tensor([[1., 0.]]))
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", tp.ones_like(getattr(m, n))) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    mask = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=mask[start:start + p.numel()].view_as(p))
        start += p.numel()


def custom_from_mask(module, name, mask):
    """Prune `module.<name>` where `mask` is zero; returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = prune.custom_from_mask(tp.nn.Linear(2, 1), "weight", mask=tp.tensor([[0, 1]]))
        >>> m.weight_mask
        tensor([[0., 1.]])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of `module.<name>` permanent (see `BasePruningMethod.remove`) and drop its hook;
    returns `module`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> m = prune.l1_unstructured(tp.nn.Linear(3, 2), "weight", amount=2)
        >>> m = prune.remove(m, "weight")
        >>> (m.weight == 0).sum().item(), prune.is_pruned(m)
        (2, False)
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module) -> bool:
    """Whether `module` or any module under it has a pruning hook.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils import prune
        >>> net = tp.nn.Sequential(tp.nn.Linear(2, 2), tp.nn.ReLU())
        >>> prune.is_pruned(net)
        False
        >>> _ = prune.random_unstructured(net[0], "bias", amount=1)
        >>> prune.is_pruned(net)
        True
    """
    return any(isinstance(h, BasePruningMethod) for _, m in module.named_modules()
               for h in m._forward_pre_hooks.values())


def _check_amount(amount) -> None:
    """PyTorch's checks of a pruning amount: a count >= 0 or a fraction in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if amount < 0 if isinstance(amount, numbers.Integral) else not 0.0 <= float(amount) <= 1.0:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count(amount, size: int) -> int:
    """How many of `size` units `amount` prunes (a fraction rounds half to even, as Python's `round`)."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return amount
    return round(amount * size)


def _channels(t, dim) -> int:
    """The number of channels of `t` along `dim` (PyTorch's checks: `t` has 2+ dims, `dim` indexes one)."""
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {len(t.shape)} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return t.shape[dim]


def _channel_mask(t, dim, channels):
    """Zeros like `t` with ones in the `channels` (indices or a boolean mask) along `dim`."""
    mask = tp.zeros_like(t)
    mask[tuple(channels if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask
