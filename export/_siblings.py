"""symshape's ``export`` needs its own ``shapes`` and ``solver``, whatever else ``sys.path`` offers.

A user's folder often holds a ``solver.py`` or a ``shapes.py``; run from there (``python -m
export``, or a script next to them), Python would import those instead of symshape's packages.
:func:`claim` imports symshape's own sibling packages from this installation by path, so the
rest of ``export`` imports them from ``sys.modules``. When a module of that name is already
imported and is not symshape's, it raises an ImportError naming the conflicting file.
(``export`` itself cannot be protected this way: a folder's own ``export.py`` is found before
this package; the ``symshape`` console script does not put the current folder on ``sys.path``.)
"""

from __future__ import annotations

import importlib.util
import os
import sys

__all__ = ["SIBLINGS", "claim", "own_init"]

SIBLINGS = ("shapes", "solver")
"""symshape's top-level packages next to ``export``, in import order."""


def own_init(name: str) -> str:
    """The ``__init__.py`` of symshape's package ``name`` in this installation."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, name, "__init__.py")


def _is_own(name: str, origin: str | None) -> bool:
    return origin is not None and os.path.abspath(origin) == own_init(name)


def claim() -> None:
    """Make ``import shapes`` / ``import solver`` symshape's own packages (see the module doc)."""
    for name in SIBLINGS:
        _claim(name)


def _claim(name: str) -> None:
    loaded = sys.modules.get(name)
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        if not _is_own(name, origin):
            raise ImportError(
                f"symshape needs its own '{name}' package, but '{name}' is already imported from "
                f"{origin or repr(loaded)}, which shadows it; rename that file or import symshape's "
                f"'export' before it (the 'symshape' console script avoids the current folder)",
                name=name, path=origin)
        return
    found = importlib.util.find_spec(name)
    if found is not None and _is_own(name, found.origin):
        return
    own = own_init(name)
    spec = importlib.util.spec_from_file_location(name, own, submodule_search_locations=[os.path.dirname(own)])
    if spec is None or spec.loader is None or not os.path.isfile(own):
        where = found.origin if found is not None else "nowhere"
        raise ImportError(f"symshape's '{name}' package is missing next to {os.path.dirname(__file__)} "
                          f"('{name}' resolves to {where}); reinstall symshape", name=name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
