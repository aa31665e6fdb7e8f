"""``tensorstage.nn``: activations, softmax, losses and initializers, written with ``tensorstage.numpy``.

Every function works inside programs and on concrete arrays; ``axis`` arguments take an int or a Dim class.
"""

from ._dense import Dense, dense
from ._activations import erf, gelu, log_softmax, relu, silu, softmax
from ._init import glorot, glorot_normal, glorot_uniform, he, he_normal, he_uniform
from ._losses import mse, one_hot, softmax_cross_entropy, softmax_cross_entropy_with_integer_labels
from ..numpy import sigmoid

__all__ = [
    "Dense", "dense", "erf", "gelu", "glorot", "glorot_normal", "glorot_uniform", "he", "he_normal", "he_uniform", "log_softmax",
    "mse", "one_hot", "relu", "sigmoid", "silu", "softmax", "softmax_cross_entropy",
    "softmax_cross_entropy_with_integer_labels",
]
