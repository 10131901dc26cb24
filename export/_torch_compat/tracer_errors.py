"""Errors torch raised while tracing, read for the user: which are dynamo's (strict mode, and
``torch.cond``/``map`` in either mode) wrappers, the user's exception a wrapper stands for, and
the user stack dynamo recorded (its Python traceback stops at dynamo's own frames)."""

from __future__ import annotations

import ast
import re
import traceback

from torch._dynamo.exc import TorchDynamoException, Unsupported

__all__ = ["is_dynamo_error", "is_unsupported", "wrapped_exception", "dynamo_explanation", "dynamo_user_stack"]

_WRAPPED = re.compile(r"(?:raised exception|got) ([A-Za-z_][A-Za-z_0-9]*)\((.*)\)\s*$")
"""How dynamo quotes the exception it observed: ``raised exception RuntimeError('...')`` (an
``ObservedException``, or an ``Unsupported``'s debug context) or ``...: got RuntimeError('...')``
(a ``TorchRuntimeError``'s explanation of a failed fake-tensor call)."""

_SENTENCE = re.compile(r".*?\.[`'\")]*(?=\s+[A-Z]|\s*$)")
"""A first sentence: up to a full stop (and its closing quote) before a capital or the end."""


def is_dynamo_error(e: BaseException) -> bool:
    """Whether ``e`` is one of dynamo's own exceptions (a wrapper, not the user's error)."""
    return isinstance(e, TorchDynamoException)


def is_unsupported(e: BaseException) -> bool:
    """Whether ``e`` says dynamo cannot trace the code (a graph break in export's strict mode)."""
    return isinstance(e, Unsupported)


def wrapped_exception(e: BaseException) -> tuple[str, str] | None:
    """The exception a dynamo error quotes (the last quote in its text), as ``(type name,
    message)``; None when it quotes none.

    >>> wrapped_exception(RuntimeError("raised exception ValueError('bad size 4')"))
    ('ValueError', 'bad size 4')
    >>> wrapped_exception(RuntimeError("failed\\n  Explanation: call_function f(*(s2,)): got RuntimeError(\\"odd\\")"))
    ('RuntimeError', 'odd')
    """
    for line in reversed(str(e).splitlines()):
        m = _WRAPPED.search(line)
        if m is None:
            continue
        try:
            args = ast.literal_eval(f"({m[2]},)")
        except (SyntaxError, ValueError):
            return m[1], m[2]
        return m[1], str(args[0]) if len(args) == 1 else ", ".join(map(str, args))
    return None


def dynamo_explanation(e: BaseException) -> str | None:
    """The first sentence of a dynamo error's ``Explanation:`` line; None when it has none.

    >>> dynamo_explanation(RuntimeError("Attempted to call function marked as skipped\\n"
    ...                                 "  Explanation: Dynamo cannot trace `os.f.` It is a builtin (e.g. open)."))
    'Dynamo cannot trace `os.f.`'
    """
    for line in str(e).splitlines():
        head, sep, text = line.strip().partition("Explanation:")
        if sep and not head:
            m = _SENTENCE.match(text.strip())
            return m[0] if m else text.strip()
    return None


def dynamo_user_stack(e: BaseException) -> list[tuple[str, int, str, str]]:
    """The frames dynamo was tracing when ``e`` was raised (its ``real_stack``: the user's code,
    and torch's it inlined), innermost last: ``(file, line, function, code)``; empty when
    dynamo recorded none."""
    stack = getattr(e, "real_stack", None)
    if not isinstance(stack, list):  # a traceback.StackSummary
        return []
    return [(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip())
            for fr in stack if isinstance(fr, traceback.FrameSummary)]
