"""Making torch.export build a given ``ShapeEnv`` class: the patch of torch's globals, its
process-wide lock, and :func:`route_shape_env` (routing to a decider) on top of it.

Thread-safety: the install functions patch module globals of torch, which is
process-wide, so they hold one process-wide re-entrant lock for the whole ``with``:
routed exports from several threads run one at a time, nesting on one thread works, and
when the last block ends torch's original globals are back (identical objects), under
any order of exits and any exception. See ``docs/design.md`` ("Threads and archives").
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from torch.fx.experimental.symbolic_shapes import ShapeEnv

from export._torch_compat.decider import Decider
from export._torch_compat.routing import RoutingShapeEnv

__all__ = ["SHAPE_ENV_SITES", "install_shape_env_class", "route_shape_env"]

SHAPE_ENV_SITES: tuple[str, ...] = (
    "torch._export.non_strict_utils",  # make_fake_inputs: the non-strict ShapeEnv
    "torch._dynamo.output_graph",  # OutputGraph.__init__: the strict (dynamo) ShapeEnv
    "torch.export._trace",  # _extract_fake_inputs fallback (no fake inputs found)
    "torch._dynamo.eval_frame",  # dynamo export of a function without tensor ops
)
"""Modules whose global name ``ShapeEnv`` export calls to construct its ShapeEnv."""


class _Patches:
    """The process-wide bookkeeping of :func:`install_shape_env_class`: one re-entrant lock
    (serializes routed exports across threads, lets one thread nest them) and the stack of
    open installs with the originals found under the first one.

    The globals always hold the class of the innermost open install, or torch's originals
    when none is open, whatever order the installs end in (an inner one may outlive its
    outer one when ``__enter__``/``__exit__`` are called by hand).
    """

    __slots__ = ("lock", "stack", "originals")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.stack: list[tuple[object, type[ShapeEnv]]] = []
        self.originals: list[Any] = []

    def push(self, token: object, cls: type[ShapeEnv], modules: list[Any]) -> None:
        if not self.stack:
            self.originals = [getattr(m, "ShapeEnv") for m in modules]
        self.stack.append((token, cls))
        self._bind(modules)

    def pop(self, token: object, modules: list[Any]) -> None:
        self.stack = [entry for entry in self.stack if entry[0] is not token]
        self._bind(modules)
        if not self.stack:
            self.originals = []

    def _bind(self, modules: list[Any]) -> None:
        for i, m in enumerate(modules):
            setattr(m, "ShapeEnv", self.stack[-1][1] if self.stack else self.originals[i])


_PATCHES = _Patches()
"""The only module-level mutable state: torch's globals are process-wide, so is their guard."""


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """Hold the process-wide lock of routed exports for a whole symshape export.

    A symshape export is several torch traces plus program rewrites, and torch keeps some
    tracing state in module globals (the current make_fx tracer), so two exports from two
    threads must not interleave even between their routed traces. Re-entrant: a model whose
    forward runs another symshape export nests.
    """
    with _PATCHES.lock:
        yield


@contextlib.contextmanager
def install_shape_env_class(cls: type[ShapeEnv]) -> Iterator[None]:
    """Make torch.export build ``cls`` instead of ``ShapeEnv`` inside the ``with``.

    Patches the global ``ShapeEnv`` of every module in :data:`SHAPE_ENV_SITES` and, when
    the last open ``with`` ends (normally or by an exception), puts torch's originals back
    (the identical objects). Holds a process-wide re-entrant lock for the whole block:
    another thread's install waits until this one ends, while the same thread may nest
    (an inner block's class is in force until it ends, in any order).
    """
    if not (isinstance(cls, type) and issubclass(cls, ShapeEnv)):
        raise TypeError(f"{cls!r} is not a subclass of torch's ShapeEnv")
    modules = [importlib.import_module(name) for name in SHAPE_ENV_SITES]
    token = object()
    with _PATCHES.lock:
        _PATCHES.push(token, cls, modules)
        try:
            yield
        finally:
            _PATCHES.pop(token, modules)


@contextlib.contextmanager
def route_shape_env(
    decider: Decider | None, cls: type[RoutingShapeEnv] = RoutingShapeEnv, *, specialize_zero_one: bool = True
) -> Iterator[list[RoutingShapeEnv]]:
    """Route the decisions of exports inside the ``with`` to ``decider``.

    ``specialize_zero_one=False`` builds the ShapeEnvs with torch's own switch off: an
    example size 0/1 on a dynamic dim stays symbolic and sizes get no ``>= 2`` default
    range (the boundary re-trace of :mod:`export.program.zero_one`).

    Yields the list of ShapeEnvs torch creates meanwhile, in creation order. One export
    may create several (``torch.cond`` in non-strict mode traces its branches with
    dynamo, which builds its own; dynamo restarts); :func:`shape_env_of` finds the one
    behind the resulting program. Routed exports are serialized process-wide (see
    :func:`install_shape_env_class`); a ShapeEnv another thread builds meanwhile (a plain
    ``torch.export.export`` there) gets no decider, i.e. torch's vanilla behaviour.

    >>> with route_shape_env(BaseDecider()) as envs:  # doctest: +SKIP
    ...     ep = torch.export.export(model, args, dynamic_shapes=shapes)
    """
    created: list[RoutingShapeEnv] = []
    owner = threading.get_ident()

    def __init__(self: RoutingShapeEnv, *args: Any, **kwargs: Any) -> None:
        if not specialize_zero_one:
            kwargs["specialize_zero_one"] = False
        cls.__init__(self, *args, **kwargs)
        if threading.get_ident() != owner:
            return  # another thread's plain torch.export meanwhile: vanilla (decider None)
        self.decider = decider
        created.append(self)
        if decider is not None and not decider.attach(self):
            self.decider = None  # the decider declined this env (e.g. a nested dynamo trace)

    bound = type(f"Routed{cls.__name__}", (cls,), {"__init__": __init__, "__module__": __name__})
    with install_shape_env_class(bound), _judged_by_symshape():
        yield created


_SOLVE_SITE = ("torch.export._trace", "produce_guards_and_solve_constraints")
"""Where non-strict export (2.13-2.15) finds the step that produces guards and runs torch's
own constraint solver (DimConstraints) on them, only to raise or suggest fixes."""


def _skip_for_routed(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original``, skipped when the export is routed to a decider that judges every
    constraint itself (:meth:`Decider.judges_constraints`: symshape's solver, with its facts,
    violations and fixes) and the spec ties no input dims together: torch's guard code and
    its DimConstraints solve (a tenth to a fifth of a small export; both discarded by export)
    are not computed, the ShapeEnv is only frozen. Either way the decider then hears
    :meth:`Decider.on_traced`. Another thread's plain export runs ``original``."""

    @functools.wraps(original)
    def produce_guards_and_solve_constraints(*args: Any, **kwargs: Any) -> Any:
        fake_mode = kwargs.get("fake_mode", args[0] if args else None)
        env = getattr(fake_mode, "shape_env", None)
        if not (isinstance(env, RoutingShapeEnv) and env.decider is not None and env.decider.judges_constraints()):
            return original(*args, **kwargs)
        if _has_equalities(kwargs.get("equalities_inputs", args[3] if len(args) > 3 else None)):
            try:
                out = original(*args, **kwargs)  # torch's guards on input equalities are the program's checks
            except AssertionError as e:
                if not _raised_in(e, "prettify_results"):
                    raise
                # torch's DimConstraints failed to word its own fix (2.14: "Expected op to be '=='" on a
                # bound such as batch <= 1048576/3); its guards were produced, the words are discarded
                env.frozen = True
                out = None
        else:
            env.frozen = True  # as torch does after producing guards: no guard may be added now
            out = None
        env.decider.on_traced()  # (a decider may end the export here; symshape judges after the export)
        return out

    produce_guards_and_solve_constraints.__symshape_skip__ = True  # type: ignore[attr-defined]
    return produce_guards_and_solve_constraints


def _raised_in(error: BaseException, function: str) -> bool:
    """Whether ``error`` was raised in a function named ``function`` (its innermost frame)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name == function


def _has_equalities(equalities: Any) -> bool:
    """Whether the spec ties input dims together (equal Dims, derived Dims, the classic
    ``dynamic_dim(x, 0) == dynamic_dim(y, 0)``). torch (2.13 and 2.14 checked) unifies the
    dims of a classic equality only while it produces guards, which is where its program gets
    the check that they are equal, so those exports keep torch's step."""
    return equalities is not None and any(
        getattr(equalities, name, None) for name in ("source_pairs", "derived_equalities", "phantom_symbols"))


@contextlib.contextmanager
def _judged_by_symshape() -> Iterator[None]:
    """Inside the ``with`` (under the lock of :func:`install_shape_env_class`), routed
    non-strict exports skip torch's constraint solving (see :func:`_skip_for_routed`); the
    original is back when the block that installed the skip ends. A torch without the site
    keeps its own solving (slower, same answers: its violations reach the decider's
    ``on_constraint_violation``)."""
    module = importlib.import_module(_SOLVE_SITE[0])
    original = getattr(module, _SOLVE_SITE[1], None)
    if original is None or getattr(original, "__symshape_skip__", False):
        yield  # no such site, or an outer block installed the skip already
        return
    setattr(module, _SOLVE_SITE[1], _skip_for_routed(original))
    try:
        yield
    finally:
        setattr(module, _SOLVE_SITE[1], original)
