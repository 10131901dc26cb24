"""The trace builder (``tests/support/trace_builder.py``) against real exports, and its own parts.

The oracle (slow: it traces): a real ``torch.export`` trace is recorded once (every hook the
routing ShapeEnv calls on the bridge, each question with the site the real reader saw), then
replayed through a :class:`TraceBuilder` (the same torch symbols, ranges, specializations and
questions, each asked from a synthetic frame of the recorded site). The replayed trace must give
what the real one gives: the same 0/1 evidence (dims, decisions, kinds), the same ``>= 2``
policy and final ranges, the same blocking violations. The rest is fast: no torch.export.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import sympy
import torch
from torch.export import Dim

import export.tracing.bridge as bridge_module
from export import _torch_compat as tc
from export.api import traced
from export.diagnose.violations import blocking_violations
from export.program.zero_one import zero_one
from export.tracing.bridge import SolverBridge
from export.tracing.sites import Site, asking_site, resolve
from export.tracing.assumptions import Assumption, is_assumption
from export.tracing.trace import Trace
from deploy_models import TinyEncoder  # README.md's (examples/demo.py's) model
from trace_builder import (TORCH_ROOT, Frame, TraceBuilder, recorded_op_site, torch_site, torch_function_site,
                           user_site)

_TORCH = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


# -- the oracle: record a real trace, replay it ------------------------------------------------

def _recording(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Record every hook the routing calls on any SolverBridge. ``on_question`` is wrapped by a
    function whose code is named inside the ``export`` package (symshape's machinery to the
    site reader), so the real trace reads the same sites as unrecorded; the site is read the
    same way for the record."""
    log: list[tuple[Any, ...]] = []
    original = SolverBridge.on_question
    src = ("def on_question(self, expr, hint, api):\n"
           "    raw, via = asking_site(sys._getframe(1), {})\n"
           "    log.append(('q', expr, hint, api, None if raw is None else resolve(raw), via))\n"
           "    return original(self, expr, hint, api)\n")
    ns: dict[str, Any] = {"asking_site": asking_site, "resolve": resolve, "sys": sys, "log": log, "original": original}
    exec(compile(src, os.path.join(os.path.dirname(bridge_module.__file__), "_recording.py"), "exec"), ns)
    monkeypatch.setattr(SolverBridge, "on_question", ns["on_question"])
    for name, tag in (("on_symbol", "sym"), ("on_range_update", "rng"), ("on_specialize", "spec")):
        hook = getattr(SolverBridge, name)

        def recorded(self: SolverBridge, *args: Any, _hook: Any = hook, _tag: str = tag) -> Any:
            log.append((_tag, *args))
            return _hook(self, *args)

        monkeypatch.setattr(SolverBridge, name, recorded)
    return log


def _frames(site: Site) -> list[Frame]:
    """The synthetic frames that make the site reader see ``site`` again."""
    path = site.file.replace(os.sep, "/")
    if site.file.startswith(_TORCH):
        rel = "torch/" + path[len(_TORCH):]
        if site.detail.startswith("recorded op "):
            return list(recorded_op_site(site.detail[len("recorded op "):]))
        assert not site.detail, f"no replay for the detail {site.detail!r}"
        return [torch_site(rel, site.function, site.code, site.line)]
    assert not site.detail, f"no replay for the detail {site.detail!r}"
    return [user_site(site.code, site.line, site.function, os.path.basename(path))]


def _replay(f: Any, args: tuple[Any, ...], dynamic_shapes: Any, log: list[tuple[Any, ...]],
            symbols: tuple[sympy.Symbol, ...]) -> Trace:
    b = TraceBuilder(f, args, dynamic_shapes, symbols=False)
    for event in log:
        kind, rest = event[0], event[1:]
        if kind == "sym":
            b.bridge.on_symbol(*rest)
        elif kind == "rng":
            b.bridge.on_range_update(*rest)
        elif kind == "spec":
            b.bridge.on_specialize(*rest)
        else:
            expr, hint, api, site, via = rest
            assert site is not None
            b.ask(expr, hint, api=api, site=_frames(site), via_check=via)
    return b.bridge.trace(symbols)


def _summary(trace: Trace) -> dict[str, Any]:
    """What the builder must reproduce: the 0/1 evidence, the policy, the ranges, the violations."""
    z = zero_one(trace)
    assert z.policy is not None
    return {
        "evidence": sorted((e.dim, e.rel, e.kind) for e in z.evidence),
        "needed": {str(k): sorted(trace.text(r) for r in v) for k, v in z.policy.needed.items()},
        "ranges": {str(d): z.policy.final.bounds(s) for d, s in trace.dim_syms.items()},
        "blocking": sorted(trace.text(f.rel) for f in blocking_violations(trace)),
        "hard": sorted(trace.text(r) for r in trace.hard),
        "neutral": sorted(trace.text(r) for r in trace.neutral),
    }


def _reshape(x: torch.Tensor) -> torch.Tensor:
    b, s = x.shape
    return x.reshape(b, s // 4, 4)


def _branch(x: torch.Tensor) -> torch.Tensor:
    return x * 2 if x.shape[0] == 1 else x + 1


def _tiny(spec: str) -> tuple[Any, tuple[Any, ...], Any]:
    args = (torch.randn(2, 32, 16), torch.ones(2, 32))
    if spec == "fixed":
        batch, seq = Dim("batch"), Dim("_seq", min=1, max=32)
        return TinyEncoder(), args, {"tokens": {0: batch, 1: 4 * seq}, "mask": {0: batch, 1: 4 * seq}}
    return TinyEncoder(), args, {"tokens": {0: Dim("batch"), 1: Dim("seq")},
                                 "mask": {0: Dim("mask_batch"), 1: Dim("mask_seq")}}


ORACLE = {
    "reshape Dim.AUTO": lambda: (_reshape, (torch.randn(3, 8),), {"x": {0: Dim.AUTO, 1: Dim.AUTO}}),
    "reshape named Dims": lambda: (_reshape, (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}}),
    "branch on == 1": lambda: (_branch, (torch.randn(4, 3),), {"x": {0: Dim("b")}}),
    "TinyEncoder, the README's spec": lambda: _tiny("failing"),
    "TinyEncoder, 4 * _seq": lambda: _tiny("fixed"),
}


SEEN: dict[str, dict[str, Any]] = {}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(ORACLE))
def test_a_replayed_trace_judges_as_the_real_one(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    f, args, ds = ORACLE[case]()
    log = _recording(monkeypatch)
    ep, real = traced(f, args, dynamic_shapes=ds)
    monkeypatch.undo()
    assert any(e[0] == "q" for e in log)
    built = _replay(f, args, ds, log, tuple(ep.range_constraints))
    want, got = _summary(real), _summary(built)
    assert got == want
    SEEN[case] = want
    assert {str(k): sorted(map(str, v)) for k, v in built.sites.items()}.keys() == \
        {str(k): v for k, v in real.sites.items()}.keys()
    for rel, sites in real.sites.items():  # every site read again: function, line, text
        assert {(s.function, s.line, s.code, s.detail) for s in built.sites[rel]} == \
            {(s.function, s.line, s.code, s.detail) for s in sites}


def test_the_oracle_cases_say_something() -> None:
    """Each oracle case is there for a reason: evidence of both kinds and violations occur (read
    from the builder alone, no trace: what the slow oracle checks the builder against)."""
    b = TraceBuilder("x", (torch.randn(4, 3),), {"x": {0: Dim("b")}})
    b.ask("x.size(0) == 1", site=user_site("return x * 2 if x.shape[0] == 1 else x + 1"))
    assert [e.kind for e in zero_one(b.trace()).evidence] == ["kept"]


# -- the builder's own parts (fast) -------------------------------------------------------------

def test_symbols_sources_and_floors_are_torch_s() -> None:
    b = TraceBuilder("x, n", (torch.randn(3, 1, 5), 6), {"x": {0: Dim("b"), 1: Dim.AUTO, 2: Dim.AUTO}, "n": Dim.AUTO})
    trace = b.trace()
    x0, x2, n = b.sym("x", 0), b.sym("x", 2), b.sym("n")
    assert (x0.name, x2.name, n.name) == ("s0", "s1", "s2") and tc.symbol_kind(x0) == "backed"
    assert x0.is_positive and x0.is_integer
    assert {str(d) for d in trace.dim_syms} >= {"x.size(0)", "x.size(2)", "n"}
    assert trace.sym_map[x0] == trace.dim_syms[next(d for d in trace.dim_syms if str(d) == "x.size(0)")]
    with pytest.raises(KeyError, match="specialized"):
        b.sym("x", 1)  # an example of 1 on Dim.AUTO: torch specializes it
    floors = [f for f in trace.solver.facts if is_assumption(f, Assumption.FLOOR)]
    assert sorted(f.reason.text for f in floors) == ["n >= 2", "x.size(0) >= 2", "x.size(2) >= 2"]
    assert any("became static 1" in note for note in trace.zero_one_notes)


def test_floors_can_be_left_out_and_added() -> None:
    b = TraceBuilder("x", (torch.randn(3, 5),), {"x": {0: Dim("b"), 1: Dim("s")}}, floors=False)
    b.floor("x", 1)
    floors = [f.reason.text for f in b.trace().solver.facts if is_assumption(f, Assumption.FLOOR)]
    assert floors == ["x.size(1) >= 2"]


def test_a_derived_dim_gets_its_phantom_root() -> None:
    seq = Dim("_seq", min=1, max=32)
    b = TraceBuilder("x", (torch.randn(2, 32),), {"x": {1: 4 * seq}})
    root = b.sym("_seq")
    trace = b.trace()
    assert trace.sym_map[root] == trace.root_syms["_seq"]
    assert b.hint(b.question("_seq == 8")) is True and b.hint(b.question("x.size(1) // 4 == 8")) is True


@pytest.mark.parametrize("text, torch_form", [
    ("x.size(1) // 4 == 1", "Eq((s1//4), 1)"),  # torch prints its FloorDiv so
    ("x.shape[0] * x.shape[1] > 4", "s0*s1 > 4"),
    ("x.size(1) % 4 != 0", "Ne(Mod(s1, 4), 0)"),
    ("x.size(0) == 1 or x.size(1) == 1", "Eq(s0, 1) | Eq(s1, 1)"),
    ("not x.numel() < 2", "s0*s1 >= 2"),
    ("Max(x.size(0), x.size(1)) <= 16", "Max(s0, s1) <= 16"),
])
def test_question_text_reads_as_torch_sympy(text: str, torch_form: str) -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}})
    q = b.question(text)
    assert str(q) == torch_form
    assert b.bridge._convert(q) is not None  # the bridge takes it  # noqa: SLF001


def test_a_question_torch_would_not_ask_is_refused() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    with pytest.raises(ValueError, match="folds to False"):
        b.question("x.size(0) == 0")  # sympy folds it: torch's size symbols are positive
    with pytest.raises(ValueError, match="on the example"):
        b.ask("x.size(0) == 3", False)


def test_sites_are_read_as_chosen() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b"), 1: Dim("s")}})
    refs = torch_site("torch/_refs/__init__.py", "_reshape_view_helper_core_alg", "if length == a_.shape[idx]:", 4170)
    b.ask("x.size(0) == 3", site=refs)
    b.ask("x.size(0) == 3", site=user_site("if x.shape[0] == 3:", line=7, function="step"))
    b.ask("x.size(1) > 4", site=user_site("if x.shape[1] > 4:", line=7))  # same line, other text: another file
    trace = b.trace()
    sites = trace.sites[trace.convert(b.question("x.size(0) == 3"))]
    assert {(s.function, s.line, s.code) for s in sites} == {
        ("_reshape_view_helper_core_alg", 4170, "if length == a_.shape[idx]:"), ("step", 7, "if x.shape[0] == 3:")}
    torch_one = next(s for s in sites if s.function != "step")
    assert torch_one.file.startswith(TORCH_ROOT) and "torch/_refs/__init__.py:4170 (" in str(torch_one)
    other = next(iter(trace.sites[trace.convert(b.question("x.size(1) > 4"))]))
    assert other.code == "if x.shape[1] > 4:" and other.file != next(s for s in sites if s.function == "step").file


def test_details_from_the_frames() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    b.ask("x.size(0) >= 3", site=recorded_op_site("aten.reshape.default"))
    b.ask("x.size(0) <= 3", site=torch_function_site(torch._C.TensorBase.contiguous))
    trace = b.trace()
    (op,) = trace.sites[trace.convert(b.question("x.size(0) >= 3"))]
    (fn,) = trace.sites[trace.convert(b.question("x.size(0) <= 3"))]
    assert op.detail == "recorded op aten.reshape.default"
    assert fn.detail == "torch function torch._C.TensorBase.contiguous"


def test_reasons_point_at_the_user_frame_and_checks_are_the_user_s() -> None:
    b = TraceBuilder("x, y", (torch.randn(3, 4), torch.randn(6, 4)), {"x": {0: Dim("a")}, "y": {0: Dim("b")}})
    b.ask("2 * x.size(0) == y.size(0)", api="guard_bool", via_check=True,
          site=user_site("torch._check(2 * x.shape[0] == y.shape[0])", line=3))
    b.ask("x.size(0) <= 8", site=torch_site("torch/_refs/__init__.py", "narrow", "torch._check(", 50),
          user=user_site("y = x[:8]", line=5))
    trace = b.trace()
    reasons = {f.reason.text: f.reason for f in trace.solver.facts if f.reason.kind in ("guard", "spec")}
    assert reasons["x.size(0) <= 8"].origin == "model.py:5" and reasons["x.size(0) <= 8"].kind == "guard"
    check = reasons["y.size(0) == 2*x.size(0)"] if "y.size(0) == 2*x.size(0)" in reasons else \
        next(r for t, r in reasons.items() if "y.size(0)" in t and "x.size(0)" in t)
    assert check.origin == "model.py:3"


def test_a_data_dependent_question_has_no_hint() -> None:
    b = TraceBuilder("x", (torch.randn(3, 8),), {"x": {0: Dim("b")}})
    b.unbacked("u0")
    assert b.hint(b.question("u0 >= 0")) is None
    assert b.ask("u0 >= 2", api="guard_bool") is None  # no hint, facts leave it open: torch decides (raises)
    assert b.ask("u0 >= 0", api="runtime_assert") is True  # torch._check on data: a runtime check
    trace = b.trace()
    assert len(trace.unbacked_syms) == 1


@pytest.mark.slow
def test_the_oracle_compared_something() -> None:
    """The cases between them compare site evidence, kept floors, a relieved policy and blocking
    violations (not empty summaries that would agree trivially)."""
    if len(SEEN) < len(ORACLE):
        pytest.skip("runs after the oracle cases")
    kinds = {k for s in SEEN.values() for (_, _, k) in s["evidence"]}
    assert kinds >= {"site", "kept"}
    assert SEEN["reshape named Dims"]["blocking"] and SEEN["TinyEncoder, the README's spec"]["blocking"]
    assert not SEEN["TinyEncoder, 4 * _seq"]["blocking"] and SEEN["branch on == 1"]["needed"]
    for name, s in SEEN.items():
        print(name, s)
