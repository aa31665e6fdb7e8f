"""User-facing staging errors. Each names the op, the operands with dim names, and the user's source line."""

from __future__ import annotations

from .ir import SourceLoc


class StagingError(Exception):
    """Base class: a mistake in user code found while staging or transforming it."""

    def __init__(self, message: str, op: str | None = None, loc: SourceLoc | None = None) -> None:
        self.bare_message = message
        self.op = op
        self.loc = loc
        super().__init__(self._compose())

    def _compose(self) -> str:
        text = self.bare_message
        if self.op is not None and not text.startswith(f"[{self.op}]") and not text.startswith(self.op):
            text = f"{self.op}: {text}"
        if self.loc is not None:
            text = f"{text}\n  at {self.loc}"
        return text

    def located(self, op: str | None, loc: SourceLoc | None) -> StagingError:
        """Fill in the op and location if the raiser could not know them; returns self for `raise ... from`."""
        if self.op is None:
            self.op = op
        if self.loc is None:
            self.loc = loc
        self.args = (self._compose(),)
        return self

    def within(self, op: str) -> StagingError:
        """Name the user-facing op a primitive's error came from (``invert (not): ...``); returns self."""
        if self.op is None:
            self.op = op
        elif op not in self.op and not self.bare_message.startswith(op):
            self.op = f"{op} ({self.op})"
        self.args = (self._compose(),)
        return self


class ShapeError(StagingError, TypeError):
    """Operand shapes (or dim names) do not fit the op."""


class DTypeError(StagingError, TypeError):
    """Operand dtypes do not fit the op; tensorstage never promotes between array dtypes silently."""


class ConcretizationError(StagingError, TypeError):
    """A staged value was used where Python needs a concrete value (e.g. ``if x > 0:``)."""


class TransformError(StagingError, TypeError):
    """A transform (grad, vmap, ...) was applied to something it cannot handle."""
