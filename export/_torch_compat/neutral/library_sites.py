"""A library's lines whose 0/1 decision cannot change what they compute given their frame's state.

Not torch's source: transformers' sdpa integration (``transformers/integrations/sdpa_attention.py``).
It is keyed by a line's text like torch's entries, so it gets the same rule: its function's
fingerprint, as read with the installed transformers of the supported venvs (5.25 with each of
torch 2.13.0, 2.14.1 and 2.15.0), must be accepted, else the entry is disabled (listed by
:func:`export._torch_compat.zero_one_entries`). Another transformers with the same function
keeps its entries without a new reading.

The condition is read from the asking frame's locals and globals (no user code is called) at
every asking; the site carries the condition's text only when it held, so one asking where it
did not leaves the decision uncovered.
"""

from __future__ import annotations

import functools
import linecache
from collections.abc import Mapping
from types import FrameType, MappingProxyType

from export._torch_compat.neutral.entry import Conditional, Entry, SiteLike, path_of
from export._torch_compat.neutral.fingerprint import Scope
from export._torch_compat.neutral.torch_sites import entry_problem

__all__ = ["CONDITIONAL_ENTRIES", "CONDITIONAL_SITES", "CONDITIONAL_FUNCTIONS", "conditional_detail",
           "conditional_why"]


def _mask_given(frame: FrameType) -> bool:
    return frame.f_locals.get("attention_mask") is not None


def _compiling(frame: FrameType) -> bool:
    check = frame.f_globals.get("is_torchdynamo_compiling")
    return check is not None and getattr(check, "__module__", "").startswith("transformers.") and check() is True


_SDPA = "transformers/integrations/sdpa_attention.py"
_SDPA_FORWARD = Scope("transformers.integrations.sdpa_attention", "sdpa_attention_forward",
                      (("transformers 5.25", "f31adc5880eb"),), library="transformers")

def _conditional(key: tuple[str, str, str], condition: Conditional) -> Entry:
    return Entry("CONDITIONAL_SITES", key, condition.why, (_SDPA_FORWARD,), condition)


CONDITIONAL_ENTRIES: tuple[Entry, ...] = (
    _conditional((_SDPA, "sdpa_attention_forward", "is_causal = q_length > 1 and attention_mask is None and is_causal"),
                 Conditional(_mask_given, "attention_mask is not None",
                             "with a mask, `... and attention_mask is None and ...` is falsy whatever `q_length > 1` "
                             "answers: is_causal is falsy either way and sdpa gets the mask")),
    _conditional((_SDPA, "sdpa_attention_forward", "elif q_length == 1 and not is_torchdynamo_compiling():"),
                 Conditional(_compiling, "is_torchdynamo_compiling() is True",
                             "while exporting, `not is_torchdynamo_compiling()` is False, so the branch is not taken "
                             "whatever `q_length == 1` answers")),
)
"""The conditional entries, in the order they are tried."""

CONDITIONAL_SITES: Mapping[tuple[str, str, str], Conditional] = MappingProxyType(
    {e.key: e.condition for e in CONDITIONAL_ENTRIES if e.condition is not None})  # type: ignore[misc]
"""(file suffix, function, stripped line) -> the condition under which the line's decision
never changes what it computes."""

CONDITIONAL_FUNCTIONS = frozenset(e.key[1] for e in CONDITIONAL_ENTRIES)
"""The functions the conditional entries sit in (a quick test before a frame's line is read)."""


@functools.cache
def _by_line() -> Mapping[tuple[str, str], tuple[Entry, ...]]:
    index: dict[tuple[str, str], tuple[Entry, ...]] = {}
    for e in CONDITIONAL_ENTRIES:
        index[(e.key[1], e.key[2])] = (*index.get((e.key[1], e.key[2]), ()), e)
    return MappingProxyType(index)


def _entry(filename: str, function: str, code: str) -> Conditional | None:
    """The condition of the enabled entry at that line (its fingerprint read only when the line
    matches: the library is then imported, since its frame asked)."""
    path = path_of(filename)
    for e in _by_line().get((function, code), ()):
        if path.endswith("/" + e.key[0]) and entry_problem(e) is None:
            return e.condition
    return None


def conditional_detail(f: FrameType) -> str:
    """The text of the condition of the enabled entry at ``f``'s line when it holds now, else ``""``."""
    name = f.f_code.co_name
    if name not in CONDITIONAL_FUNCTIONS:
        return ""
    entry = _entry(f.f_code.co_filename, name, linecache.getline(f.f_code.co_filename, f.f_lineno).strip())
    if entry is None:
        return ""
    try:
        return entry.text if entry.holds(f) else ""
    except Exception:  # noqa: BLE001 - a condition that cannot be read does not hold
        return ""


def conditional_why(site: SiteLike) -> str | None:
    """``when <condition>: <why>`` for a site whose condition held, at an enabled entry; else None."""
    entry = _entry(site.file, site.function, site.code)
    if entry is not None and site.detail == entry.text:
        return f"when {entry.text}: {entry.why}"
    return None
