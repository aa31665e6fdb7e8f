"""``tensorstage.optim``: optimizers, gradient transformations and learning-rate schedules over parameter pytrees.

    opt = ts.optim.chain(ts.optim.clip_by_global_norm(1.0),
                         ts.optim.adamw(ts.optim.warmup_cosine_decay(0.0, 1e-3, 100, 1000)))
    state = opt.init(params)
    params, state = opt.update(grads, state, params)   # inside a program: one compiled train step

The state is a pytree (an attrs class), so it passes in and out of programs like the parameters do.
"""

from ._adagrad import Adagrad, AdagradState, adagrad
from ._adam import Adam, AdamState, adam
from ._adamw import AdamW, adamw
from ._lion import Lion, LionState, lion
from ._rmsprop import RMSProp, RMSPropState, rmsprop
from ._schedule import (
    LearningRate, constant, cosine_decay, exponential_decay, join_schedules, linear_schedule, linear_warmup,
    warmup_cosine_decay,
)
from ._sgd import SGD, SGDState, sgd
from ._transform import Chain, ChainState, EmptyState, chain, clip, clip_by_global_norm, global_norm

__all__ = [
    "SGD", "Adagrad", "AdagradState", "Adam", "AdamState", "AdamW", "Chain", "ChainState", "EmptyState",
    "LearningRate", "Lion", "LionState", "RMSProp", "RMSPropState", "SGDState", "adagrad", "adam", "adamw", "chain",
    "clip", "clip_by_global_norm", "constant", "cosine_decay", "exponential_decay", "global_norm",
    "join_schedules", "lion", "linear_schedule", "linear_warmup", "rmsprop", "sgd", "warmup_cosine_decay",
]
