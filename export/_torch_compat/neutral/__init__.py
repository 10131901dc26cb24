"""The source-keyed 0/1 tables, each entry gated by the fingerprint of the function it sits in.

:mod:`export.tracing.sites` judges a site by one ordered list of rules; the rules keyed by
torch's source (a line's text, or an op read from a frame of torch's at a fixed line) and by
transformers' are here, each entry with its justification and the
:class:`~export._torch_compat.neutral.fingerprint.Scope` whose fingerprint must be accepted as
installed (:mod:`~export._torch_compat.neutral.fingerprint`). A disabled entry covers nothing:
its sites are judged as any other. :func:`zero_one_entries` lists every entry with its state on
the running release (``tests/export/test_zero_one_entries.py`` pins the disabled ones per release).

* :mod:`~export._torch_compat.neutral.torch_sites` -- ``NEUTRAL_SITES``, ``STRIDE_ORDER_SITES``,
  ``NEUTRAL_OPS``, ``NEUTRAL_FUNCTIONS``, the frame readers of ops and torch functions;
* :mod:`~export._torch_compat.neutral.library_sites` -- ``CONDITIONAL_SITES`` (transformers).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import FrameType

from export._torch_compat.neutral import library_sites, torch_sites
from export._torch_compat.neutral.entry import Conditional, Entry, SiteLike
from export._torch_compat.neutral.fingerprint import Scope, fingerprint_source, installed_fingerprint
from export._torch_compat.neutral.library_sites import (CONDITIONAL_ENTRIES, CONDITIONAL_FUNCTIONS, CONDITIONAL_SITES,
                                                       conditional_detail, conditional_why)
from export._torch_compat.neutral.torch_sites import (CHECK_FUNCTIONS, FUNCTION_PREFIX, NEUTRAL_FUNCTIONS,
                                                     NEUTRAL_OPS, NEUTRAL_SITES, OP_PREFIX, STRIDE_ORDER_SITES,
                                                     SYMBOLIC_MACHINERY, entry_problem, release_of,
                                                     function_detail, function_why, op_detail, op_why, site_why,
                                                     stride_order_why)

__all__ = ["ZeroOneEntry", "zero_one_entries", "Entry", "Conditional", "Scope", "SiteLike", "entry_problem",
           "fingerprint_source", "installed_fingerprint", "NEUTRAL_SITES", "STRIDE_ORDER_SITES", "NEUTRAL_OPS",
           "NEUTRAL_FUNCTIONS", "CONDITIONAL_SITES", "CONDITIONAL_ENTRIES", "OP_PREFIX", "FUNCTION_PREFIX",
           "SYMBOLIC_MACHINERY", "CHECK_FUNCTIONS", "frame_detail", "op_detail", "function_detail", "conditional_detail", "site_why",
           "stride_order_why", "op_why", "function_why", "conditional_why"]


@dataclass(frozen=True, slots=True)
class ZeroOneEntry:
    """One entry's state on the running release: the ``entry``, its scopes' ``release`` (torch's
    ``2.15``; a library's ``transformers 5.25``), the fingerprints ``recorded`` for that release in
    the table and those ``installed`` (one per scope; None: none recorded / not found), and
    ``disabled``: why it covers nothing here, or None when it is enabled."""

    entry: Entry
    release: str
    recorded: tuple[str | None, ...]
    installed: tuple[str | None, ...]
    disabled: str | None

    @property
    def enabled(self) -> bool:
        return self.disabled is None

    def __str__(self) -> str:
        state = "enabled" if self.disabled is None else f"DISABLED: {self.disabled}"
        return f"{self.entry.table} {self.entry.label} [{self.release}] {state}"


def frame_detail(f: FrameType) -> str:
    """What the tables read of an asking frame: ``"recorded op aten.x.y"``
    (:func:`~export._torch_compat.neutral.torch_sites.op_detail`), ``"torch function m.q"``
    (:func:`~export._torch_compat.neutral.torch_sites.function_detail`), the text of a
    conditional entry's condition that holds now
    (:func:`~export._torch_compat.neutral.library_sites.conditional_detail`), or ``""``. One call
    per asking (a trace asks about a thousand), dispatched on the frame's function name.

    >>> import sys
    >>> frame_detail(sys._getframe())
    ''
    """
    name = f.f_code.co_name
    if name == "__call__":
        return op_detail(f)
    if name == "__torch_function__":
        return function_detail(f)
    return conditional_detail(f) if name in CONDITIONAL_FUNCTIONS else ""


def zero_one_entries() -> tuple[ZeroOneEntry, ...]:
    """Every source-keyed 0/1 entry (torch's, then transformers'), in table order, with its state.
    Reading a library's entries imports that library when it is installed.

    >>> states = zero_one_entries()
    >>> [str(s) for s in states if s.entry.table == "STRIDE_ORDER_SITES"][0][:58]
    'STRIDE_ORDER_SITES torch/_prims_common/__init__.py:__lt__:'
    """
    out: list[ZeroOneEntry] = []
    for entry in (*torch_sites.ENTRIES, *library_sites.CONDITIONAL_ENTRIES):  # read now, as the lookups do
        release = release_of(entry.scopes[0])  # an entry's scopes are of one library
        out.append(ZeroOneEntry(entry, release, tuple(s.recorded(release) for s in entry.scopes),
                                tuple(installed_fingerprint(s.module, s.qualname) for s in entry.scopes),
                                entry_problem(entry)))
    return tuple(out)
