"""``tensorstage.optim``: optimizers as pure functions over parameter pytrees.

    opt = ts.optim.adam(1e-3)
    state = opt.init(params)
    params, state = opt.update(grads, state, params)   # inside a program: one compiled train step

The state is a pytree (an attrs class), so it passes in and out of programs like the parameters do.
"""

from ._adam import Adam, AdamState, adam
from ._sgd import SGD, SGDState, sgd

__all__ = ["SGD", "Adam", "AdamState", "SGDState", "adam", "sgd"]
