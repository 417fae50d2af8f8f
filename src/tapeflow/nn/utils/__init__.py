"""`tapeflow.nn.utils`: gradient clipping, parameter/vector conversion, packed sequences (`rnn`), weight and
spectral normalisation, pruning (`prune`)."""

from . import parametrizations, parametrize, prune, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights, skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["rnn", "parametrize", "parametrizations", "prune",
           "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "clip_grad_norm",
           "get_total_norm", "clip_grads_with_norm_", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]
