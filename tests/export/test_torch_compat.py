"""The routing ShapeEnv sees the decisions of real torch.export calls (strict and not)."""

from __future__ import annotations

import importlib
import inspect
import itertools
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest
import sympy
import torch
from torch._dynamo.exc import UserError  # torch's own export error ("Constraints violated")
from torch.export import Dim

from export import _torch_compat as tc
from export.errors import InconsistentDecisionError, UnsupportedTorchVersionError

ROOT = pathlib.Path(__file__).resolve().parents[2]
STRICT = pytest.mark.parametrize("strict", [False, True], ids=["nonstrict", "strict"])


class LogDecider(tc.BaseDecider):
    """Records every hook call; answers nothing (vanilla torch behaviour)."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_question(self, expr: sympy.Basic, hint: bool | None, api: str) -> tc.Answer:
        self.events.append(("guard", expr, hint, api))
        return None

    def on_static(self, expr: sympy.Basic, known: bool | None = None) -> bool | None:
        self.events.append(("static", expr))
        return None

    def on_specialize(self, source_name: str, value: int) -> None:
        self.events.append(("specialize", source_name, value))

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        self.events.append(("range", symbol, lo, hi))

    def guards(self, api: str | None = None) -> list[tuple[Any, ...]]:
        return [e for e in self.events if e[0] == "guard" and (api is None or e[3] == api)]


class SuppressingDecider(LogDecider):
    def __init__(self) -> None:
        super().__init__()
        self.violations: list[str] = []

    def on_constraint_violation(self, message: str) -> bool:
        self.violations.append(message)
        return True


class OracleDecider(LogDecider):
    """Decides every guard itself: the hint when there is one, else brute force over
    the current ranges of the (few, bounded) unbacked symbols."""

    def __init__(self) -> None:
        super().__init__()
        self.ranges: dict[sympy.Symbol, tuple[int | None, int | None]] = {}
        self.answered = 0

    def on_range_update(self, symbol: sympy.Symbol, lo: int | None, hi: int | None) -> None:
        super().on_range_update(symbol, lo, hi)
        self.ranges[symbol] = (lo, hi)

    def on_question(self, expr: sympy.Basic, hint: bool | None, api: str) -> tc.Answer:
        super().on_question(expr, hint, api)
        answer = hint if hint is not None else self._brute_force(expr)
        self.answered += answer is not None
        return answer

    def _brute_force(self, expr: sympy.Basic) -> bool | None:
        syms = sorted(expr.free_symbols, key=str)
        domains = []
        for s in syms:
            lo, hi = self.ranges.get(s, (None, None))
            if lo is None or hi is None or hi - lo > 50:
                return None
            domains.append(range(lo, hi + 1))
        values = {bool(expr.xreplace(dict(zip(syms, map(sympy.Integer, vals)))))
                  for vals in itertools.product(*domains)}
        return values.pop() if len(values) == 1 else None


class ContraryDecider(LogDecider):
    def on_question(self, expr: sympy.Basic, hint: bool | None, api: str) -> tc.Answer:
        super().on_question(expr, hint, api)
        return None if hint is None else not hint


def export(model: torch.nn.Module, args: tuple[Any, ...], shapes: Any, strict: bool,
           decider: Any) -> tuple[torch.export.ExportedProgram, list[tc.RoutingShapeEnv]]:
    with tc.route_shape_env(decider) as envs:
        ep = torch.export.export(model, args, dynamic_shapes=shapes, strict=strict)
    return ep, envs


# -- models --------------------------------------------------------------------------


class Reshape(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1, 4)


class Branch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 4:
            return x + 1
        return x - 1


class CondOnShape(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.shape[0] > 4, lambda t: t + 1, lambda t: t - 1, (x,))


class Item(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.item()
        torch._check(k >= 2)
        torch._check(k <= 10)
        return x[:k]


def mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def symbols_in(events: list[tuple[Any, ...]]) -> set[str]:
    return {str(s) for e in events for x in e[1:] if isinstance(x, sympy.Basic)
            for s in x.free_symbols}


# -- version gate and installation -----------------------------------------------------


@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "2.13.1a0+git1234", "2.14.0",
                                     "2.14.1+cu130", "2.14.1", "2.14.2rc1", "2.15.0", "2.15.0+cu132",
                                     "2.15.0+cpu", "2.15.1", "2.15.0.dev20260101"])
def test_supported_versions(version: str) -> None:
    assert tc.check_torch_version(version) == tuple(int(p) for p in version.split(".")[:2])


@pytest.mark.parametrize("version", ["2.12.1", "2.16.0", "2.16.0.dev20260601", "2.16.0+cu132",
                                     "3.0.0", "garbage", "1.13.0", "2.1.0", "2.150.0", "20.13.0"])
def test_unsupported_versions_name_the_range(version: str) -> None:
    with pytest.raises(UnsupportedTorchVersionError) as info:
        tc.check_torch_version(version)
    message = str(info.value)
    assert message.startswith(f"torch {version} is not supported"), message
    assert "torch>=2.13,<2.16" in message, message


def test_installed_torch_is_supported_and_has_a_known_profile() -> None:
    tc.check_torch_version(torch.__version__)
    assert tc.TORCH_VERSION in {(2, 13), (2, 14), (2, 15)}


def test_supported_range_matches_the_package_dependency() -> None:
    """The gate and pyproject's ``torch>=...,<...`` dependency name the same range."""
    deps = re.findall(r'^\s*"(torch[^"]*)",?$', (ROOT / "pyproject.toml").read_text(), re.M)
    (lo, hi) = tc.SUPPORTED_TORCH
    assert [d.replace(" ", "") for d in deps] == [f"torch>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1]}"]


def test_ci_runs_the_newest_supported_torch() -> None:
    """The torch release .ci/run installs as the newest (requirements/torch215.txt) is of the
    gate's newest supported minor: raising the gate means pointing CI at that release too."""
    pins = re.findall(r"^torch==(\S+)$", (ROOT / "requirements" / "torch215.txt").read_text(), re.M)
    assert len(pins) == 1, pins
    (_, hi) = tc.SUPPORTED_TORCH
    assert tc.check_torch_version(pins[0]) == (hi[0], hi[1] - 1)


@pytest.mark.parametrize("version", ["2.16.0", "2.12.0"])
def test_importing_the_package_on_unsupported_torch_names_the_range(version: str) -> None:
    """A fresh interpreter: ``import export`` fails with the gate's message, nothing else."""
    code = f"import torch; torch.__version__ = {version!r}; import export"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("export.errors.UnsupportedTorchVersionError: "
                           f"torch {version} is not supported"), proc.stderr
    assert "torch>=2.13,<2.16" in last


def test_install_patches_and_restores_every_site() -> None:
    import importlib

    modules = [importlib.import_module(m) for m in tc.SHAPE_ENV_SITES]
    before = [m.ShapeEnv for m in modules]

    class A(tc.RoutingShapeEnv):
        pass

    class B(tc.RoutingShapeEnv):
        pass

    with tc.install_shape_env_class(A):
        assert all(m.ShapeEnv is A for m in modules)
        with tc.install_shape_env_class(B):
            assert all(m.ShapeEnv is B for m in modules)
        assert all(m.ShapeEnv is A for m in modules)
    assert [m.ShapeEnv for m in modules] == before
    with pytest.raises(RuntimeError), tc.install_shape_env_class(A):
        raise RuntimeError("boom")
    assert [m.ShapeEnv for m in modules] == before


ROUTED_METHODS = ["evaluate_expr", "guard_or_defer_runtime_assert", "_maybe_evaluate_static",
                  "create_symbol", "create_unbacked_symint", "_update_var_to_range",
                  "_set_replacement"]


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    sig = inspect.signature(inspect.unwrap(fn))
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


@pytest.mark.parametrize("name", ROUTED_METHODS)
def test_overrides_match_the_installed_torch_signatures(name: str) -> None:
    """Each routed entry point takes exactly torch's parameters (names, kinds, defaults):
    a torch release that changes one fails here, not deep inside an export."""
    assert _params(getattr(tc.RoutingShapeEnv, name)) == _params(getattr(tc.ShapeEnv, name))


def test_torch_calls_the_routed_entry_points_by_these_names() -> None:
    """The private torch code paths the routing relies on are still there: guards go
    through evaluate_expr, deferred asserts and torch._check through
    guard_or_defer_runtime_assert, static queries through _maybe_evaluate_static
    (whose cache torch clears by name), ranges through _update_var_to_range."""
    src = {name: inspect.getsource(getattr(tc.ShapeEnv, name)) for name in
           ("_inner_evaluate_expr", "guard_or_defer_runtime_assert", "_refine_ranges",
            "constrain_symbol_range", "create_symbol")}
    assert "self._evaluate_expr(" in src["_inner_evaluate_expr"]
    assert "self.evaluate_expr(" in src["guard_or_defer_runtime_assert"]
    assert "self._maybe_evaluate_static.cache_clear()" in src["_refine_ranges"]
    assert "self._update_var_to_range(" in src["constrain_symbol_range"]
    assert "specialize_zero_one" in src["create_symbol"]


@pytest.mark.parametrize("site", tc.SHAPE_ENV_SITES)
def test_each_install_site_builds_its_shape_env_by_the_global_name(site: str) -> None:
    module = importlib.import_module(site)
    assert module.ShapeEnv is tc.ShapeEnv
    assert re.search(r"(?<![\w.])ShapeEnv\(", inspect.getsource(module)), site


def test_install_rejects_non_shape_env() -> None:
    with pytest.raises(TypeError, match="not a subclass"), tc.install_shape_env_class(dict):  # type: ignore[arg-type]
        pass


def test_ranges_and_symbol_kinds() -> None:
    assert tc.range_bounds(tc.value_range(2, None)) == (2, None)
    assert tc.range_bounds(tc.value_range(None, 7)) == (None, 7)
    assert tc.symbol_kind(sympy.Symbol("s3", integer=True)) == "backed"
    assert tc.symbol_kind(sympy.Symbol("u0", integer=True)) == "unbacked"
    assert tc.symbol_kind(sympy.Symbol("zf0")) == "float"


# -- real exports ----------------------------------------------------------------------


@STRICT
def test_mlp_with_dim_batch(strict: bool) -> None:
    model, d = mlp(), LogDecider()
    ep, envs = export(model, (torch.randn(8, 4),), {"input": {0: Dim("batch")}}, strict, d)
    assert envs and all(type(e).__name__ == "RoutedRoutingShapeEnv" for e in envs)
    assert isinstance(tc.shape_env_of(ep), tc.RoutingShapeEnv)
    batch = [e for e in d.events if e[0] == "range" and e[2] == 2 and e[3] is None]
    assert batch, "the batch symbol's initial range [2, oo) (0/1 specialization) is reported"
    assert any(e[0] == "specialize" and e[1].endswith("size()[1]") and e[2] == 4 for e in d.events)
    assert d.guards(), "the decider sees the guards"
    x = torch.randn(5, 4)
    torch.testing.assert_close(ep.module()(x), model(x))


@STRICT
def test_reshape_guard_is_seen_and_torch_error_kept_by_default(strict: bool) -> None:
    d = LogDecider()
    with pytest.raises(UserError, match="Constraints violated"):
        export(Reshape(), (torch.randn(8, 6),), {"x": {0: Dim("b")}}, strict, d)
    mods = [e for e in d.guards("guard_bool") if e[2] is True]
    assert any("Mod(6*s" in str(e[1]) for e in mods), d.guards()


@STRICT
def test_reshape_constraint_violation_can_be_suppressed(strict: bool) -> None:
    d = SuppressingDecider()
    ep, _ = export(Reshape(), (torch.randn(8, 6),), {"x": {0: Dim("b")}}, strict, d)
    assert d.violations and "Constraints violated" in d.violations[0]
    x = torch.randn(6, 6)
    torch.testing.assert_close(ep.module()(x), x.reshape(-1, 4))


@STRICT
def test_reshape_with_derived_dim(strict: bool) -> None:
    d = OracleDecider()
    ep, _ = export(Reshape(), (torch.randn(8, 6),), {"x": {0: 2 * Dim("k")}}, strict, d)
    x = torch.randn(10, 6)
    torch.testing.assert_close(ep.module()(x), x.reshape(-1, 4))


@STRICT
def test_shape_branch(strict: bool) -> None:
    d = LogDecider()
    ep, _ = export(Branch(), (torch.randn(8, 3),), {"x": {0: Dim("b", min=5)}}, strict, d)
    gt = [e for e in d.guards("guard_bool") if isinstance(e[1], sympy.StrictGreaterThan)]
    assert gt and gt[0][2] is True and str(gt[0][1].rhs) == "4"
    x = torch.randn(6, 3)
    torch.testing.assert_close(ep.module()(x), x + 1)


@STRICT
def test_shape_branch_guard_range_refinement_is_reported(strict: bool) -> None:
    d = SuppressingDecider()
    export(Branch(), (torch.randn(8, 3),), {"x": {0: Dim("b")}}, strict, d)
    assert any(e[0] == "range" and e[2] == 5 and e[3] is None for e in d.events)
    assert d.violations, "torch's 'Suggested fixes: b = Dim(min=5)' error was offered"


@STRICT
def test_cond_on_shape_predicate(strict: bool) -> None:
    d = LogDecider()
    ep, _ = export(CondOnShape(), (torch.randn(8, 3),), {"x": {0: Dim("b")}}, strict, d)
    assert symbols_in(d.events), "the cond export's symbols reach the decider"
    for n in (3, 7):
        x = torch.randn(n, 3)
        torch.testing.assert_close(ep.module()(x), x + 1 if n > 4 else x - 1)


@STRICT
def test_item_with_torch_check(strict: bool) -> None:
    d = LogDecider()
    ep, _ = export(Item(), (torch.randn(12, 3), torch.tensor(5)), None, strict, d)
    asserts = [e for e in d.guards("runtime_assert") if e[2] is None]
    assert any(str(e[1]).endswith(">= 2") and str(e[1]).startswith("u") for e in asserts)
    assert any(e[0] == "range" and str(e[1]).startswith("u") and (e[2], e[3]) == (2, 10)
               for e in d.events)
    assert (2, 10) in {tc.range_bounds(vr) for vr in ep.range_constraints.values()}
    x = torch.randn(12, 3)
    torch.testing.assert_close(ep.module()(x, torch.tensor(4)), x[:4])
    with pytest.raises(RuntimeError, match="Runtime assertion failed for expression u0 <= 10"):  # torch's own
        ep.module()(x, torch.tensor(11))


CASES = [
    (mlp, (torch.randn(8, 4),), {"input": {0: Dim("batch")}}),
    (Branch, (torch.randn(8, 3),), {"x": {0: Dim("b", min=5)}}),
    (CondOnShape, (torch.randn(8, 3),), {"x": {0: Dim("b")}}),
    (Item, (torch.randn(12, 3), torch.tensor(5)), None),
]


@STRICT
@pytest.mark.parametrize("case", range(len(CASES)), ids=["mlp", "branch", "cond", "item"])
def test_decided_answers_give_the_same_program(strict: bool, case: int) -> None:
    make, args, shapes = CASES[case]
    vanilla = torch.export.export(make(), args, dynamic_shapes=shapes, strict=strict)
    d = OracleDecider()
    ep, _ = export(make(), args, shapes, strict, d)
    assert d.answered > 0
    assert str(ep.graph_signature) == str(vanilla.graph_signature)
    assert [n.op for n in ep.graph.nodes] == [n.op for n in vanilla.graph.nodes]
    assert ep.range_constraints == vanilla.range_constraints
    torch.testing.assert_close(ep.module()(*args), vanilla.module()(*args))


def test_contrary_decider_is_an_error() -> None:
    with pytest.raises(InconsistentDecisionError, match=r"decider answered True for Eq\(.*False on the example inputs"):
        export(Branch(), (torch.randn(8, 3),), {"x": {0: Dim("b", min=5)}}, False, ContraryDecider())


def test_refused_runtime_assert_fails_torch_check() -> None:
    class Refuse(LogDecider):
        def on_question(self, expr: sympy.Basic, hint: bool | None, api: str) -> tc.Answer:
            super().on_question(expr, hint, api)
            return False if api == "runtime_assert" else None

    with pytest.raises(RuntimeError, match="Expected cond to be True, but got False"):  # torch._check's
        export(Item(), (torch.randn(12, 3), torch.tensor(5)), None, False, Refuse())


class NeutralDecider(LogDecider):
    """Answers every hinted boolean question NEUTRAL: the example's value, no guard."""

    def on_question(self, expr: sympy.Basic, hint: bool | None, api: str) -> tc.Answer:
        super().on_question(expr, hint, api)
        return tc.NEUTRAL if hint is not None and api == "guard_bool" else None


def test_a_neutral_answer_takes_the_example_value_and_records_no_guard() -> None:
    """One call per question (``on_question``): NEUTRAL answers the branch as the example
    does, and torch records no guard, so ``b`` keeps its declared range (a plain decider
    leaves torch to guard ``b > 4`` and narrow it: torch's own constraint violation)."""
    shapes = {"x": {0: Dim("b")}}
    with pytest.raises(UserError, match="Constraints violated"):
        export(Branch(), (torch.randn(8, 3),), shapes, False, LogDecider())
    d = NeutralDecider()
    ep, _ = export(Branch(), (torch.randn(8, 3),), shapes, False, d)
    assert d.guards("guard_bool")
    assert [tc.range_bounds(r) for r in ep.range_constraints.values()] == [(0, None)]  # not narrowed to >= 5


def test_a_neutral_runtime_assert_is_an_error() -> None:
    class NeutralAssert(LogDecider):
        def on_question(self, expr: sympy.Basic, hint: bool | None, api: str) -> tc.Answer:
            super().on_question(expr, hint, api)
            return tc.NEUTRAL if api == "runtime_assert" else None

    with pytest.raises(InconsistentDecisionError, match="decider answered NEUTRAL for the assertion"):
        export(Item(), (torch.randn(12, 3), torch.tensor(5)), None, False, NeutralAssert())


def test_static_queries_reach_the_decider_and_its_answers_are_used() -> None:
    class Static(LogDecider):
        def on_static(self, expr: sympy.Basic, known: bool | None = None) -> bool | None:
            super().on_static(expr, known)
            return False if isinstance(expr, sympy.Eq) else None  # u0 == 2**63-1: no

    d = Static()
    ep, _ = export(Item(), (torch.randn(12, 3), torch.tensor(5)), None, False, d)
    assert any(e[0] == "static" and isinstance(e[1], sympy.Eq) for e in d.events)
    x = torch.randn(12, 3)
    torch.testing.assert_close(ep.module()(x, torch.tensor(3)), x[:3])


def test_no_decider_is_vanilla() -> None:
    ep, envs = export(Branch(), (torch.randn(8, 3),), {"x": {0: Dim("b", min=5)}}, False, None)
    assert envs and envs[0].decider is None
    x = torch.randn(6, 3)
    torch.testing.assert_close(ep.module()(x), x + 1)


def test_shape_env_of_static_export_is_none() -> None:
    ep = torch.export.export(Branch(), (torch.randn(8, 3),))
    assert tc.shape_env_of(ep) is None


def test_set_range_constraints_is_enforced_by_module() -> None:
    ep = torch.export.export(Branch(), (torch.randn(8, 3),), dynamic_shapes={"x": {0: Dim("b", min=5)}})
    (sym,) = ep.range_constraints
    tc.set_range_constraints(ep, {sym: (5, 9)})
    assert tc.range_bounds(ep.range_constraints[sym]) == (5, 9)
    ep.module()(torch.randn(9, 3))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] <= 9"):  # torch's program
        ep.module()(torch.randn(10, 3))


def test_import_fails_on_unsupported_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.setattr(torch, "__version__", "2.12.0")
    monkeypatch.delitem(sys.modules, "export._torch_compat")
    with pytest.raises(UnsupportedTorchVersionError):
        importlib.import_module("export._torch_compat")


class JudgingDecider(SuppressingDecider):
    """Judges every constraint itself (as symshape's bridge does)."""

    def judges_constraints(self) -> bool:
        return True


@pytest.mark.parametrize("decider, solves", [(LogDecider, True), (JudgingDecider, False)])
def test_torch_constraint_solving_is_skipped_only_for_a_judging_decider(
        decider: type[LogDecider], solves: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A routed non-strict export whose decider judges the constraints skips torch's guard
    production and DimConstraints solve (a violation then reaches nobody: the decider
    judges it); the site is torch's original again after the ``with``."""
    from torch.fx.experimental import symbolic_shapes

    site = importlib.import_module("torch.export._trace")
    original = site.produce_guards_and_solve_constraints
    solved: list[bool] = []
    plain_solve = symbolic_shapes.DimConstraints.solve

    def spy(self: Any) -> Any:
        solved.append(True)
        return plain_solve(self)

    monkeypatch.setattr(symbolic_shapes.DimConstraints, "solve", spy)
    d = decider()
    ep, _ = export(Branch(), (torch.randn(8, 3),), {"x": {0: Dim("b", min=5)}}, False, d)
    assert bool(solved) is solves
    assert site.produce_guards_and_solve_constraints is original
    x = torch.randn(6, 3)
    torch.testing.assert_close(ep.module()(x), Branch()(x))
    if not solves:  # a violation is the decider's to judge: torch raises none
        export(Reshape(), (torch.randn(8, 6),), {"x": {0: Dim("b")}}, False, d)
        assert not d.violations and not solved
        # input dims tied together: torch 2.13 unifies them while producing guards, so that step runs
        ep, _ = export(Reshape(), (torch.randn(8, 6),), {"x": {0: 2 * Dim("k")}}, False, d)
        assert solved
        x = torch.randn(10, 6)
        torch.testing.assert_close(ep.module()(x), x.reshape(-1, 4))


class NumelBound(torch.nn.Module):
    """torch 2.14's DimConstraints cannot word the bound ``b <= 32768/3`` when two inputs share
    ``b``: its own export fails with an AssertionError ("Expected op to be '=='")."""

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if x.numel() * 3 > 2 ** 20:
            x = x * 2
        return x + t.sum()


def test_torch_failing_to_word_its_fix_is_no_model_error() -> None:
    """With equal dims torch's guard step runs; its fix-wording step's own failure is not the
    model's: symshape's violation and verified fix come through (before: "could not trace")."""
    import export as symshape
    from export.errors import ConstraintViolationError

    b = Dim("b")
    args = (torch.randn(2, 8, 4), torch.randn(2))
    with pytest.raises(ConstraintViolationError) as info:
        symshape.export(NumelBound(), args, dynamic_shapes={"x": {0: b}, "t": {0: b}})
    assert "x.size(0) must be <= 10922" in str(info.value)
    program = info.value.fixes.program
    assert program is not None and program.symshape.ranges["x.size(0)"] == (1, 10922)
