"""tapeflow: PyTorch-style eager autograd on JAX/XLA.

Example:
    >>> import tapeflow as tp
    >>> x = tp.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
"""

import xla_ops as _xla_ops  # noqa: F401  (enables float64/int64 in JAX)

from ._adaptive import adaptive_eager_stats, is_adaptive_eager_enabled, set_adaptive_eager
from ._compilation_cache import get_compilation_cache_dir, set_compilation_cache_dir
from ._compilation_cache import install_default as _install_cache

_install_cache()  # before anything compiles: a program's second run compiles nothing

from . import (
    _methods,  # noqa: F401  (attaches Tensor methods)
    accelerator,
    autograd,
    backends,
    cuda,
    distributed,
    distributions,
    func,
    interop,
    linalg,
    nn,
    optim,
    special,
    testing,
    utils,
)
from ._device import device
from ._dtype import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._factories import (
    Generator,
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from ._legacy import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from ._ops import *  # noqa: F403
from ._ops import return_types  # noqa: F401
from ._sampling import bernoulli, multinomial, poisson
from ._tensor import Size, Tensor, is_tensor
from .autograd.anomaly_mode import is_anomaly_enabled, set_detect_anomaly
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .interop import compile, from_dlpack
from .linalg import cholesky_inverse, cholesky_solve, det, inverse, logdet, slogdet
from .nn._functional_distance import cosine_similarity, pairwise_distance, pdist
from .serialization import load, save

interop.register_known_types()  # Module/Optimizer classes exist once every submodule is imported

__version__ = "0.1.0"
