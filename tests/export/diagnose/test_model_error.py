"""``export.diagnose.model_error``: an error the model raised while traced, as a ModelError.

Fast: the errors are raised here (this test file is the user's code to the site reader), and
by symshape's own code; the trace that names torch's size symbols is built by hand."""

from __future__ import annotations

import inspect
import os

import pytest
import torch
from torch.export import Dim

from export.diagnose.model_error import model_error
from export.errors import ExportError, InputError, ModelError
from export.spec.render import dim_text
from trace_builder import TraceBuilder

FIX = ("The model's code (or torch running it) raised this while torch traced it with the example inputs; "
       "it is no dynamic-shape constraint. Fix the model or the example inputs (calling the model on them "
       "directly shows whether it fails outside export too).")
HERE = os.path.relpath(__file__)


def _caught(f: object) -> Exception:
    try:
        f()  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001 - the error under test, whatever it is
        return e
    raise AssertionError("no error")


def _forward() -> None:
    raise ValueError("expected same dim,  got 2\n  Explanation: more")


def test_the_models_error_in_one_line_with_its_line() -> None:
    e = _caught(_forward)
    line = inspect.getsourcelines(_forward)[1] + 1
    err = model_error(e)
    assert isinstance(err, ModelError) and isinstance(err, ExportError)
    assert str(err) == "\n".join(["export could not trace the model: ValueError: expected same dim, got 2",
                                  f'  at {HERE}:{line}: raise ValueError("expected same dim,  got 2\\n  '
                                  'Explanation: more")', FIX])
    assert (err.origin, err.code) == (f"{HERE}:{line}", 'raise ValueError("expected same dim,  got 2\\n  '
                                                          'Explanation: more")')


def test_an_error_without_text() -> None:
    def forward() -> None:
        raise KeyError

    err = model_error(_caught(forward))
    assert err is not None and str(err).splitlines()[0] == "export could not trace the model: KeyError"


def test_a_long_text_is_cut() -> None:
    def forward() -> None:
        raise RuntimeError("x" * 400)

    err = model_error(_caught(forward))
    assert err is not None
    first = str(err).splitlines()[0]
    assert first == "export could not trace the model: RuntimeError: " + "x" * 297 + "..."


def test_torch_size_symbols_are_named_by_the_trace() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    trace = b.trace()
    torch_name = str(b.sym("x", 0))

    def forward() -> None:
        raise RuntimeError(f"shape '[{torch_name}, 5]' is invalid for input of size {torch_name}*8 (s999 unknown)")

    err = model_error(_caught(forward), trace)
    assert err is not None
    assert str(err).splitlines()[0] == ("export could not trace the model: RuntimeError: shape '[x.size(0), 5]' is "
                                        "invalid for input of size x.size(0)*8 (s999 unknown)")


def test_the_innermost_user_line_of_a_chain() -> None:
    def inner() -> None:
        raise IndexError("index 9 is out of bounds")

    def forward() -> None:
        try:
            inner()
        except IndexError as e:
            raise RuntimeError("while tracing") from e

    err = model_error(_caught(forward))
    assert err is not None and err.code == 'raise IndexError("index 9 is out of bounds")'
    assert str(err).splitlines()[0] == "export could not trace the model: RuntimeError: while tracing"


def test_symshapes_own_errors_are_not_the_models() -> None:
    assert model_error(_caught(lambda: dim_text(None))) is None  # type: ignore[arg-type]  # raised in export/

    def forward() -> None:
        try:
            raise InputError("bad spec")
        except InputError as e:
            raise RuntimeError("torch wrapped it") from e

    assert model_error(_caught(forward)) is None  # an ExportError torch wrapped
