"""Deciding: the stages a question runs through, cheapest first, Z3 last.

:func:`decide` answers from the memo, then a fast path (``symbol op integer`` on a clean
class), then constants, intervals, the union-find's canonical form, the
:mod:`solver.decide.stages` pipeline (with Mod/FloorDiv folded by the congruences as a second try,
and as a third the roots held to a residue class written as a multiple of a fresh integer,
:mod:`solver.decide.reparam`), witnesses next to the example point (one class moved, or several by
a repair walk: on a large problem the walk of :func:`solver.state.point.repair`, at most
:data:`WITNESS_MOVES` moves),
refutation by range narrowing (:mod:`solver.decide.narrowing`), Z3 with its resource limit (on a
large problem, past :data:`FULL_SMT_FACTS` residual facts, Z3 sees only the facts near the
question, see :mod:`solver.decide.local`: then only its unsat answers count, and the rest is UNKNOWN,
never a stall), and exhaustive enumeration of a small bounded component. While the example point satisfies every fact, the answer it
rules out is never tried (refutation and local Z3 check one side only). Every answer is
TRUE, FALSE or UNKNOWN, never a guess.

>>> import sympy
>>> from solver.state.known import State
>>> st = State(); n = st.declare("n", 0, 10)
>>> decide(st, sympy.Ge(n, 0)), decide(st, sympy.Ge(n, 5))
(<Truth.TRUE: 'true'>, <Truth.UNKNOWN: 'unknown'>)
>>> st.stats["union_find"]
2
"""

from __future__ import annotations

from collections.abc import Iterator

import sympy

from shapes.errors import UnsupportedExpressionError
from shapes.relation import BOOL_TYPES, is_relation, negate
from solver.kernel import enumeration
from solver.decide import local, narrowing, reparam, stages
from solver.kernel import normal_form
from solver.kernel.extremes import extreme_parts
from solver.state import point
from solver.decide.stages import Stage
from solver.kernel.normal_form import Question
from solver.state.known import State
from solver.truth import Truth
from solver.decide.witness import Klass, other_point, repaired_point

__all__ = ["decide"]

FULL_SMT_FACTS = 4_000  # residual facts above which Z3 sees only the facts near a question
LOCAL_FACTS = 200  # facts near a question that Z3 sees then
WITNESS_MOVES = 64  # class moves of a repair walk looking for a witness on a large problem

_FAST_OPS = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">", sympy.Le: "<=", sympy.Lt: "<"}
# the stages a rooted normal form runs through, cheapest first, with the label stats credit
_PIPELINE: tuple[tuple[str, Stage], ...] = (
    ("union_find", stages.by_constant), ("interval", stages.by_interval), ("interval", stages.by_horner),
    ("interval", stages.by_exact),
    ("congruence", stages.by_congruence))
# after the congruences folded Mod/FloorDiv away
_FOLDED: tuple[tuple[str, Stage], ...] = (
    ("congruence", stages.by_constant), ("congruence", stages.by_interval), ("congruence", stages.by_congruence))
_SKIPPED = "skipped"  # the label of a cheap decision that stopped before the witness/Z3 stage


def decide(st: State, rel: object, *, cheap: bool = False) -> Truth:
    """TRUE if ``rel`` holds for every assignment satisfying the facts, FALSE if for none,
    else UNKNOWN (also when the budget runs out: never a guess). Credits ``st.stats``.
    ``cheap``: the stages before witnesses and Z3 only (an UNKNOWN so found is not
    remembered: a full decision may still settle it)."""
    if isinstance(rel, sympy.Basic):
        hit = st.memo.answers.get(rel)
        if hit is None:
            hit = st.memo.open.get(rel)
        if hit is not None:
            st.stats["cache"] += 1
            return hit
    truth = _decide_fast(st, rel)
    if truth is None:
        prepared = st.prepare(rel)
        if not is_relation(prepared):
            raise UnsupportedExpressionError(
                f"decide expects a relation (Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not), got the expression {prepared}")
        truth, stage = _decide(st, prepared, cheap)
        st.stats[stage] += 1
        if cheap and truth is Truth.UNKNOWN:
            return truth
    (st.memo.open if truth is Truth.UNKNOWN else st.memo.answers)[rel] = truth
    return truth


def _decide_fast(st: State, rel: object) -> Truth | None:
    """``symbol op integer`` on a class no other fact touches: exact from the class data."""
    op = _FAST_OPS.get(type(rel))
    if op is None:
        return None
    lhs, rhs = rel.args  # type: ignore[attr-defined]
    if not (lhs.is_Symbol and rhs.is_Integer) or lhs not in st.symbols:
        return None
    root, a, b = st.uf.find(lhs)
    data = st.uf.data(root)
    lo, hi = data.range
    v = int(rhs)
    # a*r + b op v  ->  compare r against (v - b)/a on the root's range
    lo_v, hi_v = (a * lo + b, a * hi + b) if a > 0 else (a * hi + b, a * lo + b)
    t: Truth | None
    if op in ("==", "!="):
        if (v - b) % a == 0 and (v - b) // a in data.excluded:
            t = Truth.FALSE
        elif (v - b) % a or not (lo_v <= v <= hi_v) or (((v - b) // a - data.cong[1]) % data.cong[0]):
            t = Truth.FALSE
        elif lo_v == hi_v == v:
            t = Truth.TRUE
        else:
            t = _exact_or_none(st, root, Truth.UNKNOWN)
        if t is not None and op == "!=":
            t = t.negate()
    else:
        d_lo, d_hi = {">=": (lo_v - v, hi_v - v), ">": (lo_v - v - 1, hi_v - v - 1),
                      "<=": (v - hi_v, v - lo_v), "<": (v - hi_v - 1, v - lo_v - 1)}[op]
        t = stages.decide_on_values(">=", d_lo, d_hi)
        if t is None:  # range endpoints are feasible for a clean class: both outcomes occur
            t = _exact_or_none(st, root, Truth.UNKNOWN)
    if t is not None:
        st.stats["union_find"] += 1
    return t


def _exact_or_none(st: State, root: sympy.Symbol, t: Truth) -> Truth | None:
    return t if st.clean(root) else None


def _decide(st: State, rel: sympy.Basic, cheap: bool = False) -> tuple[Truth, str]:
    """The answer to a prepared relation, with the label of the stage that gave it
    (``cheap``: UNKNOWN labelled :data:`_SKIPPED` where the witness/Z3 stage would run)."""
    if rel is sympy.true or rel is sympy.false:
        return Truth.of(rel is sympy.true), "constant"
    if isinstance(rel, BOOL_TYPES):
        t = _decide_bool(st, rel, cheap)
        if t is not None:
            return t, "boolean"
        return (Truth.UNKNOWN, _SKIPPED) if cheap else _decide_smt(st, rel)
    t = stages.by_interval(Question.of(rel), st.view)
    if t is not None:
        return t, "interval"
    if rel.has(sympy.Min, sympy.Max):
        parts = extreme_parts(rel)
        if parts is not None:  # the same condition on the Min/Max arguments (mostly linear)
            if parts is sympy.true or parts is sympy.false:
                return Truth.of(parts is sympy.true), "interval"
            return _decide(st, parts, cheap)
        table = st.memo.minmax
        simpler = table.get(rel)
        if simpler is None:  # ranges only narrow: a simplification stays valid
            simpler = table[rel] = normal_form.simplify_minmax(rel, st.uf.range_of)
        if simpler is not rel and simpler != rel:
            if simpler is sympy.true or simpler is sympy.false:
                return Truth.of(simpler is sympy.true), "interval"
            return _decide(st, simpler, cheap)
    rooted = st.to_roots(rel)
    if rooted is sympy.true or rooted is sympy.false:
        return Truth.of(rooted is sympy.true), "union_find"
    q = st.normal_form(rooted)
    found = _run(st, _PIPELINE, q)
    if found is None:
        folded = normal_form.fold_modular(q.lhs, st.cong_lookup)
        if folded is not q.lhs:
            found = _run(st, _FOLDED, Question(q.op, folded))
    if found is None:
        t = reparam.by_reparametrized(q, st.view)
        found = None if t is None else (t, "congruence")
    if found is not None:
        return found
    return (Truth.UNKNOWN, _SKIPPED) if cheap else _decide_smt(st, rel)


def _run(st: State, pipeline: tuple[tuple[str, Stage], ...], q: Question) -> tuple[Truth, str] | None:
    """The first answer of the stages in order, with its label."""
    for label, stage in pipeline:
        t = stage(q, st.view)
        if t is not None:
            return t, label
    return None


def _decide_bool(st: State, rel: sympy.Basic, cheap: bool = False) -> Truth | None:
    if isinstance(rel, sympy.Not):
        t, _ = _decide(st, rel.args[0], cheap)
        return t.negate()
    parts = [_decide(st, a, cheap)[0] for a in rel.args]
    if isinstance(rel, sympy.And):
        if Truth.FALSE in parts:
            return Truth.FALSE
        return Truth.TRUE if all(p is Truth.TRUE for p in parts) else None
    if Truth.TRUE in parts:
        return Truth.TRUE
    return Truth.FALSE if all(p is Truth.FALSE for p in parts) else None


def _decide_smt(st: State, rel: sympy.Basic) -> tuple[Truth, str]:
    """Witnesses first (two feasible points that disagree), then Z3, then enumeration."""
    z = st.smt  # its Z3 context is built on the first translation: only when Z3 is asked
    at_hint = st.value_at_hints(rel)
    seen = z.witnessed(rel) | ({at_hint} if at_hint is not None else set())
    large = len(st.residual) > FULL_SMT_FACTS
    if len(seen) == 2 or (at_hint is not None and _moved_witness(st, rel, at_hint, large)):
        return Truth.UNKNOWN, "witness"  # two points satisfying every fact disagree on rel
    refuted = narrowing.decide(st, rel, at_hint)
    if refuted is not None:
        return refuted, "refutation"
    if large:
        t = local.decide(st, rel, LOCAL_FACTS, at_hint)
        return (t, "z3") if t is not None else (Truth.UNKNOWN, "undecided")
    term = z.translate(rel)
    neg_first = at_hint is not False  # the hint point is a witness for rel when True
    first = z.check([z.negation(term)] if neg_first else [term])
    if first == "unsat":
        return (Truth.TRUE if neg_first else Truth.FALSE), "z3"
    if first == "sat" and at_hint is not None:
        return Truth.UNKNOWN, "z3"
    second = "unknown"
    if first == "sat":
        second = z.check([term])
        if second == "unsat":
            return Truth.FALSE, "z3"
        if second == "sat":
            return Truth.UNKNOWN, "z3"
    enumerated = _enumerate(st, rel)
    if enumerated is not None:
        return enumerated, "enumeration"
    return Truth.UNKNOWN, "undecided"


def _moved_witness(st: State, rel: sympy.Basic, at_hint: bool, large: bool) -> bool:
    """Whether moving one class of ``rel`` off the example point (see :mod:`solver.decide.witness`)
    gives a feasible point where ``rel`` differs, or else a repair walk does: the one of
    :mod:`solver.decide.witness` on a small problem, :func:`solver.state.point.repair` (which finds the
    same witnesses and more on the large problem, for less) on a large one. Only valid while
    the hints hold."""
    leaders = sorted({st.uf.find(x)[0] for x in rel.free_symbols}, key=st.order)
    classes = [_klass(st, r) for r in leaders[:3]]

    def facts_of(leader: sympy.Symbol) -> Iterator[sympy.Basic]:
        return (st.facts[i].rel for i in st.class_facts(leader))

    if other_point(rel, st.hints, classes, facts_of) is not None:
        return True
    if large:
        return _walked_witness(st, rel, at_hint)
    return repaired_point(rel, st.hints, classes, lambda r: _klass(st, r), facts_of, st.linear) is not None


def _walked_witness(st: State, rel: sympy.Basic, at_hint: bool) -> bool:
    """Whether a repair walk from the example point (:func:`solver.state.point.repair`, at most
    :data:`WITNESS_MOVES` class moves) reaches a point satisfying every fact where ``rel``
    is not ``at_hint``. Only valid while the hints hold."""
    return point.repair(st, rel if not at_hint else negate(rel), WITNESS_MOVES) is not None


def _klass(st: State, leader: sympy.Symbol) -> Klass:
    return Klass(leader, st.class_members(leader), st.uf.data(leader))


def _enumerate(st: State, rel: sympy.Basic) -> Truth | None:
    """Exact answer by enumerating a small bounded component, or None when too large."""
    roots, facts = st.component(rel)
    values = enumeration.component_values(st.uf, roots, st.enum_limit)
    return None if values is None else enumeration.decide_by_enumeration(rel, facts, values)
