"""Storage identity against PyTorch: `data_ptr()`, `untyped_storage()` and `storage()` relate tensors, views and
aliases as PyTorch's do (the same offsets between addresses, the same sharing, the same sizes and bytes)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")


# Each case: from a base tensor `x` (2x3x4, float32, arange) to a tensor that PyTorch makes; both libraries run it.
CASES = {
    "itself": lambda x, lib: x,
    "slice": lambda x, lib: x[1:],
    "inner slice": lambda x, lib: x[:, 1:, 2:],
    "select": lambda x, lib: x[1, 2],
    "element": lambda x, lib: x[1, 2, 3],
    "view": lambda x, lib: x.view(6, 4),
    "flatten": lambda x, lib: x.flatten(),
    "last of flat": lambda x, lib: x.view(-1)[-1],
    "transpose": lambda x, lib: x.transpose(0, 2),
    "permute then slice": lambda x, lib: x.permute(2, 0, 1)[1:],
    "narrow": lambda x, lib: x.narrow(2, 1, 2),
    "unsqueeze": lambda x, lib: x.unsqueeze(1),
    "expand": lambda x, lib: x[:, :1].expand(2, 5, 4),
    "diagonal": lambda x, lib: x[0].diagonal(offset=1),
    "chunk": lambda x, lib: x.chunk(2, dim=2)[1],
    "unbind": lambda x, lib: x.unbind(1)[2],
    "detach": lambda x, lib: x.detach(),
    "data": lambda x, lib: x.data,
    "view dtype": lambda x, lib: x.view(lib.int32),
    "view narrower dtype": lambda x, lib: x[1:].view(lib.int16),
    "contiguous of contiguous": lambda x, lib: x.contiguous(),
    "in-place add": lambda x, lib: x.add_(1),
    "clone": lambda x, lib: x.clone(),
    "contiguous of transpose": lambda x, lib: x.transpose(0, 1).contiguous(),
    "reshape of transpose": lambda x, lib: x.transpose(0, 1).reshape(-1),
    "empty slice": lambda x, lib: x[:, :, 4:],
    "to same dtype": lambda x, lib: x.to(lib.float32),
    "to other dtype": lambda x, lib: x.to(lib.float64),
}


def _base(lib):
    return lib.arange(24, dtype=lib.float32).reshape(2, 3, 4).clone()


@pytest.mark.parametrize("name", list(CASES))
def test_addresses_relate_as_pytorchs(name):
    """The address of each result, less the base's, is PyTorch's (a copy: a storage of its own); the storage
    sizes and bytes agree."""
    seen = {}
    for lib in (torch, tp):
        x = _base(lib)
        y = CASES[name](x, lib)
        shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        offset = y.data_ptr() - x.data_ptr() if shares and y.numel() else None
        seen[lib.__name__] = (shares, offset, y.data_ptr() == 0, y.untyped_storage().nbytes(),
                              len(y.untyped_storage()), y.untyped_storage().tolist())
    assert seen["tapeflow"] == seen["torch"]


def test_copies_never_overlap_their_sources():
    for lib in (torch, tp):
        x = _base(lib)
        ys = [x.clone(), x * 2, x.transpose(0, 1).contiguous(), lib.zeros(5)]
        ranges = [(t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()) for t in (x, *ys)]
        for i, (a, n) in enumerate(ranges):
            for b, m in ranges[i + 1:]:
                assert a + n <= b or b + m <= a, lib.__name__


def test_address_is_stable_across_in_place_writes_and_backward():
    x = tp.ones(3, requires_grad=True)
    p = x.data_ptr()
    with tp.no_grad():
        x.mul_(2)
        x[1] = 5.0
    (x * x).sum().backward()
    assert x.data_ptr() == p
    g = x.grad.data_ptr()
    x.grad.zero_()
    assert x.grad.data_ptr() == g != p


def test_tied_weights_share_one_storage():
    """What checkpoint writers check: two modules holding one parameter report one storage."""
    for lib in (torch, tp):
        a, b = lib.nn.Linear(3, 3), lib.nn.Linear(3, 3)
        b.weight = a.weight
        ptrs = {n: p.untyped_storage().data_ptr() for n, p in [("a.w", a.weight), ("b.w", b.weight),
                                                                  ("a.b", a.bias), ("b.b", b.bias)]}
        assert ptrs["a.w"] == ptrs["b.w"] and len(set(ptrs.values())) == 3, lib.__name__


def test_empty_tensors_have_address_zero():
    for lib in (torch, tp):
        assert lib.empty(0).data_ptr() == 0
        assert lib.empty(0).untyped_storage().data_ptr() == 0
        assert lib.zeros(3)[1:1].data_ptr() == 0
        assert lib.zeros(3)[1:1].untyped_storage().nbytes() == 12


def test_typed_storage_as_pytorchs():
    for dtype in ("float32", "int64", "float16"):
        x_t = torch.arange(6).to(getattr(torch, dtype)).view(2, 3)[1]
        x = tp.arange(6).to(getattr(tp, dtype)).view(2, 3)[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s_t, s = x_t.storage(), x.storage()
        assert (s.size(), len(s), s.element_size(), s.nbytes(), s.tolist()) == \
            (s_t.size(), len(s_t), s_t.element_size(), s_t.nbytes(), s_t.tolist())
        assert s[4] == s_t[4] and str(s.dtype) == str(s_t.dtype).replace("torch", "tapeflow")
        assert s.untyped().tolist() == s_t.untyped().tolist()


def test_untyped_storage_reads_and_prints_as_pytorchs():
    x_t, x = torch.tensor([1.5, -2.0]), tp.tensor([1.5, -2.0])
    s_t, s = x_t.untyped_storage(), x.untyped_storage()
    assert s.tolist() == s_t.tolist() and s[3] == s_t[3] and list(s) == list(s_t)
    assert (s.element_size(), s.size(), s.is_shared(), s.is_pinned()) == \
        (s_t.element_size(), s_t.size(), s_t.is_shared(), s_t.is_pinned())
    assert repr(s) == repr(s_t).replace("torch", "tapeflow")
    assert isinstance(s, tp.UntypedStorage)
    n = tp.UntypedStorage(4)
    assert n.nbytes() == 4 and n.tolist() == [0, 0, 0, 0]
    with pytest.raises(TypeError, match="size"):
        tp.UntypedStorage(2.0)


def test_storage_warns_once_as_pytorch():
    from tapeflow import _storage

    _storage._warned.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tp.ones(2).storage()
        tp.ones(2).storage()
    assert [str(m.message) for m in w] == [_storage._TYPED_WARNING]
    assert "use tensor.untyped_storage() instead of tensor.storage()" in _storage._TYPED_WARNING


def test_pending_values_need_not_run():
    """Reading an address does not run an adaptive-eager segment (it is no host read)."""
    x = tp.ones(4)
    y = x * 2
    before = tp.adaptive_eager_stats()["segments run"]
    y.data_ptr(), y.untyped_storage().nbytes()
    assert tp.adaptive_eager_stats()["segments run"] == before
    np.testing.assert_array_equal(y.numpy(), 2)


def test_is_storage():
    for lib in (torch, tp):
        x = lib.ones(2)
        assert not lib.is_storage(x) and lib.is_storage(x.untyped_storage())
