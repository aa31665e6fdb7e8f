"""``ts.make_jaxpr`` (a function's staged graph for given arguments), ``ts.clear_caches`` and JAX's aliases
``ts.jit`` (``ts.program``) and ``ts.ShapeDtypeStruct`` (``ts.Spec``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

F32 = np.float32


def scaled_sine(x: Any, n: int, scale: Any = 1.0) -> Any:
    return tnp.sin(x) * n * scale  # graph line


def test_make_jaxpr_prints_the_graph_with_the_users_lines() -> None:
    staged = ts.make_jaxpr(scaled_sine, static_argnums=1)(np.ones(3, F32), 2)
    text = str(staged)
    assert [line.split("=")[1].split()[0] for line in text.splitlines()[1:-1]] == ["sin", "mul", "mul"]
    assert "mul b 2.0:f32" in text  # the static argument is a constant of the graph
    assert text.count("test_introspection.py:18") == 3  # the graph line
    assert staged.out_avals[0].shape == (3,)
    with_keyword = ts.make_jaxpr(scaled_sine)(ts.ShapeDtypeStruct((2,), ts.f32), 3, scale=F32(2.0))
    assert "convert" in str(with_keyword) and with_keyword.in_avals[1].dtype == np.int32  # a dynamic n
    assert "stablehlo.sine" in with_keyword.stablehlo()


def test_clear_caches_makes_every_program_compile_again() -> None:
    program = ts.jit(scaled_sine, static_argnums=1)
    assert isinstance(program, ts.Program)
    x = np.linspace(0, 1, 3, dtype=F32)
    first = program(x, 2)
    ts.clear_caches()
    np.testing.assert_array_equal(program(x, 2), first)
    assert program.recompile_reasons[-1] == "ts.clear_caches()"


def test_shape_dtype_struct_is_a_spec() -> None:
    spec = ts.ShapeDtypeStruct((2, 3), np.float32)
    assert isinstance(spec, ts.Spec) and spec.shape == (2, 3) and spec.dtype == np.float32
    with pytest.raises(ValueError, match="negative dimension"):
        ts.ShapeDtypeStruct((-1,), np.float32)


def test_jax_style_submodule_imports() -> None:
    """``tensorstage.numpy``, ``nn``, ``lax``, ``scipy`` and ``experimental`` are packages: ``from
    jax.scipy.special import ...`` ports as it is, and each module's names are the library's own functions."""
    from tensorstage.experimental.ode import odeint
    from tensorstage.lax.linalg import cholesky
    from tensorstage.nn.initializers import glorot_normal
    from tensorstage.numpy.fft import rfft
    from tensorstage.numpy.linalg import norm as norm_
    from tensorstage.scipy.linalg import expm
    from tensorstage.scipy.special import gammaincinv, hyp2f1, logsumexp
    from tensorstage.scipy.stats import norm

    assert logsumexp is ts.scipy.special.logsumexp and gammaincinv is ts.scipy.special.gammaincinv
    assert hyp2f1.__name__ == "hyp2f1" and expm is ts.scipy.linalg.expm
    assert norm is ts.scipy.stats.norm and odeint is ts.experimental.ode.odeint
    assert cholesky is ts.lax.linalg.cholesky and glorot_normal is ts.nn.initializers.glorot_normal
    assert rfft is tnp.fft.rfft and norm_ is tnp.linalg.norm
    for name in ts.scipy.__all__:
        module = getattr(ts.scipy, name)
        assert all(hasattr(module, public) for public in module.__all__), name
