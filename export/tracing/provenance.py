"""Where in the user's code a decision came from: the innermost frame outside torch,
Python's standard library and symshape itself. Walked lazily: only for guards that
become facts (a stack walk costs about 0.2 ms).
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import torch

from export import _torch_compat as tc
import shapes as _shapes_pkg
import solver as _solver_pkg

__all__ = ["UserFrame", "user_frame", "is_user_file", "is_symshape_file"]


def _dir_of(module: object) -> str:
    return os.path.dirname(os.path.abspath(module.__file__))  # type: ignore[attr-defined]


_OWN = tuple(
    d + os.sep
    for d in (
        str(Path(os.path.abspath(__file__)).parents[1]),  # the export package, without importing it
        _dir_of(_shapes_pkg),
        _dir_of(_solver_pkg),
    )
)
"""symshape's own packages."""

_SKIP = (_dir_of(torch) + os.sep, *_OWN, sysconfig.get_paths()["stdlib"] + os.sep)


@dataclass(frozen=True, slots=True)
class UserFrame:
    """A user's source line: file, line number, function and the code text."""

    filename: str
    lineno: int
    function: str
    code: str

    def assigned(self, default: str) -> str:
        """The variable this line assigns (``n`` for ``n = y.sum().item()``), else ``default``.

        >>> UserFrame("m.py", 5, "forward", "n = y.sum().item()").assigned("u0")
        'n'
        >>> UserFrame("m.py", 5, "forward", "if y.item() == 1:").assigned("u0")
        'u0'
        """
        m = re.match(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=[^=]", self.code)
        return m[1] if m else default

    @property
    def origin(self) -> str:
        """``model.py:14`` (path relative to the working directory when under it)."""
        try:
            rel = os.path.relpath(self.filename)
        except ValueError:
            rel = self.filename
        name = rel if not rel.startswith("..") else os.path.basename(self.filename)
        return f"{name}:{self.lineno}"


def is_user_file(filename: str) -> bool:
    """True for the user's own code (not torch, the standard library or symshape)."""
    return not filename.startswith("<") and not os.path.abspath(filename).startswith(_SKIP)


def is_symshape_file(filename: str) -> bool:
    """True for symshape's own code (the ``export``, ``shapes`` and ``solver`` packages)."""
    return not filename.startswith("<") and os.path.abspath(filename).startswith(_OWN)


def user_frame(frame: FrameType | None = None) -> UserFrame | None:
    """The innermost user frame being traced: dynamo's own stack in strict mode (the Python
    stack there only shows the export call), else the current Python stack."""
    for filename, lineno, function, code in reversed(tc.dynamo_stack()):
        if is_user_file(filename):
            return UserFrame(filename=filename, lineno=lineno, function=function, code=code)
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    while f is not None:
        filename = f.f_code.co_filename
        if is_user_file(filename):
            code = linecache.getline(filename, f.f_lineno).strip()
            return UserFrame(filename=filename, lineno=f.f_lineno, function=f.f_code.co_name, code=code)
        f = f.f_back
    return None
