"""``tensorstage.nn``: activations, softmax, losses, initializers, dense and convolution layers and pooling.

Every function works inside programs and on concrete arrays; ``axis`` arguments take an int or a Dim class.
"""

from ._activations import erf, gelu, log_softmax, relu, silu, softmax
from ._conv import Conv, conv, conv_layer
from ._dense import Dense, dense
from ._init import glorot, glorot_normal, glorot_uniform, he, he_normal, he_uniform
from ._losses import mse, one_hot, softmax_cross_entropy, softmax_cross_entropy_with_integer_labels
from ._pooling import avg_pool, max_pool
from ..numpy import sigmoid

__all__ = [
    "Conv", "Dense", "avg_pool", "conv", "conv_layer", "dense", "erf", "gelu", "glorot", "glorot_normal",
    "glorot_uniform", "he", "he_normal", "he_uniform", "log_softmax", "max_pool", "mse", "one_hot", "relu",
    "sigmoid", "silu", "softmax", "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
]
