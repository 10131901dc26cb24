"""Z3 on the facts near a question: the large-problem path of :mod:`solver.decide.pipeline`.

On a large problem Z3 sees only the residual facts reached breadth-first from the question's
classes (:func:`near`, at most ``limit``, nearest first) and the class data of every class
they mention. Fewer facts are weaker premises, so only an unsat answer is conclusive
(:func:`decide`); anything else is UNKNOWN.

The encoding is rebuilt for every question from cached pieces: each fact over the class
leaders is kept by fact index (memo table ``encoded``, emptied when the class structure
changes or a scope ends), each class's data by its value (table ``class_text``). A linear
fact and a class's data are SMT-LIB text (Z3 parses a question's text in one call, far
cheaper than building its terms through the Python API); any other fact is a Z3 term. A
question then costs about its Z3 check.

>>> import sympy
>>> from solver.absorb import assume
>>> from solver.state.known import State
>>> st = State(); x, y, z = (st.declare(n, 0, 100) for n in "xyz")
>>> assume(st, sympy.Le(x + y, z)); assume(st, sympy.Ge(x, 40))
>>> near(st, sympy.Ge(x, 1), 10)
([x, y, z], [3])
>>> decide(st, sympy.Ge(z, 40), 10, None), decide(st, sympy.Ge(z, 41), 10, None)
(<Truth.TRUE: 'true'>, None)
"""

from __future__ import annotations

import sympy
import z3

from solver.state.known import State
from solver.truth import Truth
from solver.kernel.union_find import ClassData

__all__ = ["near", "encoding", "decide"]


def near(st: State, rel: sympy.Basic, limit: int) -> tuple[list[sympy.Symbol], list[int]]:
    """The residual facts (indices) reached breadth-first from ``rel``'s classes, at most
    ``limit`` and nearest first, and the class leaders they and ``rel`` mention."""
    table = st.memo.fact_leaders
    leaders = list(_leaders(st, rel))
    known, taken = set(leaders), set()
    ids: list[int] = []
    for leader in leaders:  # grows while it is walked
        for i in st.class_facts(leader):
            if i in taken or len(ids) >= limit:
                continue
            taken.add(i)
            ids.append(i)
            mentioned = table.get(i)
            if mentioned is None:
                mentioned = table[i] = _leaders(st, st.facts[i].rel)
            for r in mentioned:
                if r not in known:
                    known.add(r)
                    leaders.append(r)
        if len(ids) >= limit:
            break
    return leaders, ids


def _leaders(st: State, rel: sympy.Basic) -> tuple[sympy.Symbol, ...]:
    """The class leaders of ``rel``'s symbols, each once, symbols in declaration order."""
    find = st.uf.find
    return tuple(dict.fromkeys(find(x)[0] for x in sorted(rel.free_symbols, key=st.order)))


def encoding(st: State, leaders: list[sympy.Symbol], ids: list[int]) -> tuple[list[z3.ExprRef], str]:
    """The facts ``ids`` over the class leaders and the class data of ``leaders``, from the
    caches (see the module docstring): Z3 terms, and SMT-LIB text (declarations first) for
    the linear facts and the class data, which Z3 parses in one call."""
    z, table, classes = st.smt, st.memo.encoded, st.memo.class_text
    terms: list[z3.ExprRef] = []
    lines = [f"(declare-const {_name(r)} Int)" for r in leaders if _quotable(r)]
    for i in ids:
        piece = table.get(i)
        if piece is None:
            piece = table[i] = _fact_text(st, i)
            if piece is None:
                piece = table[i] = z.translate(st.to_roots(st.facts[i].rel))
        (lines.append if isinstance(piece, str) else terms.append)(piece)
    for r in leaders:
        data = st.uf.data(r)
        key = (r, data)
        text = classes.get(key)
        if text is None:
            text = classes[key] = _class_text(r, data) if _quotable(r) else ""
        if text:
            lines.append(text)
        elif not _quotable(r):
            terms.append(z.class_term(r, *data.range, data.cong, sorted(data.excluded)))
    return terms, "".join(lines)


def _quotable(sym: sympy.Symbol) -> bool:
    """Whether the name is an SMT-LIB quoted symbol (``|name|``: no ``|`` or backslash)."""
    return "|" not in sym.name and "\\" not in sym.name


def _name(sym: sympy.Symbol) -> str:
    return f"|{sym.name}|"


def _num(k: int) -> str:
    return str(k) if k >= 0 else f"(- {-k})"


def _fact_text(st: State, i: int) -> str | None:
    """``(assert ...)`` for fact ``i`` when it is linear over the class leaders (its form
    memoized by index, shared with :mod:`solver.decide.narrowing`), else None."""
    forms = st.memo.leader_linear
    form = forms.get(i, False)
    if form is False:
        form = forms[i] = st.linear(st.facts[i].rel)
    if form is None:
        return None
    if isinstance(form, bool):
        return "(assert true)" if form else "(assert false)"
    op, coeffs, const = form
    if not all(_quotable(r) for r in coeffs):
        return None
    terms = " ".join(_name(r) if a == 1 else f"(* {_num(a)} {_name(r)})" for r, a in coeffs.items())
    atom = f"(>= (+ {terms} {_num(const)}) 0)" if op == ">=" else f"(= (+ {terms} {_num(const)}) 0)"
    return f"(assert {atom if op != '!=' else f'(not {atom})'})"


def _class_text(r: sympy.Symbol, data: ClassData) -> str:
    """``(assert ...)`` of what the class data says of leader ``r`` (range, congruence,
    holes), the statement of :meth:`solver.kernel.smt.Smt.class_term`; empty when it says nothing."""
    v = _name(r)
    lo, hi = data.range
    m, res = data.cong
    parts = [f"(not (= {v} {_num(x)}))" for x in sorted(data.excluded)]
    parts += [] if isinstance(lo, float) else [f"(>= {v} {_num(int(lo))})"]
    parts += [] if isinstance(hi, float) else [f"(<= {v} {_num(int(hi))})"]
    parts += [] if m == 1 else [f"(= (mod (- {v} {_num(res)}) {m}) 0)"]
    return f"(assert (and {' '.join(parts)} true))" if parts else ""


def decide(st: State, rel: sympy.Basic, limit: int, at_hint: bool | None) -> Truth | None:
    """TRUE when the facts near ``rel`` refute its negation, FALSE when they refute ``rel``,
    else None. ``at_hint`` is ``rel`` at a point satisfying every fact (None: none known):
    the opposite answer is then impossible and its check is skipped."""
    z = st.smt
    leaders, ids = near(st, rel, limit)
    facts, text = encoding(st, leaders, ids)
    term = z.translate(st.to_roots(rel))
    if at_hint is not False and z.check_local(facts, z.negation(term), text) == "unsat":
        return Truth.TRUE
    if at_hint is not True and z.check_local(facts, term, text) == "unsat":
        return Truth.FALSE
    return None
