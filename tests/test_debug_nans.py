"""``ts.config.update("debug_nans", True)`` / ``ts.debug_nans()`` / ``debug_infs``: a run whose results hold a NaN
(an infinity) raises ``FloatingPointError`` naming the equation that made it from clean operands, its line, and the
line of the call."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

F32 = np.float32
HERE = "test_debug_nans.py"


@pytest.fixture(autouse=True)
def checks_off_after() -> Iterator[None]:
    yield
    ts.config.update("debug_nans", False)
    ts.config.update("debug_infs", False)


def line_of(marker: str) -> int:
    """The line of this file holding ``marker`` (a comment at the end of the line an error must name)."""
    with open(__file__) as source:
        return next(i for i, text in enumerate(source, 1) if text.rstrip().endswith(f"# {marker}"))


def scaled_log(x: Any, y: Any) -> Any:
    a = x * 2.0
    b = tnp.log(a - y)  # log line
    return tnp.sum(b * b), a


def test_off_by_default_and_the_culprit_is_named_when_on(rng: np.random.Generator) -> None:
    program = ts.program(scaled_log)
    x = rng.uniform(1, 2, 4).astype(F32)
    y = np.zeros(4, F32)
    y[2] = 10.0  # log of a negative number at element 2 only
    assert not ts.config.debug_nans
    assert np.isnan(float(program(x, y)[0]))  # a silent NaN, as NumPy and JAX by default
    ts.config.update("jax_debug_nans", True)  # JAX's option name works too
    assert ts.config.debug_nans
    with pytest.raises(FloatingPointError) as info:
        program(x, y)  # call line
    message = str(info.value)
    assert message.startswith("invalid value (nan) encountered in log in scaled_log, on operands f32[4]")
    assert f"{HERE}:{line_of('log line')}" in message
    assert re.search(rf"\n  in the run called at \S*{HERE}:{line_of('call line')}$", message)
    clean = program(x, np.zeros(4, F32))  # clean runs are unaffected
    np.testing.assert_allclose(float(clean[0]), np.sum(np.log(2 * x.astype(np.float64)) ** 2), rtol=1e-5)


def test_the_context_manager_restores_and_infs_are_checked_separately() -> None:
    program = ts.program(lambda v: 1.0 / v)  # divide line
    zero = np.zeros(2, F32)
    with ts.debug_nans():
        assert np.isinf(program(zero)).all()  # an infinity is not a NaN
        with ts.debug_infs():
            with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
                program(zero)
        assert not ts.config.debug_infs
    assert not ts.config.debug_nans


def test_eager_ops_name_their_own_line() -> None:
    with ts.debug_nans():
        with pytest.raises(FloatingPointError) as info:
            tnp.sqrt(F32(-1.0))  # eager line
    message = str(info.value)
    assert message.startswith("invalid value (nan) encountered in sqrt, on operands f32[]")
    assert message.endswith(f"{HERE}:{line_of('eager line')}")
    assert "run called" not in message  # the op's line is the call's


def test_a_bad_argument_is_named_as_such() -> None:
    with ts.debug_nans(), pytest.raises(FloatingPointError, match=r"invalid value \(nan\) in argument 1 \(f32\[4\]\)"):
        ts.program(scaled_log)(np.ones(4, F32), np.array([0, np.nan, 0, 0], F32))


def test_a_loop_body_is_pointed_at(rng: np.random.Generator) -> None:
    def running_log(x: Any) -> Any:
        def body(c: Any, xi: Any) -> tuple[Any, Any]:
            return c + tnp.log(xi), c  # body line
        return ts.scan(body, 0.0 * x[0], x)[0]  # scan line

    with ts.debug_nans(), pytest.raises(FloatingPointError) as info:
        ts.program(running_log)(np.array([1.0, -1.0, 2.0], F32))
    message = str(info.value)
    assert "encountered in scan (inside its body, staged at " in message
    assert f"{HERE}:{line_of('body line')}" in message and f"{HERE}:{line_of('scan line')}" in message


def test_gradients_are_checked_at_the_line_of_the_differentiated_op() -> None:
    def root_sum(v: Any) -> Any:
        return tnp.sum(tnp.sqrt(v))  # sqrt line

    grad = ts.grad(root_sum)
    assert np.isinf(grad(np.zeros(2, F32))).all()
    with ts.debug_infs(), pytest.raises(FloatingPointError) as info:
        grad(np.zeros(2, F32))
    assert f"{HERE}:{line_of('sqrt line')}" in str(info.value)


def test_programs_that_may_not_run_again_name_their_result_only() -> None:
    calls: list[Any] = []

    def logged(v: Any) -> Any:
        ts.debug.callback(lambda a: calls.append(a), v)
        return tnp.log(v)

    with ts.debug_nans():
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) in result 0 of logged"):
            ts.program(logged)(np.array([-1.0], F32))
        assert len(calls) == 1  # the callback ran once: the program was not run again
        donating = ts.program(lambda v: tnp.log(v), donate_argnums=(0,))
        with pytest.raises(FloatingPointError, match=r"in result 0 of <lambda>"):
            donating(ts.asarray(np.array([-1.0], F32)))


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown option 'jax_enable_x64'; tensorstage has debug_nans, debug_infs"):
        ts.config.update("jax_enable_x64", True)
    with pytest.raises(TypeError, match="must be a bool"):
        ts.config.update("debug_nans", "yes")  # type: ignore[arg-type]
