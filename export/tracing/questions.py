"""Which question torch asked where, and what 0/1 evidence it leaves: the bridge's bookkeeping.

:class:`export.tracing.bridge.SolverBridge` decides torch's questions; a :class:`Questions`
records, while it does, what the program steps read afterwards from the
:class:`export.tracing.trace.Trace`:

* the **hard** questions (asked by an ``if``, ``int()``, ``torch._check``; not torch's 0/1-safe
  queries), the **sites** that asked each (:mod:`export.tracing.sites`), their answers, and
  which a user's ``torch._check`` asked;
* the questions that a size is not 0 or 1 answered **neutral** (the example's value, no fact,
  no guard: :meth:`Questions.neutral`), with the value-neutral torch places that asked them;
* the questions asked by a **layout-only branch** (an ``if`` whose arms only rebind tensors
  to their ``.contiguous()``: :meth:`Questions.layout_branch`), answered by the example with
  no fact, whatever they compare;
* the 0/1 notes: a ``Dim.AUTO`` that became static 0/1, and the user **branches** comparing a
  dim with 0, 1 or 2 (:class:`export.tracing.trace.BranchNote`, worded as warnings by
  :mod:`export.program.branches` when the dim keeps the ``>= 2`` floor).

The site of a question is walked at most once, and only when needed, through an
:class:`Asking` that lives as long as the question (no frame is kept past it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import FrameType

import sympy

from export import _torch_compat as tc
from export.tracing.layout_branch import LAYOUT_PREFIX, LayoutBranch
from export.tracing.neutral import NEUTRAL_APIS, QUESTION_TYPES, unnormalized, zero_one_question
from export.tracing.provenance import is_user_file, user_frame
from export.tracing.sites import RawSite, Site, any_answer, asking_site, justification, resolve
from export.tracing.trace import BranchNote, frozen_map
from shapes.spec import InputDim, Spec
from solver import Solver, Truth

__all__ = ["Asking", "Questions"]


def _two_sided(rel: sympy.Basic) -> bool:
    """A comparison between two non-constant sides (``a*b == a``, ``a < a*b``: the solver's
    form may read it as a 0/1 question, ``b == 1``, ``b > 1``).

    >>> a, b = sympy.symbols("a b", integer=True)
    >>> _two_sided(sympy.Eq(a * b, a)), _two_sided(sympy.Lt(a, a * b)), _two_sided(sympy.Eq(a, 1))
    (True, True, False)
    """
    return isinstance(rel, QUESTION_TYPES) and not isinstance(rel, (sympy.And, sympy.Or)) and \
        bool(rel.lhs.free_symbols) and bool(rel.rhs.free_symbols)


class Asking:
    """Where one question was asked: the frame that called the decider, walked once, on
    first need (:func:`export.tracing.sites.asking_site`), then dropped. The frame holds the
    traced call's stack, fake tensors included; an Asking lives only as long as its
    question, so nothing keeps that stack alive past it (torch's export would fail: "a
    fake tensor in the exported program constant's list").

    >>> import sys
    >>> here = Asking(sys._getframe(), {})
    >>> raw, via_check = here.site()
    >>> raw[2], via_check, here.site() == (raw, via_check)
    ('<module>', False, True)
    """

    __slots__ = ("_frame", "_machinery", "_layouts", "_site")

    def __init__(self, frame: FrameType, machinery: dict[str, bool],
                 layouts: dict[str, Mapping[int, LayoutBranch]] | None = None) -> None:
        self._frame: FrameType | None = frame
        self._machinery = machinery
        self._layouts = layouts
        self._site: tuple[RawSite | None, bool] = (None, False)

    def site(self) -> tuple[RawSite | None, bool]:
        """The asking site (None: none outside the machinery) and whether it came through
        ``torch._check`` / ``expect_true``."""
        if self._frame is not None:
            self._site = asking_site(self._frame, self._machinery, self._layouts)
            self._frame = None
        return self._site


class Questions:
    """The record of which question was asked where (see the module docstring).

    ``solver`` is the trace's; ``dim_syms`` and ``names`` are the bridge's own maps (read
    here as they grow); ``convert`` is the bridge's memoized torch-to-solver conversion;
    ``layout_branches`` turns :meth:`layout_branch` on.

    >>> import sys
    >>> q = Questions(Solver(), Spec("none", (), ()), {}, {}, lambda expr: expr)
    >>> n = sympy.Symbol("n", integer=True)
    >>> raw = q.hard_question(sympy.Ge(n, 2), True, q.asking(sys._getframe()))
    >>> q.hard == {sympy.Ge(n, 2)}, q.answers[sympy.Ge(n, 2)], q.is_user_check(sympy.Ge(n, 2)), q.branch_notes
    (True, True, False, ())
    """

    def __init__(self, solver: Solver, spec: Spec, dim_syms: Mapping[InputDim, sympy.Symbol],
                 names: Mapping[sympy.Symbol, str], convert: Callable[[sympy.Basic], sympy.Basic | None],
                 layout_branches: bool = True) -> None:
        self._solver = solver
        self._spec = spec
        self._dim_syms = dim_syms
        self._names = names
        self._convert = convert
        self._machinery: dict[str, bool] = {}  # file name -> torch's symbolic machinery or symshape (asking_site)
        # file name -> its layout-only branches; None: the rule is off
        self._layouts: dict[str, Mapping[int, LayoutBranch]] | None = {} if layout_branches else None
        self._layout_sites: dict[sympy.Basic, set[tuple[Site, bool]]] = {}  # question -> (branch, answer)
        self._hard: set[sympy.Basic] = set()  # questions asked by hard guards (if/int()/_check)
        self._sites: dict[sympy.Basic, set[RawSite]] = {}  # hard question -> the sites that asked it
        self._answers: dict[sympy.Basic, bool] = {}  # hard question -> its answer
        self._user_checks: set[sympy.Basic] = set()  # questions a user's torch._check asked
        self._neutral: dict[sympy.Basic, set[Site]] = {}  # 0/1 question -> neutral sites (no fact)
        self._neutral_memo: dict[tuple[sympy.Basic, bool, RawSite, bool], bool] = {}
        self._candidates: dict[tuple[sympy.Basic, bool], sympy.Basic | None] = {}  # (expr, hint) -> 0/1 question
        self._plain_memo: tuple[int, frozenset[sympy.Basic]] = (-1, frozenset())  # (dims seen, _plain_dims())
        self._zero_one_seen: set[tuple[sympy.Basic, RawSite | None]] = set()
        self._zero_one_notes: list[str] = []
        self._branch_notes: list[BranchNote] = []

    def asking(self, frame: FrameType) -> Asking:
        """The :class:`Asking` of a question whose decider was called from ``frame``."""
        return Asking(frame, self._machinery, self._layouts)

    # -- what the trace hands over -------------------------------------------------------------
    @property
    def hard(self) -> frozenset[sympy.Basic]:
        return frozenset(self._hard)

    @property
    def sites(self) -> Mapping[sympy.Basic, frozenset[Site]]:
        return frozen_map({rel: frozenset(resolve(r) for r in raw) for rel, raw in self._sites.items()})

    @property
    def answers(self) -> Mapping[sympy.Basic, bool]:
        return frozen_map(self._answers)

    @property
    def neutral_sites(self) -> Mapping[sympy.Basic, frozenset[Site]]:
        return frozen_map({rel: frozenset(sites) for rel, sites in self._neutral.items()})

    @property
    def layout_branches(self) -> Mapping[sympy.Basic, frozenset[tuple[Site, bool]]]:
        return frozen_map({rel: frozenset(sites) for rel, sites in self._layout_sites.items()})

    @property
    def zero_one_notes(self) -> tuple[str, ...]:
        return tuple(self._zero_one_notes)

    @property
    def branch_notes(self) -> tuple[BranchNote, ...]:
        return tuple(self._branch_notes)

    def is_user_check(self, rel: sympy.Basic) -> bool:
        """Whether a user's ``torch._check`` asked ``rel`` (torch's check path, whatever the spelling)."""
        return rel in self._user_checks

    # -- hard questions --------------------------------------------------------------------------
    def hard_question(self, rel: sympy.Basic, answer: bool, asking: Asking) -> RawSite | None:
        """Record the hard question ``rel``: the site that asked it (a short frame walk),
        its answer, and whether a user's ``torch._check`` asked it. The site, or None."""
        self._hard.add(rel)
        raw, via_check = asking.site()
        if raw is not None:
            self._sites.setdefault(rel, set()).add(raw)
            if via_check and is_user_file(raw[0]):
                self._user_checks.add(rel)
        self._answers[rel] = bool(answer)
        return raw

    # -- neutral questions -----------------------------------------------------------------------
    def neutral(self, expr: sympy.Basic, hint: bool, api: tc.Api, asking: Asking) -> bool:
        """Whether a question that a size is not 0 or 1 (:func:`zero_one_question`), which
        the facts leave open, is answered by its example value with no fact and no torch
        guard (recorded here, for the trace's ``neutral``): only when the place that asked
        it is in the table of value-neutral torch places (:mod:`export.tracing.sites`:
        either answer computes the same values there) and, for a 0/1-safe query, the answer
        is torch's own fallback. Anything else is decided as a guard. A question on plain
        dims that the facts (with the ``>= 2`` floor) decide takes the usual path
        (:mod:`export.program.zero_one` judges it); this drops the ``!= 1`` a trace would
        otherwise put on a derived or intermediate size (``x.size(1) // 4``), and torch's
        guard for what the floor of a derived dim's root decides."""
        if api not in NEUTRAL_APIS:
            return False
        fallback = NEUTRAL_APIS[api]
        against = fallback is not None and hint is not fallback
        rel = self._candidate(expr, hint)
        if rel is None:
            return False
        raw, _ = asking.site()
        if raw is None:
            return False
        key = (rel, hint, raw, against)
        if key not in self._neutral_memo:
            self._neutral_memo[key] = self._is_neutral(rel, hint, raw, against)
        if not self._neutral_memo[key]:
            return False
        self._neutral.setdefault(rel, set()).add(resolve(raw))
        return True

    def layout_branch(self, expr: sympy.Basic, hint: bool, api: tc.Api, asking: Asking) -> bool:
        """Whether an ``if`` asked ``expr`` whose arms only rebind tensors to their
        ``.contiguous()`` (:mod:`export.tracing.layout_branch`): either answer computes the
        same values, so the example answers it with no fact and no guard, whatever it
        compares (recorded for the trace's ``layout_branches``; a copying one stands only if
        the program mutates no tensor, see ``Exporter.trace``)."""
        if api != tc.Api.GUARD_BOOL:
            return False
        raw, _ = asking.site()
        if raw is None or not raw[3].startswith(LAYOUT_PREFIX):
            return False
        rel = self._convert(expr)
        if rel is None:
            return False
        self._layout_sites.setdefault(rel, set()).add((resolve(raw), bool(hint)))
        return True

    def _candidate(self, expr: sympy.Basic, hint: bool) -> sympy.Basic | None:
        """The solver relation of ``expr`` when, answered ``hint``, it may be a 0/1
        question (:func:`zero_one_question`, or an equality the solver may read as one);
        None otherwise. Memoized: a trace asks the same expressions thousands of times."""
        key = (expr, hint)
        if key in self._candidates:
            return self._candidates[key]
        rel = self._convert(expr)
        if rel is not None and not (isinstance(rel, QUESTION_TYPES)
                                    and (zero_one_question(rel, hint) or _two_sided(rel))):
            rel = None
        self._candidates[key] = rel
        return rel

    def _is_neutral(self, rel: sympy.Basic, hint: bool, raw: RawSite, against: bool) -> bool:
        """The test of :meth:`neutral` for one question asked at one place (``against``: a
        0/1-safe query answered against its fallback)."""
        site = resolve(raw)
        if justification(site) is None:
            return False  # (the table first: a lookup, where the solver decides)
        whatever = any_answer(site)
        if against and not whatever:
            return False  # a 0/1-safe query answered against its fallback: a decision the trace relies on
        if rel.free_symbols <= self._plain_dims() and self._solver.decide(rel, cheap=True) is not Truth.UNKNOWN:
            return False  # decided on plain dims (torch knows their floor: no guard); export.program.zero_one judges it
        if whatever:
            return True  # neutral whatever it asks (a stride comparison)
        # the solver's form too: a*b == a is b == 1 when a >= 1
        return zero_one_question(rel, hint) or zero_one_question(unnormalized(self._solver.simplify(rel)), hint)

    def _plain_dims(self) -> frozenset[sympy.Basic]:
        """The symbols of input dims declared as a plain dim (not derived, ``4 * _n``): torch
        keeps their ``>= 2`` floor in its own ranges, so it records no guard for what the
        floor decides; for a derived dim the floor sits on the root, where torch's static
        evaluation of the derived size does not see it."""
        known = self._plain_memo
        if known[0] == len(self._dim_syms):  # dims are only ever added
            return known[1]
        out: set[sympy.Basic] = set()
        for d, sym in self._dim_syms.items():
            decl = self._spec.decl(d)
            if decl is None or decl.expr is None or isinstance(decl.expr, sympy.Symbol):
                out.add(sym)
        self._plain_memo = (len(self._dim_syms), frozenset(out))
        return self._plain_memo[1]

    # -- 0/1 notes ---------------------------------------------------------------------------------
    def specialized(self, d: InputDim, value: int) -> None:
        """torch specialized the input dim ``d`` to its example size ``value``: a note when
        the spec left it to torch (``Dim.AUTO``) and the size is 0 or 1."""
        decl = self._spec.decl(d)
        if decl is not None and decl.mode == "auto" and int(value) in (0, 1):
            self._zero_one_notes.append(
                f"{d} (Dim.AUTO) became static {value}: its example size is {value}, and torch never "
                f"keeps sizes 0 and 1 dynamic; use an example of size >= 2 to keep it dynamic.")

    def branch(self, rel: sympy.Basic, answer: bool, raw: RawSite | None) -> None:
        """A user branch comparing a dim with 0, 1 or 2 (the user's own line asked it, not a
        library under it), possibly decided only by torch's >= 2 assumption: a
        :class:`BranchNote`, worded as a warning only if the spec alone lets the dim be
        smaller than 2 and the dim keeps the floor (:mod:`export.program.branches`)."""
        key = (rel, raw)
        if key in self._zero_one_seen:
            return
        self._zero_one_seen.add(key)
        dynamo = bool(tc.dynamo_stack())
        if raw is None or not (dynamo or is_user_file(raw[0])):
            return
        if not isinstance(rel, (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)):
            return
        sym, const = rel.lhs, rel.rhs
        if not (sym in self._names and const.is_Integer and int(const) in (0, 1, 2)):
            return
        frame = user_frame()
        self._branch_notes.append(BranchNote(question=rel, answer=bool(answer), origin=frame.origin if frame else "",
                                             code=frame.code if frame else ""))
