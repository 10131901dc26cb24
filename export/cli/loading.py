"""Loading the user's model: ``MODEL.py:FACTORY`` executed from its path, ``FACTORY()`` called.

The file is loaded by path (``importlib``), under a private module name, never found through
``sys.path``. Its folder is put first on ``sys.path`` while it runs, so its sibling imports
work, and a sibling named like one of symshape's packages (``export.py``, ``solver.py``,
``shapes.py``: YOLOv5 ships an ``export.py``) is what the model's own ``import export`` gets:
symshape's modules step out of ``sys.modules`` while the model's file and its factory run,
and come back afterwards.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from export.cli.args import UsageError

__all__ = ["Loaded", "OWN_PACKAGES", "exception_line", "loaded_model", "shadowing", "split_target"]

OWN_PACKAGES = ("export", "solver", "shapes")
"""symshape's top-level packages: names a user's file can shadow."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """What ``FACTORY()`` returned: the model, its positional and keyword example inputs."""

    model: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def split_target(target: str) -> tuple[str, str]:
    """``model.py:make`` -> ``('model.py', 'make')``."""
    path, sep, factory = target.rpartition(":")
    if not sep or not path or not factory:
        raise UsageError(f"{target!r}: expected MODEL.py:FACTORY, e.g. model.py:make")
    if not all(p.isidentifier() for p in factory.split(".")):
        raise UsageError(f"{target!r}: FACTORY {factory!r} is not a Python name")
    return path, factory


def exception_line(e: BaseException, file: str | None = None) -> str:
    """One line for an exception, with the line of ``file`` it was raised from."""
    where = ""
    if file is not None:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) == file]
        if frames:
            where = f" (at {os.path.basename(file)}:{frames[-1].lineno})"
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}{where}".rstrip(": ")


def shadowing(folder: str) -> tuple[str, ...]:
    """symshape's package names that a module or package in ``folder`` would shadow.

    >>> shadowing(os.path.dirname(os.path.dirname(__file__)))  # the export package's own folder
    ()
    """
    return tuple(n for n in OWN_PACKAGES if os.path.isfile(os.path.join(folder, f"{n}.py"))
                 or os.path.isfile(os.path.join(folder, n, "__init__.py")))


def _owned(name: str, names: tuple[str, ...]) -> bool:
    return name.partition(".")[0] in names


@contextlib.contextmanager
def _lent(names: tuple[str, ...]) -> Iterator[None]:
    """``import N`` for N in ``names`` finds the user's module while inside; symshape's own
    modules are back on exit (the user's stay referenced by the module that imported them)."""
    saved = {k: m for k, m in sys.modules.items() if _owned(k, names)}
    for k in saved:
        del sys.modules[k]
    try:
        yield
    finally:
        for k in [k for k in sys.modules if _owned(k, names)]:
            del sys.modules[k]
        sys.modules.update(saved)


@contextlib.contextmanager
def loaded_model(path: str, factory: str, debug: bool) -> Iterator[Loaded]:
    """Execute ``path`` and call ``factory`` in it; sys.modules and sys.path are restored on exit
    (the model's folder stays first on ``sys.path`` until then, for imports while tracing)."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    full = os.path.abspath(path)
    folder = os.path.dirname(full)
    name = "_symshape_model_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(full))[0])
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    saved_path = list(sys.path)
    sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        with _lent(shadowing(folder)):
            try:
                spec.loader.exec_module(module)
            except Exception as e:  # noqa: BLE001 - the user's code
                raise UsageError(f"{path}: loading failed: {exception_line(e, full)}") from (e if debug else None)
            loaded = _call_factory(module, path, factory, debug)
        yield loaded
    finally:
        sys.path[:] = saved_path
        for key in set(sys.modules) - before:
            mod = sys.modules.get(key)
            file = getattr(mod, "__file__", None) or ""
            if key == name or (file and os.path.abspath(file).startswith(folder + os.sep)
                               and "site-packages" not in file):
                sys.modules.pop(key, None)


def _call_factory(module: Any, path: str, factory: str, debug: bool) -> Loaded:
    obj: Any = module
    for part in factory.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                           and getattr(v, "__module__", None) == module.__name__)
            hint = f"; functions defined there: {', '.join(names)}" if names else ""
            raise UsageError(f"{path}: has no {factory!r}{hint}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{path}:{factory} is a {type(obj).__name__}, not a function")
    try:
        result = obj()
    except Exception as e:  # noqa: BLE001 - the user's code
        raise UsageError(f"{path}:{factory}() raised {exception_line(e, os.path.abspath(path))}") \
            from (e if debug else None)
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        raise UsageError(f"{path}:{factory}() must return (model, args) or (model, args, kwargs), "
                         f"got {_describe(result)}")
    model, args, kwargs = (*result, None) if len(result) == 2 else result
    if not callable(model):
        raise UsageError(f"{path}:{factory}(): the model is a {type(model).__name__}, not an nn.Module or function")
    if isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        args = (args,)
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, Mapping):
        raise UsageError(f"{path}:{factory}(): kwargs must be a dict, got {type(kwargs).__name__}")
    return Loaded(model, args, dict(kwargs))


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__
