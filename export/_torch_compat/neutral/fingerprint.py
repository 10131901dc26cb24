"""Fingerprints of the functions a source-keyed 0/1 entry sits in, and whether the installed one is accepted.

An entry of the 0/1 tables is keyed by a line's text. A release can keep that text and change
the code around it (what the line's answer feeds, which branch reaches it), so each entry also
names its **scope**, the function it sits in (for a closure, the module-level function or
method that defines it), with that function's fingerprint as read in each release where the
entry was checked. An entry whose scope has, in the installed library, a fingerprint none of
those releases had is **disabled**: its sites are judged as any other site, i.e. conservatively.

A fingerprint is ``sha256[:12]`` of the function's normalized source: ``inspect.getsource`` of
the object found in its module by name, dedented, comments, trailing blanks and blank lines
dropped. Indentation and the rest of each line are kept, so any change of code or docstring
changes it (a changed docstring is a false alarm, cheap to re-accept); comments and blank
lines do not. It is read line by line (tokenize only finds the comments), so it does not
depend on the Python release's tokens (3.12 tokenizes f-strings differently).

>>> fingerprint_source('''
...     def f(x):  # a comment
...
...         return x + 1
... ''') == fingerprint_source("def f(x):\\n    return x + 1\\n")
True
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import io
import textwrap
import tokenize
from dataclasses import dataclass

__all__ = ["Scope", "releases", "fingerprint_source", "installed_fingerprint", "scope_problem"]


def releases(v213: str, v214: str, v215: str) -> tuple[tuple[str, str], ...]:
    """The accepted fingerprints of a torch scope, one per release it was read in (2.13.0, 2.14.1, 2.15.0).

    >>> releases("a", "b", "b")
    (('2.13', 'a'), ('2.14', 'b'), ('2.15', 'b'))
    """
    return (("2.13", v213), ("2.14", v214), ("2.15", v215))


@dataclass(frozen=True, slots=True)
class Scope:
    """The function an entry sits in: ``module`` and ``qualname`` (``K.__lt__``) as found by name,
    ``accepted`` its fingerprint per release read (``(("2.13", "169d65096b2c"), ...)``), and the
    ``library`` whose installed release picks which recorded fingerprint is the running one's."""

    module: str
    qualname: str
    accepted: tuple[tuple[str, str], ...]
    library: str = "torch"

    def __str__(self) -> str:
        return f"{self.module}.{self.qualname}"

    def recorded(self, release: str) -> str | None:
        """The fingerprint recorded for ``release`` ("2.15", "transformers 5.25"), if any.

        >>> Scope("m", "f", releases("a", "b", "c")).recorded("2.14")
        'b'
        """
        return dict(self.accepted).get(release)


def _comment_free(lines: list[str]) -> list[str]:
    """``lines`` without their comments (found by tokenize: a ``#`` inside a string stays)."""
    out = list(lines)
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                out[row - 1] = out[row - 1][:col] + ("\n" if out[row - 1].endswith("\n") else "")
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [line for line in lines if not line.lstrip().startswith("#")]
    return out


def fingerprint_source(source: str) -> str:
    """The fingerprint of a function's source text (see the module's docstring)."""
    lines = _comment_free(textwrap.dedent(source).splitlines(keepends=True))
    kept = [line.rstrip() for line in lines if line.strip()]
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()[:12]


@functools.cache
def installed_fingerprint(module: str, qualname: str) -> str | None:
    """The fingerprint of ``module.qualname`` as installed (read once per process), or None when
    the module does not import or has no such function.

    >>> installed_fingerprint("export._torch_compat.neutral.fingerprint", "releases") is not None
    True
    >>> installed_fingerprint("export._torch_compat.neutral.fingerprint", "nothing") is None
    True
    """
    try:
        obj: object = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return fingerprint_source(inspect.getsource(obj))  # type: ignore[arg-type]
    except (ImportError, AttributeError, OSError, TypeError):
        return None


def scope_problem(scope: Scope, release: str) -> str | None:
    """None when the installed ``scope`` has an accepted fingerprint, else why the entry is
    disabled (``release`` names the running release in the message).

    >>> here = Scope("export._torch_compat.neutral.fingerprint", "releases", releases("x", "y", "z"))
    >>> scope_problem(here, "2.15").split(":")[0]
    'export._torch_compat.neutral.fingerprint.releases changed in 2.15'
    """
    found = installed_fingerprint(scope.module, scope.qualname)
    if found is None:
        return f"{scope} is not in the installed {scope.library} ({release})"
    if found not in {fp for _, fp in scope.accepted}:
        seen = ", ".join(f"{r}: {fp}" for r, fp in scope.accepted)
        return f"{scope} changed in {release}: fingerprint {found}, accepted {seen}"
    return None
