"""Reading and writing a finished export: its ShapeEnv, ranges, run-time size checks,
recorded guards, and where torch's symbols and dynamo's frames come from."""

from __future__ import annotations

import linecache
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sympy
import torch
from torch._guards import TracingContext
from torch.fx.experimental.symbolic_shapes import ShapeEnv, ShapeGuardPythonPrinter, free_unbacked_symbols

from export._torch_compat.symbols import value_range
from shapes.expr import FloorDiv

__all__ = [
    "shape_env_of", "set_range_constraints", "add_asserts", "dynamo_stack",
    "symbol_origin_frames", "unbacked_symbols_with_stacks", "recorded_guards", "sym_expr",
    "decider_of", "reword_asserts", "static_input_sizes", "user_input_values", "data_dependent_asserts", "drop_guards",
]


def shape_env_of(program: Any) -> ShapeEnv | None:
    """The ShapeEnv behind an ExportedProgram or GraphModule, found via its SymInts.

    Returns None when the graph carries no symbolic values (a fully static export).
    """
    graph = program.graph
    for node in graph.nodes:
        val = node.meta.get("val")
        vals = val if isinstance(val, (list, tuple)) else [val]
        for v in vals:
            syms: list[Any] = []
            if isinstance(v, torch.Tensor):
                syms = [*v.shape, *v.stride(), v.storage_offset()]
            elif isinstance(v, (torch.SymInt, torch.SymBool, torch.SymFloat)):
                syms = [v]
            for s in syms:
                env = getattr(getattr(s, "node", None), "shape_env", None)
                if env is not None:
                    return env
    return None


def set_range_constraints(
    program: torch.export.ExportedProgram,
    ranges: Mapping[sympy.Symbol, tuple[int | None, int | None]],
) -> None:
    """Replace ``program.range_constraints`` (whose public setter raises).

    ``ranges`` maps torch symbols to ``(lo, hi)`` (None = unbounded). These are what
    ``program.module()`` checks inputs against at call time.
    """
    program._range_constraints = {s: value_range(lo, hi) for s, (lo, hi) in ranges.items()}


_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    sympy.Eq: operator.eq, sympy.Ne: operator.ne, sympy.Lt: operator.lt, sympy.Le: operator.le,
    sympy.Gt: operator.gt, sympy.Ge: operator.ge,
}


class _Emitter:
    """Writes an integer expression or relation (sympy over solver symbols, with
    :class:`shapes.FloorDiv`) as fx nodes over the input sizes, each node with its value on
    the program's fake inputs (``meta["val"]``). ``dry`` computes only the value."""

    def __init__(self, graph: torch.fx.Graph, sources: Mapping[sympy.Symbol, tuple[torch.fx.Node, int | None]]) -> None:
        self.graph = graph
        self.sources = sources
        self.sizes: dict[sympy.Symbol, torch.fx.Node] = {}
        self.anchor: torch.fx.Node | None = None

    def value(self, e: sympy.Basic) -> Any:
        """``e``'s value on the fake inputs (a SymInt/SymBool, or a Python int/bool)."""
        return self._walk(e, dry=True)[1]

    def emit(self, e: sympy.Basic) -> Any:
        """Nodes computing ``e`` after :attr:`anchor`; the last node (or a Python constant)."""
        return self._walk(e, dry=False)[0]

    def _node(self, target: Any, args: tuple[Any, ...], val: Any) -> torch.fx.Node:
        assert self.anchor is not None
        with self.graph.inserting_after(self.anchor):
            node = self.graph.call_function(target, args)
        node.meta["val"] = val
        self.anchor = node
        return node

    def _size(self, sym: sympy.Symbol, dry: bool) -> tuple[Any, Any]:
        ph, dim = self.sources[sym]
        fake: Any = ph.meta.get("val")
        val = fake if dim is None else fake.shape[dim]
        if dry:
            return None, val
        if dim is None:
            return ph, val
        if sym not in self.sizes:
            self.sizes[sym] = self._node(torch.ops.aten.sym_size.int, (ph, dim), val)
        return self.sizes[sym], val

    def _apply(self, fn: Callable[..., Any], target: Any, parts: list[tuple[Any, Any]], dry: bool) -> tuple[Any, Any]:
        (node, val), rest = parts[0], parts[1:]
        for other_node, other_val in rest:
            val = fn(val, other_val)
            if not dry:
                both_const = not isinstance(node, torch.fx.Node) and not isinstance(other_node, torch.fx.Node)
                node = val if both_const else self._node(target, (node, other_node), val)
        return node, val

    def _walk(self, e: sympy.Basic, dry: bool) -> tuple[Any, Any]:  # noqa: C901 - one dispatch
        if e.is_Integer:
            return int(e), int(e)
        if e is sympy.true or e is sympy.false:
            return bool(e), bool(e)
        if e.is_Symbol:
            return self._size(e, dry)
        parts = [self._walk(a, dry) for a in e.args]
        if isinstance(e, sympy.Add):
            return self._apply(operator.add, operator.add, parts, dry)
        if isinstance(e, sympy.Mul):
            return self._apply(operator.mul, operator.mul, parts, dry)
        if isinstance(e, sympy.Pow) and e.args[1].is_Integer and int(e.args[1]) > 0:
            return self._apply(operator.mul, operator.mul, [parts[0]] * int(e.args[1]), dry)
        if isinstance(e, FloorDiv):
            return self._apply(operator.floordiv, operator.floordiv, parts, dry)
        if isinstance(e, sympy.Mod):
            return self._apply(operator.mod, operator.mod, parts, dry)
        if isinstance(e, sympy.Min):
            return self._apply(torch.sym_min, torch.sym_min, parts, dry)
        if isinstance(e, sympy.Max):
            return self._apply(torch.sym_max, torch.sym_max, parts, dry)
        if type(e) in _COMPARE:
            fn = _COMPARE[type(e)]
            return self._apply(fn, fn, parts, dry)
        if isinstance(e, sympy.And):
            return self._apply(operator.and_, operator.and_, parts, dry)
        if isinstance(e, sympy.Or):
            return self._apply(operator.or_, operator.or_, parts, dry)
        if isinstance(e, sympy.Not):
            (node, val), = parts
            out = torch.sym_not(val)
            return (out if dry or not isinstance(node, torch.fx.Node) else self._node(torch.sym_not, (node,), out)), out
        raise TypeError(f"cannot write {type(e).__name__} as an fx node")


def add_asserts(program: torch.export.ExportedProgram, asserts: Sequence[tuple[sympy.Basic, str]],
                sources: Mapping[sympy.Symbol, tuple[str, int | None]]) -> int:
    """Insert ``_assert_scalar(relation, message)`` into ``program``'s graph for each of
    ``asserts`` (relations over the symbols of ``sources``: ``symbol -> (placeholder name,
    dim)``, ``dim=None`` for an int input's own value), right after the placeholders, so that
    ``ep.module()``, a saved and loaded program, ``run_decompositions()`` and AOTInductor
    (which keeps the asserts of a graph and drops torch's guard function) all check them. A
    relation torch's graph already asserts, one that is constant on the program's symbols
    (two dims torch holds as one symbol) and one that cannot be written are skipped: at run
    time such a check could only repeat torch's, or compare a symbol with itself. Returns the
    number inserted.
    """
    graph = program.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    if not placeholders:
        return 0
    usable = {sym: (placeholders[ph], dim) for sym, (ph, dim) in sources.items() if ph in placeholders
              and _has_size(placeholders[ph], dim)}
    emitter = _Emitter(graph, usable)
    emitter.anchor = list(placeholders.values())[-1]
    present = {expr for node in graph.nodes if node.target is torch.ops.aten._assert_scalar.default
               and isinstance(node.args[0], torch.fx.Node)
               for expr in [sym_expr(node.args[0].meta.get("val"))] if expr is not None}
    done = 0
    for rel, message in asserts:
        if not rel.free_symbols <= usable.keys() or _divides_by_a_size(rel):
            continue
        try:
            val = emitter.value(rel)
        except (TypeError, ValueError, ZeroDivisionError):
            continue
        expr = sym_expr(val)
        if not isinstance(val, torch.SymBool) or expr is None or expr in present:
            continue
        cond = emitter.emit(rel)
        emitter.anchor = emitter._node(torch.ops.aten._assert_scalar.default, (cond, message), None)
        present.add(expr)
        done += 1
    if done:
        program.graph_module.recompile()
    return done


def _divides_by_a_size(rel: sympy.Basic) -> bool:
    """Whether ``rel`` divides by a non-constant (it would raise ZeroDivisionError in the graph
    at a size 0, before any assert could say why: torch's guards and the contract judge it)."""
    return any(not e.args[1].is_Integer for e in rel.atoms(FloorDiv, sympy.Mod))


def _has_size(ph: torch.fx.Node, dim: int | None) -> bool:
    val = ph.meta.get("val")
    if dim is None:
        return isinstance(val, torch.SymInt)
    return isinstance(val, torch.Tensor) and dim < val.dim() and isinstance(val.shape[dim], torch.SymInt)


_TORCH_ASSERT = "Runtime assertion failed for expression"


def reword_asserts(program: torch.export.ExportedProgram, reword: Callable[[sympy.Basic], str | None]) -> int:
    """Give torch's deferred runtime assertions in ``program``'s graph (``Runtime assertion
    failed for expression s17 <= 2*s77 on node 'le'``, torch's symbols) the message
    ``reword(condition)`` returns for the asserted condition (torch's sympy expression); None
    keeps torch's. Returns the number reworded."""
    graph = program.graph_module.graph
    done = 0
    for node in graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten._assert_scalar.default or len(node.args) < 2:
            continue
        cond, message = node.args[0], node.args[1]
        if not isinstance(message, str) or not message.startswith(_TORCH_ASSERT) or not isinstance(cond, torch.fx.Node):
            continue
        expr = sym_expr(cond.meta.get("val"))
        text = reword(expr) if expr is not None else None
        if text:
            node.args = (cond, text, *node.args[2:])
            done += 1
    if done:
        program.graph_module.recompile()
    return done


def user_input_values(program: torch.export.ExportedProgram) -> list[Any]:
    """The fake values (``meta["val"]``) of the program's user-input placeholders, in call
    order: tensors with symbolic sizes, SymInts or ints."""
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    return [placeholders[s.arg.name].meta.get("val") if s.arg.name in placeholders else None
            for s in program.graph_signature.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]


def data_dependent_asserts(program: torch.export.ExportedProgram) -> list[str]:
    """The messages of the graph's asserts on data-dependent values (unbacked symbols):
    checks only the program itself can make, as it runs."""
    out = []
    for node in program.graph.nodes:
        if node.target is not torch.ops.aten._assert_scalar.default or len(node.args) < 2:
            continue
        expr = sym_expr(node.args[0].meta.get("val")) if isinstance(node.args[0], torch.fx.Node) else None
        if expr is not None and free_unbacked_symbols(expr) and isinstance(node.args[1], str):
            out.append(node.args[1])
    return out


def drop_guards(program: torch.export.ExportedProgram, keep: Callable[[sympy.Basic], bool]) -> int:
    """Drop from the guards ``program.module()`` checks (its ``_guards_fn``, built from
    ``program._guards_code``: torch's recorded guards, printed) those whose expression
    ``keep`` refuses: guards torch recorded for a decision the program does not rely on.
    Returns the number dropped."""
    codes = getattr(program, "_guards_code", None)
    env = shape_env_of(program)
    if not codes or env is None:
        return 0
    printer = ShapeGuardPythonPrinter(env.var_to_sources, lambda s: s.name, env.var_to_sources)
    dropped = set()
    for guard in env.guards:
        if not keep(guard.expr):
            try:
                dropped.add(printer.doprint(guard.expr))
            except Exception:  # noqa: BLE001 - a guard torch itself could not print is not in its code
                continue
    before = len(codes)
    program._guards_code = [c for c in codes if c not in dropped]
    return before - len(program._guards_code)


def static_input_sizes(program: torch.export.ExportedProgram, names: Sequence[str | None]) -> dict[str, int]:
    """``{"x.size(2)": 6}``: the static dims of the program's user inputs (``names`` in the
    order of its user-input placeholders), from the placeholders' fake values."""
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    user = [s.arg.name for s in program.graph_signature.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    out: dict[str, int] = {}
    for name, ph in zip(names, user):
        val = placeholders[ph].meta.get("val") if ph in placeholders else None
        if name is None or not isinstance(val, torch.Tensor):
            continue
        for d, n in enumerate(val.shape):
            if isinstance(n, int):
                out[f"{name}.size({d})"] = n
    return out


def dynamo_stack() -> list[tuple[str, int, str, str]]:
    """The user frames dynamo is tracing (strict mode), innermost last: ``(file, line,
    function, code)``. Empty outside a dynamo trace, where the Python stack is the truth."""
    out = []
    for fr in TracingContext.extract_stack():
        line = fr.line if fr.line else ""
        if not line and fr.lineno:
            line = linecache.getline(fr.filename, fr.lineno).strip()
        out.append((fr.filename, fr.lineno or 0, fr.name, line.strip()))
    return out


def symbol_origin_frames(env: Any, sym: sympy.Symbol) -> list[tuple[str, int, str, str]]:
    """Where torch allocated an unbacked symbol (the ``.item()`` call), innermost last:
    ``(file, line, function, code)``; empty when torch did not record it."""
    captured = getattr(env, "var_to_stack", {}).get(sym)
    if captured is None:
        return []
    try:
        summary = captured.summary()
    except Exception:  # noqa: BLE001 - a best-effort location
        return []
    return [(fr.filename, fr.lineno or 0, fr.name, (fr.line or "").strip()) for fr in summary]


def unbacked_symbols_with_stacks(env: Any) -> list[sympy.Symbol]:
    """The symbols whose allocation stack ``env`` recorded (see :func:`symbol_origin_frames`)."""
    return list(getattr(env, "var_to_stack", {}) or {})


def recorded_guards(program: Any) -> list[sympy.Basic]:
    """The guards torch recorded in the ShapeEnv behind ``program`` (they become the
    program's own run-time input checks), as torch sympy expressions."""
    env = shape_env_of(program)
    return [g.expr for g in getattr(env, "guards", ())] if env is not None else []


def sym_expr(value: Any) -> sympy.Basic | None:
    """The symbolic expression behind a SymInt/SymBool (torch's symbols), an int as a
    sympy Integer, else None: how a graph node's ``meta["val"]`` reads as a size."""
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, (torch.SymInt, torch.SymBool)):
        return value.node.expr
    return None


def returns_self(target: Any) -> bool:
    """Whether an op returns its first argument, mutated (``aten.copy_``, ``aten.add_``:
    its schema writes the first argument and returns that alias), so that the node's value
    is that argument's tensor."""
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.arguments or len(schema.returns) != 1:
        return False
    first, ret = schema.arguments[0].alias_info, schema.returns[0].alias_info
    return first is not None and ret is not None and first.is_write and ret.is_write and \
        first.before_set == ret.before_set


def graph_mutates(program: Any) -> bool:
    """Whether ``program``'s graph may write a tensor: a node whose op schema is mutable
    (an in-place or ``out=`` op), a higher-order op (not looked into), or a mutated input or
    buffer in its signature."""
    signature = program.graph_signature
    if signature.buffers_to_mutate or signature.user_inputs_to_mutate:
        return True
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op != "call_function":
                continue
            target = node.target
            if isinstance(target, torch._ops.HigherOrderOperator):
                return True
            schema = getattr(target, "_schema", None)
            if schema is not None and schema.is_mutable:
                return True
    return False


def decider_of(value: Any) -> Any:
    """The decider of the routed ShapeEnv behind a SymInt (None outside a routed trace)."""
    env = getattr(getattr(value, "node", None), "shape_env", None)
    return getattr(env, "decider", None)
