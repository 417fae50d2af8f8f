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
    amp,
    autograd,
    backends,
    compiler,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    interop,
    jit,
    linalg,
    mps,
    nn,
    optim,
    profiler,
    random,
    sparse,
    special,
    testing,
    utils,
)
from ._aten import *  # noqa: F403  (PyTorch's underlying ops at the top level: torch.batch_norm, torch.view_copy)
from ._device import device, get_default_device, set_default_device
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
    frombuffer,
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
from ._foreach import *  # noqa: F403  (torch._foreach_*: an op over a list of tensors)
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
from ._lowrank import pca_lowrank, svd_lowrank
from ._ops import *  # noqa: F403
from ._ops import return_types  # noqa: F401
from ._sampling import bernoulli, multinomial, poisson
from ._sparse import install as _sparse_install
from ._sparse import sparse_coo_tensor, spmm
from ._spectral import istft, stft
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Size, Tensor, is_tensor
from ._tensor_extras import *  # noqa: F403  (layouts, memory formats, older linear-algebra spellings)
from ._toplevel import *  # noqa: F403  (meshgrid, finfo/iinfo, promotion queries, printing and thread settings)
from ._windows import *  # noqa: F403  (window functions, asarray)
from .amp import GradScaler, autocast, get_autocast_dtype, is_autocast_enabled
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
from .linalg import householder_product as orgqr
from .nn._functional_distance import cosine_similarity, pairwise_distance, pdist
from .serialization import load, save

_sparse_install()  # sparse layouts over the dense Tensor methods, all of which exist by now
interop.register_known_types()  # Module/Optimizer classes exist once every submodule is imported

__version__ = "0.1.0"


def _torch_names() -> None:
    """PyTorch's top-level names for some `nn.functional` functions (same signatures), and the in-place forms
    `tp.exp_(x)` of the in-place methods."""
    from . import _ops
    from .nn import functional as F

    g = globals()
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                 "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
                 "pixel_shuffle", "pixel_unshuffle", "celu", "selu", "threshold", "hardshrink", "group_norm",
                 "cosine_similarity", "pairwise_distance", "pdist", "prelu", "rrelu", "bilinear", "channel_shuffle",
                 "layer_norm", "alpha_dropout", "feature_alpha_dropout"):
        if name not in g and hasattr(F, name):
            g[name] = getattr(F, name)
    for name in _UNARY_INPLACE.split() + list(_INPLACE_WITH_ARGS):
        if name not in g and hasattr(Tensor, name):
            g[name] = _inplace_function(name, *_INPLACE_WITH_ARGS.get(name, ("tp.tensor([0.5])", "")))


# PyTorch's top-level in-place functions of one tensor (`torch.relu_(x)` is `x.relu_()`).
_UNARY_INPLACE = """abs_ absolute_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_
atanh_ ceil_ cos_ cosh_ deg2rad_ erf_ erfc_ erfinv_ exp2_ exp_ expm1_ fix_ floor_ frac_ i0_ log10_ log1p_ log2_ log_
logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_
tan_ tanh_ trunc_"""
# ... and of those that take more arguments (`tp.clamp_(x, 0, 1)` is `x.clamp_(0, 1)`).
_INPLACE_WITH_ARGS = {  # name: (the tensor written into, the other arguments), for the docstring example
    "clamp_": ("tp.tensor([0.5])", "0.0, 1.0"), "clip_": ("tp.tensor([0.5])", "0.0, 1.0"),
    "clamp_max_": ("tp.tensor([0.5])", "1.0"), "clamp_min_": ("tp.tensor([0.5])", "0.0"),
    "gcd_": ("tp.tensor([4])", "tp.tensor([6])"), "lcm_": ("tp.tensor([4])", "tp.tensor([6])"),
    "xlogy_": ("tp.tensor([0.5])", "tp.tensor([2.0])"), "ldexp_": ("tp.tensor([0.5])", "tp.tensor([1])"),
    "detach_": ("tp.tensor([0.5])", ""), "addmv_": ("tp.zeros(2)", "tp.eye(2), tp.ones(2)")}


def _inplace_function(name: str, target: str, args: str):
    def f(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    call = f"x, {args}" if args else "x"
    f.__doc__ = (f"`input.{name}(...)`: `{name[:-1]}` written into `input`, which is returned.\n\nExample:\n"
                 f"    >>> import tapeflow as tp\n    >>> x = {target}\n    >>> tp.{name}({call}) is x\n    True\n")
    return f


_torch_names()
del _torch_names

from . import _out  # noqa: E402

_out.install(globals(), _out.TOPLEVEL)  # PyTorch's `out=` argument (see `_out`)
_out.install(vars(linalg), _out.LINALG, "linalg")
_out.install(vars(special), _out.SPECIAL)
_out.install(vars(fft), _out.FFT, "fft")

from . import _first_arg  # noqa: E402

_first_arg.install(globals())  # PyTorch's TypeError for `tp.maximum(2, x)` (see `_first_arg`)

from . import _gc  # noqa: E402

_gc.freeze_import_time_objects()
_gc.raise_young_threshold()
