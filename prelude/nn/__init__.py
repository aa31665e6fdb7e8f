"""``tensorstage.nn``: activations, softmax, losses, initializers, normalization, dropout, embeddings, attention,
dense and convolution layers and pooling.

Every function works inside programs and on concrete arrays; ``axis`` arguments take an int or a Dim class.
"""

from ._activations import (
    celu, elu, erf, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu, log1mexp,
    log_sigmoid, log_softmax, logmeanexp, mish, relu, relu6, selu, silu, soft_sign, softmax, softplus, softsign,
    sparse_plus, sparse_sigmoid, squareplus, swish,
)
from ._attention import MultiHeadAttention, dot_product_attention, multi_head_attention
from ._conv import Conv, conv, conv_layer
from ._dense import Dense, dense
from ._dropout import dropout
from ._embed import Embed, embed, embedding
from ._init import glorot, glorot_normal, glorot_uniform, he, he_normal, he_uniform
from ._losses import (
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_similarity, huber_loss, kl_divergence, l1_loss,
    mse, one_hot, sigmoid_binary_cross_entropy, smooth_l1_loss, softmax_cross_entropy,
    softmax_cross_entropy_with_integer_labels,
)
from ._norm import LayerNorm, layer_norm, layer_norm_layer, rms_norm, standardize
from ._pooling import avg_pool, max_pool
from ..numpy import sigmoid, tanh
from ..scipy.special import logsumexp  # jax.nn.logsumexp is jax.scipy.special's (b=, return_sign=)
from . import initializers

__all__ = [
    "Conv", "Dense", "Embed", "LayerNorm", "MultiHeadAttention", "avg_pool", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "conv", "conv_layer", "cosine_similarity", "dense", "dot_product_attention",
    "dropout", "elu", "embed", "embedding", "erf", "gelu", "glorot", "glorot_normal", "glorot_uniform", "glu",
    "celu", "hard_sigmoid", "hard_silu", "hard_swish", "identity", "log1mexp", "logmeanexp", "soft_sign",
    "sparse_plus", "sparse_sigmoid", "squareplus", "swish", "tanh", "logsumexp", "initializers",
    "hard_tanh", "he", "he_normal", "he_uniform", "huber_loss", "kl_divergence", "l1_loss", "layer_norm",
    "layer_norm_layer", "leaky_relu", "log_sigmoid", "log_softmax", "max_pool", "mish", "mse",
    "multi_head_attention", "one_hot", "relu", "relu6", "rms_norm", "selu", "sigmoid",
    "sigmoid_binary_cross_entropy", "silu", "smooth_l1_loss", "softmax", "softmax_cross_entropy",
    "softmax_cross_entropy_with_integer_labels", "softplus", "softsign", "standardize",
]
