"""``tensorstage.scipy.cluster``: as ``jax.scipy.cluster``, vector quantization in
``tensorstage.scipy.cluster.vq`` (``vq``)."""

from . import vq

__all__ = ["vq"]
