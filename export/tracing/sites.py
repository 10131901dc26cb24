"""Where a decision was asked, and one ordered list of rules for whether its answer can change values at size 1.

The bridge records, for every hard decision, the **site** that asked it: the innermost
frame outside torch's symbolic machinery (``torch/fx/experimental``, ``torch/utils/_sympy``,
``torch/__init__.py``'s ``sym_*``/``_check`` helpers) and outside symshape. A site is a
:class:`Site`: file, line, function, the stripped source text of the line, and a detail read
from the frame (the recorded op, the torch function, a condition that held, a layout-only
branch).

A site is judged by :func:`judge`: the first of :data:`RULES` that matches it, each a
:class:`Rule` with its justification and the test that is its oracle, tried in this order:

1. ``site`` -- a line of torch whose decision only chooses metadata (``NEUTRAL_SITES``);
2. ``stride order`` -- a line of torch value-neutral whatever it answers (``STRIDE_ORDER_SITES``);
3. ``recorded op`` -- asked inside the fake kernel of an aten op already recorded as one graph
   node, for ops whose output shape has no size-1 case (``NEUTRAL_OPS``);
4. ``torch function`` -- asked by a torch function's C++ code whose every outcome yields the same
   values (``NEUTRAL_FUNCTIONS``: ``contiguous()``);
5. ``conditional site`` -- a library line whose decision cannot change what it computes given
   its frame's state when asked (``CONDITIONAL_SITES``: transformers' sdpa integration);
6. ``contiguous line`` -- any line whose only call is ``.contiguous()`` on a plain name
   (:data:`CONTIGUOUS_LINE`): Python reports the line of the call in progress;
7. ``layout-only branch`` -- the test of an ``if`` whose arms only rebind contiguous tensors to
   their ``.contiguous()`` (:mod:`export.tracing.layout_branch`), read from the source.

The tables of rules 1-5 are keyed by torch's (or transformers') source and live in
:mod:`export._torch_compat.neutral`, each entry with the fingerprint of the function it sits in
as read in each supported release: an entry whose function changed in the installed release is
disabled and covers nothing (``tc.zero_one_entries()`` lists them). Rules 6 and 7 read the
user's or any library's source, not a table. Unknown means not covered: a decision is covered
(:func:`covered`) only if EVERY site that asked it is judged neutral.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import FrameType

from export import _torch_compat as tc
from export.tracing.layout_branch import LAYOUT_WHY, LayoutBranch, layout_branches, layout_detail, layout_now, \
    same_graph

__all__ = ["Site", "Rule", "Verdict", "RULES", "judge", "NEUTRAL_SITES", "NEUTRAL_OPS", "NEUTRAL_FUNCTIONS",
           "CONDITIONAL_SITES", "CONTIGUOUS_LINE", "STRIDE_ORDER_SITES", "any_answer", "Conditional", "RawSite",
           "asking_site", "resolve", "covered", "justification"]

NEUTRAL_SITES = tc.NEUTRAL_SITES
STRIDE_ORDER_SITES = tc.STRIDE_ORDER_SITES
NEUTRAL_OPS = tc.NEUTRAL_OPS
NEUTRAL_FUNCTIONS = tc.NEUTRAL_FUNCTIONS
CONDITIONAL_SITES = tc.CONDITIONAL_SITES
Conditional = tc.Conditional

RawSite = tuple[str, int, str, str]
"""``(filename, lineno, function, detail)`` of a frame: what the bridge keeps while
tracing. ``detail`` is ``"recorded op aten.x.y"`` for a decision inside a recorded op's
fake kernel, the condition text of a ``CONDITIONAL_SITES`` entry that held, or ``""``."""


@dataclass(frozen=True, slots=True)
class Site:
    """One place that asked a decision: ``file`` (as Python names it), ``line``,
    ``function`` and ``code`` (the stripped source line)."""

    file: str
    line: int
    function: str
    code: str
    detail: str = ""

    def __str__(self) -> str:
        short = self.file.replace(os.sep, "/").split("site-packages/")[-1]
        more = f" [{self.detail}]" if self.detail else ""
        return f"{short}:{self.line} ({self.function}): {self.code}{more}"


@dataclass(frozen=True, slots=True)
class Rule:
    """One way a site is value-neutral at size 1: its ``name``, ``match`` (the site's
    justification, or None when the rule does not apply), the rule's ``justification`` in one
    line, its ``oracle`` (``tests/...py::test_name``: the test that shows the rule right on real
    exports, size 1 run against eager), and ``any_answer``: value-neutral whatever the site
    answers, even a 0/1-safe query answered against its fallback.

    >>> RULES[0].name, RULES[0].match(Site("model.py", 3, "forward", "if shape[idx] != 1:")) is None
    ('site', True)
    """

    name: str
    match: Callable[[Site], str | None]
    justification: str
    oracle: str
    any_answer: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`judge` found: the ``rule`` that matched and ``why``, the site's justification."""

    rule: Rule
    why: str


CONTIGUOUS_LINE = re.compile(r"^(return\s+|[A-Za-z_]\w*\s*=\s*)?([A-Za-z_]\w*)?\.contiguous\(\)$")
"""A source line whose only call is ``.contiguous()`` on a plain name (or continuing a call
chain from the lines above): a decision asked there is contiguous()'s own."""
_CONTIGUOUS_WHY = ("contiguous() returns its input or a contiguous copy of it: the same values whichever the "
                   "contiguity check answers (a size-1 dim's stride is skipped), and the graph's clone, if any, "
                   "copies values at every size; the line calls nothing else")


def _contiguous_line(site: Site) -> str | None:
    return _CONTIGUOUS_WHY if not site.detail and CONTIGUOUS_LINE.match(site.code) else None


def _layout_only(site: Site) -> str | None:
    return LAYOUT_WHY if same_graph(site.detail) else None


_SITES_TEST = "tests/export/tracing/test_sites.py::"
_OP_SITES_TEST = "tests/export/tracing/test_op_sites.py::"

RULES: tuple[Rule, ...] = (
    Rule("site", tc.site_why,
         "a torch line whose decision only chooses metadata (strides, view grouping, broadcast bookkeeping, "
         "memory format); the graph records the op, whose kernel handles size 1 as eager does",
         _SITES_TEST + "test_entry_is_hit_by_a_real_export"),
    Rule("stride order", tc.stride_order_why,
         "a torch line ordering strides: every caller only picks strides, so either answer is right",
         _SITES_TEST + "test_a_downsampled_size_1_runs_like_eager_where_stride_order_was_asked", any_answer=True),
    Rule("recorded op", tc.op_why,
         "asked inside the fake kernel of an op proxy_call already recorded as one node, whose output shape "
         "has no size-1 case: the node runs the real kernel at run time",
         _OP_SITES_TEST + "test_entry_is_hit_by_a_real_export"),
    Rule("torch function", tc.function_why,
         "asked by a torch function's C++ code whose every outcome yields the same values",
         _OP_SITES_TEST + "test_size_1_runs_like_eager_where_the_tables_cover_it"),
    Rule("conditional site", tc.conditional_why,
         "a library line whose decision cannot change what it computes given its frame's state, read at "
         "every asking", _OP_SITES_TEST + "test_without_a_mask_the_causal_decision_matters_and_size_1_is_refused"),
    Rule("contiguous line", _contiguous_line, _CONTIGUOUS_WHY,
         _OP_SITES_TEST + "test_a_user_contiguous_line_is_covered_and_size_1_runs_like_eager"),
    Rule("layout-only branch", _layout_only, LAYOUT_WHY,
         "tests/export/tracing/test_layout_branch.py::test_no_constraint_and_right_on_both_sides", any_answer=True),
)
"""Every 0/1 rule, in the order :func:`judge` tries them."""


def judge(site: Site) -> Verdict | None:
    """The first rule of :data:`RULES` that matches ``site``, with its justification; None when
    none does (the decision at ``site`` is then judged conservatively).

    >>> judge(Site("/x/site-packages/torch/_prims/__init__.py", 1483, "_collapse_view_helper",
    ...            "if shape[idx] != 1:")).rule.name
    'site'
    >>> judge(Site("model.py", 3, "forward", "return x.contiguous()")).rule.name
    'contiguous line'
    >>> judge(Site("model.py", 3, "forward", "if x.shape[0] == 1:")) is None
    True
    """
    for rule in RULES:
        why = rule.match(site)
        if why is not None:
            return Verdict(rule, why)
    return None


_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""The export package's folder: its frames are machinery, never the asking site."""
_MACHINERY = tuple(p.replace("/", os.sep) for p in tc.SYMBOLIC_MACHINERY)


def _is_machinery(filename: str) -> bool:
    return filename.startswith(_HERE) or any(p in filename for p in _MACHINERY)


def asking_site(frame: FrameType | None = None, machinery: dict[str, bool] | None = None,
                layouts: dict[str, Mapping[int, LayoutBranch]] | None = None) -> tuple[RawSite | None, bool]:
    """The innermost frame outside torch's symbolic machinery and symshape (as a
    :data:`RawSite`, with its detail), and whether the decision came through
    ``torch._check`` / ``expect_true`` (what torch records for a check, whatever the
    spelling at the call). ``machinery`` memoizes which file names are machinery (a
    trace walks the same few files thousands of times), ``layouts`` each file's
    layout-only branches (:func:`export.tracing.layout_branch.layout_branches`; None: that
    rule is off).

    >>> asking_site()[0][2:]
    ('<module>', '')
    """
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    known = machinery if machinery is not None else {}
    via_check = False
    checks = tc.CHECK_FUNCTIONS
    while f is not None:
        code = f.f_code
        inside = known.get(code.co_filename)
        if inside is None:
            inside = known[code.co_filename] = _is_machinery(code.co_filename)
        if not inside:
            return (code.co_filename, f.f_lineno, code.co_name, _detail(f, layouts)), via_check
        via_check = via_check or code.co_name in checks
        f = f.f_back
    return None, via_check


def _detail(f: FrameType, layouts: dict[str, Mapping[int, LayoutBranch]] | None = None) -> str:
    """The names of a layout-only branch (:mod:`export.tracing.layout_branch`), or the recorded
    op (a decision inside the fake kernel of an op ``proxy_call`` has recorded), or the torch
    function, or the text of a conditional entry's condition that holds now, or ``""``."""
    if layouts is not None:
        layout = _layout(f, layouts)
        if layout:
            return layout
    return tc.frame_detail(f)


def _layout(f: FrameType, layouts: dict[str, Mapping[int, LayoutBranch]]) -> str:
    """:func:`export.tracing.layout_branch.layout_detail` when ``f`` is at the test of a
    layout-only ``if`` whose names are tensors now, else ``""``. Only a line that starts
    an ``if`` followed by a ``.contiguous()`` line is looked at further (its file parsed once)."""
    filename, lineno = f.f_code.co_filename, f.f_lineno
    line = linecache.getline(filename, lineno).lstrip()
    if not line.startswith(("if ", "elif ", "if(")) or ".contiguous()" not in linecache.getline(filename, lineno + 1):
        return ""
    branches = layouts.get(filename)
    if branches is None:
        branches = layouts[filename] = layout_branches("".join(linecache.getlines(filename)))
    branch = branches.get(lineno)
    contiguous = layout_now(f, branch) if branch is not None else None
    return "" if branch is None or contiguous is None else layout_detail(branch.names, contiguous)


def resolve(raw: RawSite) -> Site:
    """A :data:`RawSite` with its source line read."""
    filename, lineno, function, detail = raw
    return Site(file=filename, line=lineno, function=function, code=linecache.getline(filename, lineno).strip(),
                detail=detail)


def justification(site: Site) -> str | None:
    """Why ``site``'s answer never changes values (its :func:`judge` verdict), or None.

    >>> justification(Site("/x/site-packages/torch/_prims/__init__.py", 1483,
    ...                    "_collapse_view_helper", "if shape[idx] != 1:"))[:28]
    'the stride of a collapsed vi'
    >>> justification(Site("model.py", 3, "forward", "if shape[idx] != 1:")) is None
    True
    >>> justification(Site("/x/torch/_ops.py", 875, "__call__", "return self._op(*args, **kwargs)",
    ...                    "recorded op aten.reshape.default"))[:24]
    "reshape's kernel decides"
    >>> justification(Site("/x/torch/nn/functional.py", 6262, "_in_projection_packed", ".contiguous()"))[:24]
    'contiguous() returns its'
    >>> justification(Site("model.py", 3, "forward", "y = x.view(-1).contiguous()")) is None
    True
    """
    verdict = judge(site)
    return None if verdict is None else verdict.why


def any_answer(site: Site) -> bool:
    """Whether a rule that is value-neutral whatever the site answers matches ``site`` (a
    stride-order line, a layout-only branch).

    >>> any_answer(Site("/x/torch/_prims_common/__init__.py", 484, "__lt__", "guard_or_false("))
    True
    """
    return any(rule.any_answer and rule.match(site) is not None for rule in RULES)


def covered(sites: Iterable[Site]) -> bool:
    """Whether every site is judged neutral (and there is at least one).

    >>> covered([Site("a/torch/_prims/__init__.py", 1, "_collapse_view_helper", "if shape[idx] != 1:")])
    True
    >>> covered([])
    False
    """
    seen = list(sites)
    return bool(seen) and all(judge(s) is not None for s in seen)
