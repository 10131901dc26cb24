"""The engine's derived answers in one place, with one invalidation rule.

Every table names the parts of the solver's state its entries were derived from; the state
is read from a *clock* of three counters that only ever grow:

* ``forgets``: facts or class data were removed (a scope ended, a trial was undone);
* ``learns``: a fact was added;
* ``links``: the class structure changed (a link, or the undo of one).

**The rule**: a table whose counters moved since it was filled is emptied before it is read.
Nothing else clears anything. Which counters a table reads follows from what its entries
claim: TRUE/FALSE answers, normal forms and Min/Max simplifications stay valid as facts are
added (ranges only narrow), so they read ``forgets`` only; UNKNOWN answers may be settled by
any new fact (``forgets``, ``learns``); root forms, and the Z3 terms of facts over the
class leaders (Z3 terms or SMT-LIB text) and their linear forms there (keyed by fact index: an index names another
fact only after a scope ended), name the current class leaders (``forgets``, ``links``); the residual facts naming a
class change with any of the three. What depends on its key alone (a relation's linear form
over its own symbols, an expression with given symbols substituted) reads no state: it lives in
:class:`Pure`, which a solver shares with its replicas and never empties.

>>> clock = [0, 0, 0]
>>> memo = Memo(lambda: tuple(clock))
>>> memo.answers["q"] = "TRUE"; memo.open["r"] = "UNKNOWN"
>>> clock[1] += 1                       # a fact was learned
>>> dict(memo.answers), dict(memo.open)
({'q': 'TRUE'}, {})
>>> clock[0] += 1                       # a scope ended
>>> dict(memo.answers)
{}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shapes.relation import RELATION_TYPES

__all__ = ["Memo", "Pure", "Clock", "FORGETS", "LEARNS", "LINKS"]

Clock = tuple[int, int, int]  # (forgets, learns, links)
FORGETS, LEARNS, LINKS = 0, 1, 2

_READS: dict[str, tuple[int, ...]] = {
    "answers": (FORGETS,),  # relation -> TRUE/FALSE
    "open": (FORGETS, LEARNS),  # relation -> UNKNOWN
    "normal": (FORGETS,),  # rooted relation -> normal-form question
    "minmax": (FORGETS,),  # relation -> relation with dominated Min/Max arguments dropped
    "rooted": (FORGETS, LINKS),  # expression -> the same over class leaders
    "encoded": (FORGETS, LINKS),  # fact index -> the Z3 term of the fact over class leaders
    "leader_linear": (FORGETS, LINKS),  # fact index -> its linear form over class leaders
    "class_facts": (FORGETS, LEARNS, LINKS),  # leader -> indices of the residual facts naming its class
    "fact_leaders": (FORGETS, LINKS),  # fact index -> the class leaders it mentions, in declaration order
    "class_text": (FORGETS, LINKS),  # (leader, class data) -> SMT-LIB text of the data (a function of the key)
    "class_members": (FORGETS, LINKS),  # leader -> its class's (member, coef, offset), member == coef*leader + offset
    "bounds": (FORGETS, LEARNS, LINKS),  # expression -> its sound (lo, hi) over the facts (any change may narrow it)
}


class Memo:
    """Named memo tables over a clock (see the module docstring)."""

    __slots__ = ("_clock", "_tables", "_stamps")

    def __init__(self, clock: Callable[[], Clock]) -> None:
        self._clock = clock
        self._tables: dict[str, dict[Any, Any]] = {name: {} for name in _READS}
        self._stamps: dict[str, tuple[int, ...]] = {name: self._stamp(name, clock()) for name in _READS}

    @staticmethod
    def _stamp(name: str, now: Clock) -> tuple[int, ...]:
        return tuple(now[i] for i in _READS[name])

    def table(self, name: str) -> dict[Any, Any]:
        """The table ``name``, emptied first if a counter it reads has moved."""
        stamp = self._stamp(name, self._clock())
        if stamp != self._stamps[name]:
            self._tables[name].clear()
            self._stamps[name] = stamp
        return self._tables[name]

    @property
    def answers(self) -> dict[Any, Any]:
        return self.table("answers")

    @property
    def open(self) -> dict[Any, Any]:
        return self.table("open")

    @property
    def normal(self) -> dict[Any, Any]:
        return self.table("normal")

    @property
    def minmax(self) -> dict[Any, Any]:
        return self.table("minmax")

    @property
    def rooted(self) -> dict[Any, Any]:
        return self.table("rooted")

    @property
    def bounds(self) -> dict[Any, Any]:
        return self.table("bounds")

    @property
    def encoded(self) -> dict[Any, Any]:
        return self.table("encoded")

    @property
    def leader_linear(self) -> dict[Any, Any]:
        return self.table("leader_linear")

    @property
    def class_text(self) -> dict[Any, Any]:
        return self.table("class_text")

    @property
    def class_facts(self) -> dict[Any, Any]:
        return self.table("class_facts")

    @property
    def class_members(self) -> dict[Any, Any]:
        return self.table("class_members")

    @property
    def fact_leaders(self) -> dict[Any, Any]:
        return self.table("fact_leaders")


class Pure:
    """Tables of functions of their key alone, so never emptied, and shared by a solver and
    the replicas it makes (:meth:`solver.Solver.replica`): a failing export's diagnosis asks
    its replicas the trace's relations again, and rebuilding ``Max(1, n - 5)`` over another
    symbol costs sympy about a millisecond each time (its Min/Max evaluation compares every
    pair of arguments).

    * ``linear``: relation -> its linear form over its own symbols (or None);
    * ``substituted``: (expression, frozenset of (symbol, replacement)) -> the expression with
      those symbols replaced.

    >>> import sympy
    >>> pure = Pure()
    >>> n, m = sympy.symbols("n m", integer=True)
    >>> e = sympy.Max(1, n - 5)
    >>> pure.substitute(e, {n: 2 * m}) is pure.substitute(e, {n: 2 * m})
    True
    >>> pure.substitute(e, {n: 2 * m})
    Max(1, 2*m - 5)
    """

    __slots__ = ("linear", "substituted")

    def __init__(self) -> None:
        self.linear: dict[Any, Any] = {}
        self.substituted: dict[Any, Any] = {}

    def substitute(self, e: Any, subs: dict[Any, Any]) -> Any:
        """``e`` with ``subs`` replaced (a relation rebuilt unevaluated: sympy's relational
        evaluation is slow), memoized."""
        key = (e, frozenset(subs.items()))
        hit = self.substituted.get(key)
        if hit is None:
            if isinstance(e, RELATION_TYPES):
                hit = type(e)(e.lhs.xreplace(subs), e.rhs.xreplace(subs), evaluate=False)
            else:
                hit = e.xreplace(subs)
            self.substituted[key] = hit
        return hit
