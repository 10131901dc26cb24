"""Plain ``torch.export.export`` vs symshape's ``export.export`` on the Hugging Face zoo.

:func:`compare` exports one model with one spec variant (``benchmarks.hf_zoo``) with both
exporters in the same process, applies each exporter's suggested fix when the export
fails (torch: its "Suggested fixes" through ``refine_dynamic_shapes_from_suggested_fixes``;
symshape: the program its verification built, ``err.fixes.program``, when it offers one, and
in any case re-exports with exactly what ``err.fixes.apply(spec)`` returns, timed apart, so
that both user paths are measured), then runs the resulting program on a grid of sizes and
classifies each size against eager:

* ``ok``: the program runs and matches eager;
* ``wrong``: the program runs and differs from eager (silently wrong);
* ``refused``: the program (or the lack of one) refuses a size eager handles;
* ``both_fail``: the program refuses a size eager fails on too.

Used by ``tests/e2e/transformers`` and ``benchmarks/bench_models.py``.
"""

from __future__ import annotations

import gc
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes
from torch.utils import _pytree as pytree

import export
from benchmarks.hf_zoo import Call, HFModel, example_sizes, grid, spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from replay_oracle import program_key  # noqa: E402 - the one definition of "the same program"

__all__ = ["EXPORTERS", "Comparison", "Outcome", "SizeRun", "compare", "classify", "same_program"]

EXPORTERS = ("torch", "symshape")
KINDS = ("ok", "wrong", "refused", "both_fail")
RTOL, ATOL = 1e-4, 1e-5


@dataclass(frozen=True, slots=True)
class SizeRun:
    """One grid point: its sizes, the verdict (one of ``KINDS``) and why."""

    sizes: tuple[tuple[str, int], ...]
    kind: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one exporter did with one (model, variant).

    ``outcome``: ``exported`` / ``violation`` / ``error`` (of the direct export);
    ``fix``: ``-`` (none needed), ``reexports``, ``fails`` (the re-export failed),
    ``unbuildable`` (the suggestion could not be turned into a spec), ``none`` (no fix
    offered); ``program``: which program ran on the grid (``direct``, ``offered``: symshape's
    ``err.fixes.program``, ``fixed``: the re-export's, or ``-``); ``seconds``: the direct
    export's time per repeat; ``fix_seconds``: the fixed re-export's; ``warnings``:
    SymshapeWarnings of the export that made the program (the direct one when there is no
    program; an offered program's are its report's); ``claimed``: symshape's
    ``fixes.verified``; ``same``: whether the offered program equals the re-export's (range
    constraints, symshape ranges, graph code; None without both); ``larger_runs``: symshape's
    ``err.fixes.larger_example_program`` on the grid (empty without one).
    """

    exporter: str
    outcome: str
    message: str
    fix: str
    program: str
    seconds: tuple[float, ...]
    fix_seconds: tuple[float, ...]
    warnings: int
    runs: tuple[SizeRun, ...]
    claimed: bool | None = None
    same: bool | None = None
    larger_runs: tuple[SizeRun, ...] = ()

    def count(self, kind: str, runs: tuple[SizeRun, ...] | None = None) -> int:
        return sum(r.kind == kind for r in (self.runs if runs is None else runs))

    def total_seconds(self) -> tuple[float, ...]:
        """Per repeat, the user's path to a program: the direct export, plus the fix's
        re-export unless the error offered the program (symshape's ``err.fixes.program``)."""
        if self.program == "offered":
            return self.seconds
        return self.reexport_seconds()

    def reexport_seconds(self) -> tuple[float, ...]:
        """Per repeat: the direct export plus, when there is one, the fix's re-export (the
        path of a user who re-exports with the fix)."""
        if not self.fix_seconds:
            return self.seconds
        return tuple(a + b for a, b in zip(self.seconds, self.fix_seconds))


@dataclass(frozen=True, slots=True)
class Comparison:
    model: str
    variant: str
    torch: Outcome | None
    symshape: Outcome | None

    def of(self, exporter: str) -> Outcome:
        """The outcome of ``exporter``, which must have run."""
        out = self.torch if exporter == "torch" else self.symshape
        if out is None:
            raise ValueError(f"{exporter} did not run on {self.model} {self.variant}")
        return out


# -- exporting --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Attempt:
    program: Any
    error: BaseException | None
    seconds: float
    warnings: int


def _attempt(fn: Callable[..., Any], model: Any, call: Call, dynamic_shapes: Any) -> _Attempt:
    args, kwargs = call
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            ep, err = fn(model, args, kwargs, dynamic_shapes=dynamic_shapes), None
        except Exception as e:  # noqa: BLE001 - every failure is a data point
            ep, err = None, e
        seconds = time.perf_counter() - start
    n = sum(issubclass(w.category, export.SymshapeWarning) for w in caught)
    return _Attempt(ep, err, seconds, n)


def _torch_export(model: Any, args: Any, kwargs: Any, dynamic_shapes: Any) -> Any:
    return torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)


def _symshape_export(model: Any, args: Any, kwargs: Any, dynamic_shapes: Any) -> Any:
    return export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)


def _torch_fix(err: BaseException, m: HFModel, variant: str) -> Any:
    """torch's suggested fix as a spec, ``None`` if it offers none, ``"unbuildable"``."""
    text = str(err)
    if "Suggested fixes:" not in text:
        return None
    lines = []
    for line in text.split("Suggested fixes:", 1)[1].strip("\n").splitlines():
        if not line.strip():
            break  # torch appends a footer its own parser chokes on
        lines.append(line)
    try:
        return refine_dynamic_shapes_from_suggested_fixes("Suggested fixes:\n" + "\n".join(lines), spec(m, variant))
    except Exception:  # noqa: BLE001 - an unparsable suggestion is no fix
        return "unbuildable"


def _symshape_fix(err: BaseException, given: Any) -> Any:
    fixes = getattr(err, "fixes", None)
    return None if fixes is None else fixes.apply(given)


def _is_violation(exporter: str, err: BaseException) -> bool:
    if exporter == "symshape":
        return isinstance(err, export.ConstraintViolationError)
    return "Constraints violated" in str(err)


@dataclass(frozen=True, slots=True)
class _Run:
    """One full pipeline of one exporter: direct export, then the fix if needed."""

    outcome: str
    message: str
    fix: str
    program: Any
    which: str
    seconds: float
    fix_seconds: float | None
    warnings: int
    claimed: bool | None
    same: bool | None = None
    larger: Any = None


def _pipeline(exporter: str, m: HFModel, variant: str) -> _Run:
    fn = _torch_export if exporter == "torch" else _symshape_export
    call = m.inputs(example_sizes(m, variant))
    given = spec(m, variant)
    first = _attempt(fn, m.build(), call, given)
    if first.error is None:
        return _Run("exported", "", "-", first.program, "direct", first.seconds, None, first.warnings, None)
    err = first.error
    message = f"{type(err).__name__}: {str(err).strip().splitlines()[0][:200]}"
    fixes = getattr(err, "fixes", None)
    claimed = getattr(fixes, "verified", None)
    if not _is_violation(exporter, err):
        return _Run("error", message, "none", None, "-", first.seconds, None, first.warnings, claimed)
    offered, larger = getattr(fixes, "program", None), getattr(fixes, "larger_example_program", None)
    fixed = _torch_fix(err, m, variant) if exporter == "torch" else _symshape_fix(err, given)
    if fixed is None or isinstance(fixed, str):
        fix = "none" if fixed is None else "unbuildable"
        return _Run("violation", message, fix, offered, "offered" if offered is not None else "-", first.seconds,
                    None, _warnings(offered, first.warnings), claimed, None, larger)
    second = _attempt(fn, m.build(), call, fixed)
    ok = second.error is None
    if offered is not None:
        return _Run("violation", message, "reexports" if ok else "fails", offered, "offered", first.seconds,
                    second.seconds, _warnings(offered, first.warnings), claimed,
                    same_program(offered, second.program) if ok else False, larger)
    return _Run("violation", message, "reexports" if ok else "fails", second.program,
                "fixed" if ok else "-", first.seconds, second.seconds,
                second.warnings if ok else first.warnings, claimed, None, larger)


def _warnings(offered: Any, default: int) -> int:
    """An offered program's SymshapeWarnings (its report's: they were not emitted)."""
    return default if offered is None else len(offered.symshape.warnings)


def same_program(a: Any, b: Any) -> bool:
    """Whether two exported programs are the same, in every part the replay oracle compares
    (``tests/support/replay_oracle.py``: range constraints, the graph's code, signature and
    node values, torch's guard code, symshape's ranges, classes, relations, checks, contract,
    warnings and evidence).

    >>> f = lambda x: x + 1
    >>> same_program(export.export(f, (torch.ones(2),)), export.export(f, (torch.ones(2),)))
    True
    """
    return program_key(a) == program_key(b)


# -- running the programs on the grid ------------------------------------------------------------


def _leaves(out: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def _matches(got: Any, want: Any) -> str:
    """``""`` if ``got`` matches ``want`` leaf by leaf, else what differs."""
    a, b = _leaves(got), _leaves(want)
    if len(a) != len(b):
        return f"{len(a)} output tensors, eager gives {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape:
            return f"output {i}: shape {tuple(x.shape)}, eager {tuple(y.shape)}"
        if not torch.allclose(x.float(), y.float(), rtol=RTOL, atol=ATOL, equal_nan=True):
            return f"output {i}: max diff {(x.float() - y.float()).abs().max().item():.3g}"
    return ""


def _eager(model: Any, call: Call) -> tuple[Any, str]:
    try:
        with torch.no_grad():
            return model(*call[0], **call[1]), ""
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {str(e).strip()[:120]}"


def classify(run: Callable[..., Any] | None, model: Any, call: Call, sizes: dict[str, int]) -> SizeRun:
    """Run ``run`` (a program's ``module()``, or ``None`` for no program) at ``call`` and
    judge it against eager ``model``.

    >>> model, call = torch.nn.Identity(), ((torch.ones(2),), {})
    >>> [classify(r, model, call, {"n": 2}).kind for r in (model, lambda x: x + 1, None)]
    ['ok', 'wrong', 'refused']
    """
    key = tuple(sizes.items())
    want, eager_err = _eager(model, call)
    if run is None:
        return SizeRun(key, "both_fail" if eager_err else "refused", "no program")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            got = run(*call[0], **call[1])
    except Exception as e:  # noqa: BLE001
        text = str(e).strip()
        why = f"{type(e).__name__}: {text.splitlines()[0][:160] if text else ''}"
        return SizeRun(key, "both_fail" if eager_err else "refused", why)
    if eager_err:
        return SizeRun(key, "wrong", f"runs although eager fails ({eager_err})")
    diff = _matches(got, want)
    return SizeRun(key, "wrong" if diff else "ok", diff)


def _grid_runs(program: Any, m: HFModel, points: list[dict[str, int]]) -> tuple[SizeRun, ...]:
    model = m.build()
    run = None if program is None else program.module()
    return tuple(classify(run, model, m.inputs(p), p) for p in points)


# -- the comparison -----------------------------------------------------------------------------


def compare(m: HFModel, variant: str, *, repeat: int = 1, limit: dict[str, tuple[int, ...]] | None = None,
            exporters: tuple[str, ...] = EXPORTERS) -> Comparison:
    """Export ``m`` with ``variant`` through ``exporters`` ``repeat`` times (interleaved, the
    order alternating), then run the last programs on the grid (``limit`` narrows it). An
    exporter left out gets ``None`` in the result.
    """
    runs: dict[str, list[_Run]] = {e: [] for e in exporters}
    for r in range(repeat):
        for exporter in (exporters if r % 2 == 0 else exporters[::-1]):
            runs[exporter].append(_pipeline(exporter, m, variant))
    points = grid(m, limit)
    outcomes: dict[str, Outcome] = {}
    for exporter, rs in runs.items():
        last = rs[-1]
        fix_seconds = tuple(r.fix_seconds for r in rs if r.fix_seconds is not None)
        same = None if all(r.same is None for r in rs) else all(r.same is not False for r in rs)
        larger = _grid_runs(last.larger, m, points) if last.larger is not None else ()
        outcomes[exporter] = Outcome(exporter, last.outcome, last.message, last.fix, last.which,
                                     tuple(r.seconds for r in rs), fix_seconds, last.warnings,
                                     _grid_runs(last.program, m, points), last.claimed, same, larger)
    return Comparison(m.name, variant, outcomes.get("torch"), outcomes.get("symshape"))
