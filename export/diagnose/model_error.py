"""An error the model's code (or torch running it) raised while export traced it, explained as
a :class:`export.errors.ModelError`: the error in one line, the model's line that raised it,
and what to do. An error raised inside symshape's own packages is a bug in symshape: it is
never disguised as the model's (:func:`model_error` returns None, the caller re-raises it).
"""

from __future__ import annotations

import linecache
import re
import traceback

from export import _torch_compat as tc
from export.errors import ExportError, ModelError
from export.tracing.provenance import UserFrame, is_symshape_file, is_user_file
from export.tracing.trace import Trace, relation_text

__all__ = ["model_error"]

_MAX_TEXT = 300
"""The longest error text shown (torch's first lines can hold whole tensors or graphs)."""

_FIX = ("The model's code (or torch running it) raised this while torch traced it with the example inputs; "
        "it is no dynamic-shape constraint. Fix the model or the example inputs (calling the model on them "
        "directly shows whether it fails outside export too).")
_STRICT = ("torch's strict tracer (dynamo) cannot trace this code; it is no dynamic-shape constraint. "
           "Rewrite the line, or export with strict=False.")


def model_error(e: Exception, trace: Trace | None = None) -> ModelError | None:
    """``e``, raised while torch traced the model, as the model's error (raise it ``from e``);
    None when it is symshape's own: raised inside the ``export``, ``shapes`` or ``solver``
    packages, or an ExportError torch wrapped (re-raise ``e`` unchanged). ``trace``, what the
    trace left behind, names torch's size symbols in the text (``s77`` -> ``x.size(0)``)."""
    chain = _chain(e)
    if any(isinstance(x, ExportError) or _raised_in_symshape(x) for x in chain):
        return None
    kind, text, unsupported = _what(e, chain)
    text = _named(text, trace) if trace is not None else text
    at = _where(chain)
    lines = [f"export could not trace the model: {kind}: {text}" if text else
             f"export could not trace the model: {kind}"]
    if at is not None:
        lines.append(f"  at {at.origin}: {at.code}" if at.code else f"  at {at.origin}")
    lines.append(_STRICT if unsupported else _FIX)
    return ModelError("\n".join(lines), origin=at.origin if at is not None else None,
                      code=(at.code or None) if at is not None else None)


def _chain(e: BaseException) -> list[BaseException]:
    """``e`` and the exceptions behind it, outermost first, as Python's traceback shows them."""
    chain: list[BaseException] = []
    x: BaseException | None = e
    while x is not None and x not in chain:
        chain.append(x)
        x = x.__cause__ if x.__cause__ is not None else (None if x.__suppress_context__ else x.__context__)
    return chain


def _raised_in_symshape(x: BaseException) -> bool:
    """Whether the innermost frame ``x`` was raised from is symshape's own code."""
    frames = traceback.extract_tb(x.__traceback__)
    return bool(frames) and is_symshape_file(frames[-1].filename)


def _what(e: BaseException, chain: list[BaseException]) -> tuple[str, str, bool]:
    """The error to show, as ``(type name, first line of its message)``, and whether it says
    dynamo cannot trace the code. A dynamo error stands for the exception behind it (the
    innermost one that is not dynamo's) or the one it quotes (``raised exception
    ValueError('...')``); else it is shown itself, with its explanation."""
    if not tc.is_dynamo_error(e):
        return type(e).__name__, _first_line(str(e)), False
    inner = [x for x in chain if not tc.is_dynamo_error(x)]
    if inner:
        return type(inner[-1]).__name__, _first_line(str(inner[-1])), False
    for x in reversed(chain):
        quoted = tc.wrapped_exception(x)
        if quoted is not None:
            return quoted[0], _first_line(quoted[1]), False
    text = _first_line(str(e))
    why = tc.dynamo_explanation(e)
    return type(e).__name__, f"{text} ({why})" if why and text else text or why or "", tc.is_unsupported(e)


def _first_line(text: str) -> str:
    """The first non-empty line of ``text``, its runs of spaces collapsed, at most
    :data:`_MAX_TEXT` characters.

    >>> _first_line("  expected same dim,  got 2\\n  Explanation: ...")
    'expected same dim, got 2'
    """
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    return line if len(line) <= _MAX_TEXT else line[:_MAX_TEXT - 3] + "..."


_SYMBOL = re.compile(r"\bs\d+\b")
"""torch's names of backed size symbols (``s77``) in an error text."""


def _named(text: str, trace: Trace) -> str:
    """``text`` with torch's size symbols named as the user reads them (``x.size(0)``); a
    symbol the trace does not know, or not expressible in input sizes, stays as it is."""
    known = {str(sym): expr for sym, expr in trace.sym_map.items()}

    def name(m: re.Match[str]) -> str:
        expr = known.get(m[0])
        if expr is None or not expr.free_symbols or not expr.free_symbols <= set(trace.names):
            return m[0]
        return relation_text(expr, trace.names)
    return _SYMBOL.sub(name, text)


def _where(chain: list[BaseException]) -> UserFrame | None:
    """The innermost line of the user's code the error came from: in the Python traceback
    (innermost exception first), else in the stack dynamo was tracing (strict mode, where the
    traceback holds dynamo's frames only); None when neither reaches the user's code."""
    for x in reversed(chain):
        for fr in reversed(traceback.extract_tb(x.__traceback__)):
            if is_user_file(fr.filename):
                return UserFrame(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
    for x in reversed(chain):
        for filename, lineno, function, code in reversed(tc.dynamo_user_stack(x)):
            if is_user_file(filename):
                code = code or linecache.getline(filename, lineno).strip()
                return UserFrame(filename, lineno, function, code)
    return None
