"""Bad input gets PyTorch's exception class and wording, never silently wrong data.

Each case is written once against the torch-like API; the expected class and key phrase are listed here
(so the test runs without PyTorch) and, where PyTorch is installed, checked against PyTorch itself.
"""

from __future__ import annotations

import pickle

import pytest

import tapeflow as tp

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _setitem(m):
    t = m.zeros(3)
    t[5] = 1.0


def _no_grad_view_write(m, mode, method="add_"):
    x = m.ones(2, 3, requires_grad=True).clone()
    with mode():
        v = x.view(3, 2)
    getattr(v, method)(*((1.0,) if method == "add_" else (0, 1)))


CASES = {
    # indices
    "basic index": (lambda m: m.ones(3, 2)[:, 2], IndexError, "index 2 is out of bounds for dimension 1 with size 2"),
    "int index": (lambda m: m.ones(3)[-4], IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    "too many indices": (lambda m: m.ones(3)[1, 2], IndexError, "too many indices for tensor of dimension 1"),
    "setitem": (_setitem, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    "tensor index": (lambda m: m.ones(3)[m.tensor([0, 3])], IndexError,
                     "index 3 is out of bounds for dimension 0 with size 3"),
    "gather": (lambda m: m.gather(m.ones(2, 2), 1, m.tensor([[0, 5], [1, 0]])), RuntimeError,
               "index 5 is out of bounds for dimension 1 with size 2"),
    "scatter": (lambda m: m.zeros(3).scatter(0, m.tensor([5]), 1.0), RuntimeError,
                "index 5 is out of bounds for dimension 0 with size 3"),
    "index_select": (lambda m: m.index_select(m.ones(3), 0, m.tensor([3])), IndexError, "index out of range in self"),
    "take": (lambda m: m.take(m.ones(3), m.tensor([7])), IndexError,
             "out of range: tried to access index 7 on a tensor of 3 elements"),
    "narrow": (lambda m: m.ones(3).narrow(0, 2, 3), RuntimeError, "start (2) + length (3) exceeds dimension size (3)"),
    "embedding": (lambda m: m.nn.functional.embedding(m.tensor([4]), m.ones(3, 2)), IndexError,
                  "index out of range in self"),
    "one_hot": (lambda m: m.nn.functional.one_hot(m.tensor([3]), 3), RuntimeError,
                "Class values must be smaller than num_classes"),
    "cross_entropy target": (lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 5])), IndexError,
                             "Target 5 is out of bounds"),
    "nll_loss target": (lambda m: m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([0, -1])), IndexError,
                        "Target -1 is out of bounds"),
    # shapes and arguments
    "in-place broadcast": (lambda m: m.ones(3).mul_(m.ones(2, 3)), RuntimeError,
                           "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    "broadcast": (lambda m: m.ones(2) + m.ones(4), RuntimeError,
                  "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"),
    "matmul": (lambda m: m.ones(2, 3) @ m.ones(4, 5), RuntimeError,
               "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    "bmm": (lambda m: m.ones(5, 2, 3) @ m.ones(5, 4, 5), RuntimeError,
            "Expected size for first two dimensions of batch2 tensor to be: [5, 3] but got: [5, 4]"),
    "flatten": (lambda m: m.ones(2, 3, 4).flatten(2, 1), RuntimeError, "start_dim cannot come after end_dim"),
    "chunk": (lambda m: m.ones(3).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    "randint": (lambda m: m.randint(5, 2, (3,)), RuntimeError, "random_ expects 'from' to be less than 'to'"),
    "arange": (lambda m: m.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    "tensor of str": (lambda m: m.tensor("abc"), TypeError, "invalid data type 'str'"),
    "conv stride": (lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 2, 2), stride=0), RuntimeError,
                    "non-positive stride is not supported"),
    "dim": (lambda m: m.ones(2).sum(3), IndexError, "Dimension out of range"),
    # values
    "int // 0": (lambda m: m.tensor([1, 2]) // 0, RuntimeError, "ZeroDivisionError"),
    "int % 0-tensor": (lambda m: m.tensor([1, 2]) % m.tensor([1, 0]), RuntimeError, "ZeroDivisionError"),
    "bool - bool": (lambda m: m.ones(2, dtype=m.bool) - m.ones(2, dtype=m.bool), RuntimeError,
                    "with two bool tensors is not supported"),
    "inv singular": (lambda m: m.linalg.inv(m.zeros(2, 2)), RuntimeError,
                     "The diagonal element 1 is zero, the inversion could not be completed"),
    "solve singular": (lambda m: m.linalg.solve(m.zeros(2, 2), m.ones(2)), RuntimeError,
                       "The solver failed because the input matrix is singular"),
    "cholesky": (lambda m: m.linalg.cholesky(-m.eye(2)), RuntimeError,
                 "the input is not positive-definite (the leading minor of order 1 is not positive-definite)"),
    # 0-d and empty tensors
    "index 0-d": (lambda m: m.tensor(1.0)[0], IndexError, "invalid index of a 0-dim tensor"),
    "max of empty": (lambda m: m.ones(0).max(), RuntimeError,
                     "max(): Expected reduction dim to be specified for input.numel() == 0"),
    "argmax of empty": (lambda m: m.ones(0).argmax(), IndexError,
                        "argmax(): Expected reduction dim to be specified for input.numel() == 0"),
    "min over an empty dim": (lambda m: m.ones(0, 3).min(0), IndexError,
                              "min(): Expected reduction dim 0 to have non-zero size"),
    "amax of empty": (lambda m: m.ones(0).amax(), RuntimeError, "amax(): Expected reduction dim to be specified"),
    "item of many": (lambda m: m.ones(2).item(), RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar"),
    "bool of many": (lambda m: bool(m.ones(2)), RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"),
    "is_nonzero of many": (lambda m: m.ones(2).is_nonzero(), RuntimeError,
                           "Boolean value of Tensor with more than one value is ambiguous"),
    # shapes and dims
    "view": (lambda m: m.ones(6).view(4, -1), RuntimeError, "shape '[4, -1]' is invalid for input of size 6"),
    "expand fewer sizes": (lambda m: m.ones(2, 3).expand(3), RuntimeError,
                           "the number of sizes provided (1) must be greater or equal to the number of dimensions"),
    "permute duplicate": (lambda m: m.ones(2, 3).permute(0, 0), RuntimeError, "permute(): duplicate dims are not allowed."),
    "cat ndim": (lambda m: m.cat([m.ones(2, 3), m.ones(3)]), RuntimeError,
                 "Tensors must have same number of dimensions: got 2 and 1"),
    "cat empty list": (lambda m: m.cat([]), ValueError, "cat(): expected a non-empty list of Tensors"),
    "split size 0": (lambda m: m.ones(4).split(0), RuntimeError,
                     "split_size can only be 0 if dimension size is 0, but got dimension size of 4"),
    "select": (lambda m: m.ones(2, 3).select(1, 5), IndexError,
               "select(): index 5 out of range for tensor of size [2, 3] at dimension 1"),
    "diag 3-d": (lambda m: m.diag(m.ones(2, 2, 2)), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"),
    "sum repeated dim": (lambda m: m.ones(2, 2).sum(dim=(0, 0)), RuntimeError,
                         "dim 0 appears multiple times in the list of dims"),
    "mv": (lambda m: m.mv(m.ones(2, 3), m.ones(2)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (2)"),
    "dot 2-d": (lambda m: m.dot(m.ones(2, 2), m.ones(2, 2)), RuntimeError, "1D tensors expected, but got 2D and 2D"),
    "mm 1-d": (lambda m: m.mm(m.ones(2), m.ones(2)), RuntimeError, "self must be a matrix"),
    "bmm 2-d": (lambda m: m.bmm(m.ones(2, 2), m.ones(2, 2)), RuntimeError, "batch1 must be a 3D tensor"),
    "conv kernel too big": (lambda m: m.nn.functional.conv2d(m.ones(1, 1, 2, 2), m.ones(1, 1, 3, 3)), RuntimeError,
                            "Kernel size can't be greater than actual input size"),
    "max_pool kernel too big": (lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 2, 2), 3), RuntimeError,
                                "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small"),
    "max_pool1d kernel too big": (lambda m: m.nn.functional.max_pool1d(m.ones(1, 1, 2), 3), RuntimeError,
                                  "max_pool1d() Invalid computed output size: 0"),
    "avg_pool1d kernel too big": (lambda m: m.nn.functional.avg_pool1d(m.ones(1, 1, 2), 3), RuntimeError,
                                  "Given input size: (1x1x2). Calculated output size: (1x1x0)"),
    "max_unpool index": (lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.tensor([[[[0, 1], [2, 40]]]]), 2),
                         RuntimeError, "Found an invalid max index: 40 (output volumes are of size 4x4)"),
    "batch_norm features": (lambda m: m.nn.BatchNorm1d(3)(m.ones(4, 5)), RuntimeError,
                            "running_mean should contain 5 elements not 3"),
    "cross_entropy batch": (lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 1, 2])), ValueError,
                            "Expected input batch_size (2) to match target batch_size (3)."),
    # dtypes
    "mm dtypes": (lambda m: m.mm(m.ones(2, 2), m.ones(2, 2, dtype=m.float64)), RuntimeError,
                  "expected m1 and m2 to have the same dtype, but got: float != double"),
    "matmul dtypes": (lambda m: m.ones(2, 3) @ m.ones(3, 2, dtype=m.int64), RuntimeError,
                      "expected m1 and m2 to have the same dtype, but got: float != long int"),
    "bmm dtypes": (lambda m: m.bmm(m.ones(2, 2, 2, dtype=m.float64), m.ones(2, 2, 2)), RuntimeError,
                   "expected scalar type Double but found Float"),
    "dot dtypes": (lambda m: m.dot(m.ones(2), m.ones(2, dtype=m.int64)), RuntimeError,
                   "dot : expected both vectors to have same dtype, but found Float and Long"),
    "linear dtypes": (lambda m: m.nn.functional.linear(m.ones(2, 2, dtype=m.float64), m.ones(2, 2)), RuntimeError,
                      "expected m1 and m2 to have the same dtype, but got: double != float"),
    "gather float index": (lambda m: m.gather(m.ones(3), 0, m.tensor([0.0])), RuntimeError,
                           "gather(): Expected dtype int32/int64 for index"),
    "index_select float index": (lambda m: m.index_select(m.ones(3), 0, m.tensor([0.0])), RuntimeError,
                                 "index_select(): Expected dtype int32 or int64 for index"),
    "take float index": (lambda m: m.take(m.ones(3), m.tensor([0.0])), RuntimeError,
                         "take(): Expected a long tensor for index, but got Float"),
    "bitwise float": (lambda m: m.ones(2) & m.ones(2), NotImplementedError, "\"bitwise_and_cpu\" not implemented for 'Float'"),
    "invert float": (lambda m: ~m.ones(2), TypeError, "~ (operator.invert) is only implemented on integer and Boolean"),
    "neg bool": (lambda m: -m.ones(2, dtype=m.bool), RuntimeError, "Negation, the `-` operator, on a bool tensor"),
    "in-place float into int": (lambda m: m.ones(2, dtype=m.int64).add_(m.ones(2) * 0.5), RuntimeError,
                                "result type Float can't be cast to the desired output type Long"),
    "in-place complex into float": (lambda m: m.ones(2).add_(m.ones(2, dtype=m.complex64)), RuntimeError,
                                    "result type ComplexFloat can't be cast to the desired output type Float"),
    "where float condition": (lambda m: m.where(m.ones(2), m.ones(2), m.zeros(2)), RuntimeError,
                              "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    "masked_fill float mask": (lambda m: m.ones(2).masked_fill(m.ones(2), 0.0), RuntimeError,
                               "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    "randn int dtype": (lambda m: m.randn(2, dtype=m.int64), NotImplementedError,
                        "\"normal_kernel_cpu\" not implemented for 'Long'"),
    "rand bool dtype": (lambda m: m.rand(2, dtype=m.bool), NotImplementedError,
                        "\"check_uniform_bounds\" not implemented for 'Bool'"),
    "full of str": (lambda m: m.full((2,), "a"), TypeError, "full(): argument 'fill_value' (position 2) must be Number"),
    "mean of int": (lambda m: m.tensor([1, 2]).mean(), RuntimeError, "mean(): could not infer output dtype"),
    # factories
    "arange direction": (lambda m: m.arange(10, 0, 1), RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    "linspace steps": (lambda m: m.linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative"),
    "zeros negative": (lambda m: m.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative."),
    "ones negative": (lambda m: m.ones(2, -1), RuntimeError, "Trying to create tensor with negative dimension -1"),
    # NaN, inf and out-of-range parameters
    "multinomial nan": (lambda m: m.multinomial(m.tensor([float("nan"), 1.0]), 1), RuntimeError,
                        "probability tensor contains either `inf`, `nan` or element < 0"),
    "multinomial zero": (lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1), RuntimeError,
                         "invalid multinomial distribution (sum of probabilities <= 0)"),
    "bernoulli p tensor": (lambda m: m.bernoulli(m.tensor([1.5])), RuntimeError,
                           "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    "bernoulli_ p": (lambda m: m.ones(2).bernoulli_(1.5), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    "normal std": (lambda m: m.normal(0.0, -1.0, (2,)), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    "normal std tensor": (lambda m: m.normal(m.zeros(2), -m.ones(2)), RuntimeError,
                          "normal expects all elements of std >= 0.0"),
    "poisson rate": (lambda m: m.poisson(m.tensor([-1.0])), RuntimeError,
                     "invalid Poisson rate, expected rate to be non-negative"),
    "uniform_ range": (lambda m: m.ones(2).uniform_(1, 0), RuntimeError,
                       "uniform_ expects to return a [from, to) range, but found from=1 > to=0"),
    "Normal scale": (lambda m: m.distributions.Normal(0.0, -1.0), ValueError, "Expected parameter scale"),
    # optimizers
    "sgd lr": (lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], lr=-1), ValueError, "Invalid learning rate: -1"),
    "sgd momentum": (lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], lr=0.1, momentum=-1), ValueError,
                     "Invalid momentum value: -1"),
    "sgd nesterov": (lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], lr=0.1, nesterov=True), ValueError,
                     "Nesterov momentum requires a momentum and zero dampening"),
    "adam beta": (lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], betas=(1.0, 0.9)), ValueError,
                  "Invalid beta parameter at index 0: 1.0"),
    "adam eps": (lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], eps=-1), ValueError, "Invalid epsilon value: -1"),
    "adam weight decay": (lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], weight_decay=-1), ValueError,
                          "Invalid weight_decay value: -1"),
    "optimizer without params": (lambda m: m.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    "optimizer of a tensor": (lambda m: m.optim.SGD(m.ones(2, requires_grad=True), lr=0.1), TypeError,
                              "params argument given to the optimizer should be an iterable of Tensors or dicts"),
    "optimizer non-leaf": (lambda m: m.optim.SGD([m.ones(2, requires_grad=True) * 2], lr=0.1), ValueError,
                           "can't optimize a non-leaf Tensor"),
    # modules and state dicts
    "state_dict missing key": (lambda m: m.nn.Linear(2, 3).load_state_dict({"weight": m.ones(3, 2)}), RuntimeError,
                               'Missing key(s) in state_dict: "bias"'),
    "state_dict unexpected key": (lambda m: m.nn.Linear(2, 3).load_state_dict(
        {"weight": m.ones(3, 2), "bias": m.ones(3), "extra": m.ones(1)}), RuntimeError,
        'Unexpected key(s) in state_dict: "extra"'),
    "state_dict size": (lambda m: m.nn.Linear(2, 3).load_state_dict({"weight": m.ones(4, 2), "bias": m.ones(3)}),
                        RuntimeError, "size mismatch for weight: copying a param with shape"),
    "state_dict not a dict": (lambda m: m.nn.Linear(2, 3).load_state_dict([1, 2]), TypeError,
                              "Expected state_dict to be dict-like, got <class 'list'>."),
    "module name with dot": (lambda m: m.nn.Module().add_module("a.b", m.nn.Linear(1, 1)), KeyError,
                             'contain ".", got: a.b'),
    "module name empty": (lambda m: m.nn.Module().add_module("", m.nn.Linear(1, 1)), KeyError,
                          'be empty string ""'),
    "buffer of a number": (lambda m: m.nn.Module().register_buffer("b", 3), TypeError,
                           "cannot assign 'int' object to buffer 'b'"),
    "parameter of a tensor": (lambda m: m.nn.Module().register_parameter("p", m.ones(2)), TypeError,
                              "cannot assign"),
    "Sequential index": (lambda m: m.nn.Sequential(m.nn.ReLU())[3], IndexError, "index 3 is out of range"),
    "Function without backward": (lambda m: type("F", (m.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: x * 2)}).apply(m.ones(2, requires_grad=True)).sum().backward(),
        NotImplementedError, "You must implement either the backward or vjp method for your custom autograd.Function"),
    "backward of complex": (lambda m: (m.tensor([1 + 2j], requires_grad=True) * 2).sum().backward(), RuntimeError,
                            "grad can be implicitly created only for real scalar outputs"),
    # autograd misuse
    "backward with no inputs": (lambda m: m.ones(2, requires_grad=True).mul(2).sum().backward(inputs=[]), RuntimeError,
                                "`inputs` argument to `backward()` cannot be empty."),
    "grad with no inputs": (lambda m: m.autograd.grad(m.ones(2, requires_grad=True).mul(2).sum(), []), RuntimeError,
                            "`inputs` argument to `grad()` cannot be empty."),
    "view made under no_grad written in place": (lambda m: _no_grad_view_write(m, m.no_grad), RuntimeError,
                                                 "A view was created in no_grad mode and is being modified inplace"),
    "view made in inference mode transposed in place": (
        lambda m: _no_grad_view_write(m, m.inference_mode, "transpose_"), RuntimeError,
        "A view was created in inference mode and is being modified inplace in normal mode"),
    "backward of non-scalar": (lambda m: m.ones(2, requires_grad=True).mul(2).backward(), RuntimeError,
                               "grad can be implicitly created only for scalar outputs"),
    "backward twice": (lambda m: [y.backward() for y in [m.ones(2, requires_grad=True).exp().sum()] * 2],
                       RuntimeError, "Trying to backward through the graph a second time"),
    "leaf in-place": (lambda m: m.ones(2, requires_grad=True).add_(1), RuntimeError,
                      "a leaf Variable that requires grad is being used in an in-place operation"),
    "int requires grad": (lambda m: m.ones(2, dtype=m.int64, requires_grad=True), RuntimeError,
                          "Only Tensors of floating point"),
    # more shapes, dtypes and arguments
    "topk too large": (lambda m: m.ones(3).topk(4), RuntimeError, "selected index k out of range"),
    "integer negative power": (lambda m: m.tensor([2, 3]) ** -1, RuntimeError,
                               "Integers to negative integer powers are not allowed."),
    "complex order": (lambda m: m.tensor([1j]) < m.tensor([2j]), NotImplementedError,
                      "\"lt_cpu\" not implemented for 'ComplexFloat'"),
    "std of integers": (lambda m: m.ones(3, dtype=m.int64).std(), RuntimeError,
                        "std and var only support floating point and complex dtypes"),
    "vector_norm of integers": (lambda m: m.linalg.vector_norm(m.ones(2, dtype=m.int64)), RuntimeError,
                                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    "int() of many": (lambda m: int(m.ones(2)), ValueError, "only one element tensors can be converted to Python scalars"),
    "float() of many": (lambda m: float(m.ones(2)), ValueError,
                        "only one element tensors can be converted to Python scalars"),
    "eye negative": (lambda m: m.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1"),
    "randperm negative": (lambda m: m.randperm(-1), RuntimeError, "Trying to create tensor with negative dimension -1"),
    "ragged data": (lambda m: m.tensor([[1, 2], [3]]), ValueError, "expected sequence of length 2 at dim 1 (got 1)"),
    "ragged deeper": (lambda m: m.tensor([[[1], [2]], [[3], [4, 5]]]), ValueError,
                      "expected sequence of length 1 at dim 2 (got 2)"),
    "trace of a vector": (lambda m: m.ones(3).trace(), RuntimeError, "trace: expected a matrix, but got tensor with dim 1"),
    "legacy type name": (lambda m: m.ones(2).type("torch.Foo"), ValueError, "invalid type: 'torch.Foo'"),
    "grad checks outputs first": (lambda m: m.autograd.grad(m.ones(2).sum(), [m.ones(2, requires_grad=True)]),
                                  RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"),
    "pad odd length": (lambda m: m.nn.functional.pad(m.ones(2, 3), (1,)), RuntimeError,
                       "Padding length must be divisible by 2"),
    "pad too long": (lambda m: m.nn.functional.pad(m.ones(2, 3), (1, 1, 1, 1, 1, 1)), RuntimeError,
                     "Padding length should be less than or equal to two times the input dimension"),
    "reflect pad too wide": (lambda m: m.nn.functional.pad(m.ones(1, 1, 3), (3, 3), mode="reflect"), RuntimeError,
                             "Argument #4: Padding size should be less than the corresponding input dimension, "
                             "but got: padding (3, 3) at dimension 2 of input [1, 1, 3]"),
    "circular pad wraps twice": (lambda m: m.nn.functional.pad(m.ones(1, 1, 3), (4, 0), mode="circular"),
                                 RuntimeError, "Padding value causes wrapping around more than once."),
    "reflect pad rank": (lambda m: m.nn.functional.pad(m.ones(3), (1, 1), mode="reflect"), NotImplementedError,
                         "Padding size 2 is not supported for 1D input tensor."),
    "interpolate without size": (lambda m: m.nn.functional.interpolate(m.ones(1, 1, 3)), ValueError,
                                 "either size or scale_factor should be defined"),
    "logaddexp of integers": (lambda m: m.logaddexp(m.tensor([1]), m.tensor([2])), NotImplementedError,
                              "\"logaddexp_cpu\" not implemented for 'Long'"),
    "quantile of integers": (lambda m: m.tensor([1, 2]).quantile(0.5), RuntimeError,
                             "quantile() input tensor must be either float or double dtype"),
    "quantile q range": (lambda m: m.tensor([1.0, 2.0]).quantile(1.5), RuntimeError,
                         "quantile() q must be in the range [0, 1] but got 1.5"),
    "gather rank": (lambda m: m.ones(3, 3).gather(0, m.tensor([0])), RuntimeError,
                    "Index tensor must have the same number of dimensions as input tensor"),
    "gather size": (lambda m: m.ones(2, 2).gather(1, m.zeros(3, 1, dtype=m.int64)), RuntimeError,
                    "Size does not match at dimension 0 expected index [3, 1] to be no larger than self [2, 2] apart "
                    "from dimension 1"),
    "scatter dtype": (lambda m: m.ones(3).scatter(0, m.tensor([0]), m.ones(1, dtype=m.float64)), RuntimeError,
                      "scatter(): Expected self.dtype to be equal to src.dtype"),
    "scatter_add dtype": (lambda m: m.ones(3).scatter_add(0, m.tensor([0]), m.ones(1, dtype=m.float64)), RuntimeError,
                          "scatter(): Expected self.dtype to be equal to src.dtype"),
    "scatter rank": (lambda m: m.ones(3).scatter(0, m.tensor([[0]]), m.ones(1, 1)), RuntimeError,
                     "Index tensor must have the same number of dimensions as self tensor"),
    "index_select matrix index": (lambda m: m.ones(3).index_select(0, m.tensor([[0]])), IndexError,
                                  "index_select(): Index is supposed to be a vector"),
    "roll shifts and dims": (lambda m: m.ones(2, 3).roll((1, 2), (0,)), RuntimeError,
                             "shifts and dimensions must align. shifts: 2, dims:1"),
    "flip repeated dim": (lambda m: m.ones(2, 3).flip(0, 0), RuntimeError, "dim 0 appears multiple times"),
    "triu of a vector": (lambda m: m.ones(3).triu(), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
    "max_pool2d rank": (lambda m: m.nn.functional.max_pool2d(m.ones(3), 2), RuntimeError,
                        "non-empty 3D or 4D (batch mode) tensor expected for input"),
    "max_pool1d rank": (lambda m: m.nn.functional.max_pool1d(m.ones(3), 2), RuntimeError,
                        "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input"),
    "adaptive_avg_pool2d rank": (lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(3), 2), RuntimeError,
                                 "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [3]"),
    "LSTM input size": (lambda m: m.nn.LSTM(3, 4)(m.ones(2, 5)), RuntimeError,
                        "input.size(-1) must be equal to input_size. Expected 3, got 5"),
    "GRU batch_first input size": (lambda m: m.nn.GRU(3, 4, batch_first=True)(m.ones(2, 2, 5)), RuntimeError,
                                   "input.size(-1) must be equal to input_size. Expected 3, got 5"),
    "RNNCell input size": (lambda m: m.nn.RNNCell(3, 4)(m.ones(2, 5)), RuntimeError,
                           "input has inconsistent input_size: got 5 expected 3"),
}


def _check(lib, name: str) -> None:
    fn, cls, phrase = CASES[name]
    with pytest.raises(cls) as info:
        fn(lib)
    assert phrase in str(info.value), f"{name} ({lib.__name__}): {info.value}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_tapeflow_raises_pytorchs_error(name):
    _check(tp, name)


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_listed_error_is_pytorchs(name):
    _check(torch, name)


def test_linalg_errors_are_linalg_errors():
    with pytest.raises(tp.linalg.LinAlgError):
        tp.linalg.inv(tp.zeros(3, 3))
    assert tp.linalg.inv_ex(tp.zeros(2, 2)).info.item() == 1  # the _ex variants report instead of raising


def test_index_checks_are_skipped_under_jit():
    """Inside a JAX program indices are traced: no host check there (JAX's clamping applies)."""
    import jax

    out = jax.jit(tp.interop.to_jax(lambda x, i: x[i]))(tp.ones(3)._data, tp.tensor([0, 1])._data)
    assert out.shape == (2,)


def test_pickle_of_an_error_free_path():
    assert pickle.loads(pickle.dumps(tp.ones(2)))._data.shape == (2,)


def test_tensor_only_operands_refuse_numbers_in_pytorchs_words():
    x = tp.ones(2)
    with pytest.raises(TypeError, match=r"^maximum\(\): argument 'other' \(position 2\) must be Tensor, not int$"):
        tp.maximum(x, 2)
    with pytest.raises(TypeError, match=r"^atan2\(\): argument 'other' \(position 1\) must be Tensor, not float$"):
        x.atan2(2.5)  # (a method counts from 1, as PyTorch's)
    with pytest.raises(TypeError, match=r"^heaviside\(\): argument 'values' \(position 2\) must be Tensor, not int$"):
        tp.heaviside(x, 1)
    with pytest.raises(TypeError, match=r"^lerp\(\) received an invalid combination of arguments - got \(Tensor, int, "):
        tp.lerp(x, 2, 0.5)
