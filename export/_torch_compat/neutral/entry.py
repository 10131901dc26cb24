"""One entry of the 0/1 tables: its key, its justification, the scopes it needs unchanged.

An entry is keyed by a source line (``(file suffix, function, stripped line)``) or by an op or
function name (``("aten.reshape.default",)``), which is then read from a frame of torch's at a
fixed line (the **anchor**: ``proxy_call``'s ``out = func(*args, **kwargs)``); its ``scopes``
are the functions whose fingerprints must be accepted for it to stand (the line's own function,
or the anchor's). A :class:`Conditional` entry also reads the asking frame.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Protocol

from export._torch_compat.neutral.fingerprint import Scope

__all__ = ["Conditional", "Entry", "SiteLike", "path_of"]


class SiteLike(Protocol):
    """What a table reads of a site (:class:`export.tracing.sites.Site`)."""

    @property
    def file(self) -> str: ...

    @property
    def function(self) -> str: ...

    @property
    def code(self) -> str: ...

    @property
    def detail(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Conditional:
    """A conditional entry's test: ``holds`` reads the asking frame (locals and globals only,
    no user code), ``text`` says what it checks, ``why`` why the line's decision cannot
    change what it computes when the condition holds."""

    holds: Callable[[FrameType], bool]
    text: str
    why: str


@dataclass(frozen=True, slots=True)
class Entry:
    """``table`` (its name), ``key``, ``why`` (one line), the ``scopes`` it needs unchanged, and
    the ``condition`` of a conditional entry.

    >>> from export._torch_compat.neutral.fingerprint import releases
    >>> e = Entry("NEUTRAL_SITES", ("torch/_prims/__init__.py", "_collapse_view_helper", "if shape[idx] != 1:"),
    ...           "why", (Scope("torch._prims", "_collapse_view_helper", releases("a", "a", "a")),))
    >>> e.label
    'torch/_prims/__init__.py:_collapse_view_helper: if shape[idx] != 1:'
    """

    table: str
    key: tuple[str, ...]
    why: str
    scopes: tuple[Scope, ...]
    condition: Conditional | None = None

    @property
    def label(self) -> str:
        """The key as one line."""
        return f"{self.key[0]}:{self.key[1]}: {self.key[2]}" if len(self.key) == 3 else " ".join(self.key)


def path_of(filename: str) -> str:
    """A file name with ``/`` separators (what the suffixes are matched against)."""
    return filename.replace(os.sep, "/")
