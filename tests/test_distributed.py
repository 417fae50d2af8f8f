"""Sharding helpers and data-parallel training (8 simulated CPU devices, in a subprocess)."""

import os
import pathlib
import subprocess
import sys

import numpy as np

import tapeflow as tp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_shard_is_differentiable_and_keeps_values():
    mesh = tp.distributed.make_mesh((1,), ("data",))
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = tp.distributed.shard(x, mesh, ("data", None))
    assert y.grad_fn.name() == "ShardBackward0" and y.sharding.mesh.shape == {"data": 1}
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    z = tp.distributed.replicate(tp.ones(3), mesh)
    assert z.sharding.is_fully_replicated and not z.requires_grad


def test_shard_batch_rejects_uneven_batches():
    mesh = tp.distributed.make_mesh((1,), ("data",))
    assert tp.distributed.shard_batch(tp.ones(3, 2), mesh).shape == (3, 2)
    import pytest

    with pytest.raises(ValueError, match="devices"):
        tp.distributed.make_mesh((64,), ("data",))


def test_data_parallel_matches_single_device_on_8_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    code = ("import sys; sys.path.insert(0, 'examples'); import jax; assert len(jax.devices()) == 8; "
            "import data_parallel; data_parallel.main(steps=3)")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "8 devices" in res.stdout and res.stdout.count("data-parallel loss") == 3


def test_like_factories_follow_their_input_device_and_sharding():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    code = """
import tapeflow as tp
x = tp.ones(4, 2, device="cpu:1")
for f in (tp.zeros_like, tp.ones_like, tp.rand_like, tp.randn_like, tp.empty_like):
    assert f(x).device == tp.device("cpu:1"), f
assert tp.full_like(x, 3.0).device == tp.device("cpu:1") and tp.randint_like(x, 5).device == tp.device("cpu:1")
assert tp.zeros_like(x, device="cpu:0").device == tp.device("cpu:0")
assert tp.zeros_like(tp.ones(2)).device == tp.device("cpu:0")
mesh = tp.distributed.make_mesh((2,), ("data",))
s = tp.distributed.shard(tp.ones(4, 2), mesh, ("data", None))
assert tp.zeros_like(s).sharding == s.sharding and tp.randn_like(s).sharding == s.sharding
print("ok")
"""
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]
