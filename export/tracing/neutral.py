"""Questions that a size is not 0 or 1, as torch asks them (pure sympy, no torch).

:meth:`export.tracing.questions.Questions.neutral` lets the bridge answer such a question with no fact and no
torch guard when a value-neutral torch place asked it (:mod:`export.tracing.sites`); this module
says which relations are such questions (:func:`zero_one_question`).
"""

from __future__ import annotations

import sympy

__all__ = ["NEUTRAL_APIS", "QUESTION_TYPES", "zero_one_question", "unnormalized"]

NEUTRAL_APIS: dict[str, bool | None] = {"guard_bool": None, "guard_or_false": False, "guard_or_true": True}
"""The queries :meth:`export.tracing.questions.Questions.neutral` may answer, with torch's fallback answer (None: none)."""


QUESTION_TYPES = (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge, sympy.And, sympy.Or)


def zero_one_question(rel: sympy.Basic, answer: bool) -> bool:
    """Whether ``rel`` answered ``answer`` says that a size ``e`` (not a constant) is not 0
    or 1: it then reads ``e != 0``, ``e != 1``, ``e > 1`` or ``e >= 2`` (``e == 1`` answered
    False, ``1 < e`` answered True, ``e < 2`` answered False, ...), or is an ``And``/``Or``
    of such questions.

    >>> e = sympy.floor(sympy.Symbol("n", integer=True) / 4)
    >>> zero_one_question(sympy.Eq(e, 1), False), zero_one_question(sympy.Eq(e, 2), False)
    (True, False)
    >>> zero_one_question(sympy.Ne(e, 1), False), zero_one_question(sympy.And(sympy.Eq(e, 1), sympy.Eq(e + 1, 1)), False)
    (False, True)
    >>> zero_one_question(sympy.Lt(1, e), True), zero_one_question(sympy.Lt(e, 2), False), zero_one_question(sympy.Lt(e, 3), False)
    (True, True, False)

    ``b * e == b`` (``b`` a product of sizes, never 0 in a program: sizes stay >= 1) reads
    ``e == 1``:

    >>> b = sympy.Symbol("b", integer=True)
    >>> zero_one_question(sympy.Eq(b * e, b), False), zero_one_question(sympy.Eq(b * e, b + 1), False)
    (True, False)
    """
    if isinstance(rel, (sympy.And, sympy.Or)):  # torch's sym_and / sym_or of such questions
        return all(zero_one_question(arg, answer) for arg in rel.args)
    if not isinstance(rel, (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)):
        return False
    said = rel if answer else _negated(rel)
    if isinstance(said, sympy.Ne) and _ratio_is_one(said.lhs, said.rhs):
        return True
    for e, c, flip in ((said.lhs, said.rhs, False), (said.rhs, said.lhs, True)):
        if not (c.is_Integer and e.free_symbols):
            continue
        kind = type(said)
        if flip:  # c op e: read it as e op' c
            kind = {sympy.Lt: sympy.Gt, sympy.Le: sympy.Ge, sympy.Gt: sympy.Lt, sympy.Ge: sympy.Le}.get(kind, kind)
        return (kind is sympy.Ne and int(c) in (0, 1)) or (kind is sympy.Gt and int(c) == 1) or \
            (kind is sympy.Ge and int(c) == 2)
    return False


def _ratio_is_one(lhs: sympy.Basic, rhs: sympy.Basic) -> bool:
    """Whether ``lhs == rhs`` reads ``e == 1`` once a common factor made of sizes (symbols,
    never 0 in a program) is cancelled: ``b * e == b``."""
    if not (lhs.free_symbols and rhs.free_symbols):
        return False
    for big, small in ((lhs, rhs), (rhs, lhs)):
        if not all(f.is_Symbol for f in sympy.Mul.make_args(small)):
            continue
        rest = big / small  # sympy cancels the common factors: no negative power left means small divides big
        if rest.free_symbols and not any(f.is_Pow and f.exp.is_negative for f in sympy.Mul.make_args(rest)):
            return True
    return False


def unnormalized(rel: sympy.Basic) -> sympy.Basic:
    """The solver's normal form ``e + k op 0`` read back as ``e op -k`` (``Ne(b - 1, 0)`` is
    ``b != 1``), so that :func:`zero_one_question` sees which constant ``e`` is compared with.

    >>> b = sympy.Symbol("b", integer=True)
    >>> unnormalized(sympy.Ne(b - 1, 0)), unnormalized(sympy.Ge(b - 2, 0))
    (Ne(b, 1), b >= 2)
    """
    if not isinstance(rel, (sympy.Eq, sympy.Ne, sympy.Ge)) or rel.rhs != 0:
        return rel
    const, rest = rel.lhs.as_coeff_Add()
    return type(rel)(rest, -const, evaluate=False)


def _negated(rel: sympy.Basic) -> sympy.Basic:
    """The relation that holds when ``rel`` does not, of the same operands."""
    other = {sympy.Eq: sympy.Ne, sympy.Ne: sympy.Eq, sympy.Lt: sympy.Ge, sympy.Ge: sympy.Lt,
             sympy.Le: sympy.Gt, sympy.Gt: sympy.Le}[type(rel)]
    return other(rel.lhs, rel.rhs, evaluate=False)
