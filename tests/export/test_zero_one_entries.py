"""The source-keyed 0/1 entries on the running release: which are disabled (pinned per release),
that each release's fingerprint is recorded in the table, and that an entry whose function
changed covers nothing (issue 34, "0/1 rules as one table").

On a new torch (or transformers) release, run this file first (docs/torch_internals.md,
section 8): a failing ``test_disabled_entries_are_the_expected_ones`` lists each disabled entry
with the function whose fingerprint changed.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from pathlib import Path

import pytest
import torch
from torch.export import Dim

from zero_one_models import LinView  # noqa: E402

import export  # noqa: E402
from export import _torch_compat as tc  # noqa: E402
from export._torch_compat.neutral import fingerprint, torch_sites  # noqa: E402
from export.tracing.sites import RULES, Site, any_answer, covered, judge, justification  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

DISABLED: dict[str, frozenset[str]] = {"2.13": frozenset(), "2.14": frozenset(), "2.15": frozenset()}
"""Torch release -> the labels of the entries disabled there (none: every function an entry sits
in either kept its fingerprint or was re-read and its new one accepted, see torch_sites.py)."""

COLLAPSE = ("torch/_prims/__init__.py", "_collapse_view_helper", "if shape[idx] != 1:")


def _listing() -> str:
    return "\n".join(str(state) for state in tc.zero_one_entries())


def test_disabled_entries_are_the_expected_ones() -> None:
    states = tc.zero_one_entries()
    release = torch_sites.torch_release()
    disabled = {s.entry.label: s.disabled for s in states if s.entry.scopes[0].library == "torch" and not s.enabled}
    assert release in DISABLED, f"torch {release} has no expected list yet; the listing:\n{_listing()}"
    assert set(disabled) == DISABLED[release], disabled


def test_no_library_entry_is_disabled() -> None:
    """transformers' entries: enabled whenever the installed sdpa_attention_forward is one read."""
    pytest.importorskip("transformers")
    states = [s for s in tc.zero_one_entries() if s.entry.scopes[0].library != "torch"]
    assert states and all(s.enabled for s in states), [str(s) for s in states if not s.enabled]


def test_the_running_release_s_fingerprints_are_recorded() -> None:
    """Each entry's table names, for the running torch, exactly the fingerprint installed: the
    table was read in each supported release, not only accepted there."""
    for state in tc.zero_one_entries():
        if state.entry.scopes[0].library == "torch":
            assert state.recorded == state.installed, str(state)


def test_every_torch_release_read_is_a_supported_one() -> None:
    for entry in torch_sites.ENTRIES:
        for scope in entry.scopes:
            assert [release for release, _ in scope.accepted] == ["2.13", "2.14", "2.15"], scope
            assert all(len(fp) == 12 for _, fp in scope.accepted), scope


@pytest.mark.parametrize("entry", [e for e in (*torch_sites.ENTRIES, *tc.neutral.CONDITIONAL_ENTRIES)
                                   if len(e.key) == 3], ids=lambda e: e.label[:60])
def test_a_line_entry_is_a_line_of_its_scope(entry: tc.neutral.Entry) -> None:
    """The line is in the function fingerprinted (a closure's line in the function defining it)."""
    (scope,) = entry.scopes
    if scope.library != "torch":
        pytest.importorskip(scope.library)
    obj: object = __import__(scope.module, fromlist=["_"])
    for part in scope.qualname.split("."):
        obj = getattr(obj, part)
    source = textwrap.dedent(inspect.getsource(obj))  # type: ignore[arg-type]
    _, function, code = entry.key
    assert code in [line.strip() for line in source.splitlines()]
    assert scope.qualname.split(".")[-1] == function or f"def {function}(" in source


def test_an_altered_fingerprint_disables_its_entry_and_its_decision_is_then_judged_as_any_other(
        monkeypatch: pytest.MonkeyPatch) -> None:
    site = Site("/x/site-packages/" + COLLAPSE[0], 1483, COLLAPSE[1], COLLAPSE[2])
    assert judge(site) is not None and covered([site])
    position = next(i for i, e in enumerate(torch_sites.ENTRIES) if e.key == COLLAPSE)
    entry = torch_sites.ENTRIES[position]
    (scope,) = entry.scopes
    altered = dataclasses.replace(entry, scopes=(dataclasses.replace(scope, accepted=fingerprint.releases(
        "000000000000", "000000000000", "000000000000")),))
    entries = (*torch_sites.ENTRIES[:position], altered, *torch_sites.ENTRIES[position + 1:])
    model, x = LinView(), torch.randn(3, 5, 8)
    spec = {"x": {0: Dim("b"), 1: Dim("s")}}
    try:
        with monkeypatch.context() as m:
            m.setattr(torch_sites, "ENTRIES", entries)
            torch_sites._enabled.cache_clear()
            assert judge(site) is None and justification(site) is None and not covered([site])
            (state,) = [s for s in tc.zero_one_entries() if s.entry.key == COLLAPSE]
            assert not state.enabled and "changed in" in state.disabled and "_collapse_view_helper" in state.disabled
            ep = export.export(model, (x,), dynamic_shapes=spec)
            assert not any(e.kind == "site" and COLLAPSE[2] in e.site for e in ep.symshape.zero_one)
            assert ep.symshape.stats["boundary_retraces"] > 0  # the re-trace, not the table, decides size 1
    finally:
        torch_sites._enabled.cache_clear()
    assert judge(site) is not None
    ep = export.export(model, (x,), dynamic_shapes=spec)
    assert any(e.kind == "site" and COLLAPSE[2] in e.site for e in ep.symshape.zero_one)


def test_fingerprints_ignore_comments_and_blank_lines_but_not_code() -> None:
    base = fingerprint.fingerprint_source("def f(x):\n    return x + 1\n")
    assert fingerprint.fingerprint_source("def f(x):  # one\n\n    # two\n    return x + 1   \n") == base
    assert fingerprint.fingerprint_source("    def f(x):\n        return x + 1\n") == base  # a method, dedented
    assert fingerprint.fingerprint_source("def f(x):\n    return x + 2\n") != base
    assert fingerprint.fingerprint_source("def f(x):\n    return '# x' + 1\n") != \
        fingerprint.fingerprint_source("def f(x):\n    return '' + 1\n")  # a '#' in a string is code


# -- the rules, in order ----------------------------------------------------------------------------

def test_the_rules_in_the_order_they_are_tried() -> None:
    assert [r.name for r in RULES] == ["site", "stride order", "recorded op", "torch function", "conditional site",
                                       "contiguous line", "layout-only branch"]
    assert [r.name for r in RULES if r.any_answer] == ["stride order", "layout-only branch"]
    assert all(len(r.justification) > 20 and "\n" not in r.justification for r in RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_s_oracle_is_a_test(rule) -> None:
    path, _, name = rule.oracle.partition("::")
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    assert name in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, rule.oracle


@pytest.mark.parametrize("site, rule", [
    (Site("/x/torch/_refs/__init__.py", 1, "_reshape_view_helper_core_alg", "if accum != length:"), "site"),
    (Site("/x/torch/_prims_common/__init__.py", 484, "__lt__", "guard_or_false("), "stride order"),
    (Site("/x/torch/_ops.py", 875, "__call__", "return self._op(*args, **kwargs)",
          "recorded op aten.linear.default"), "recorded op"),
    (Site("/x/torch/_export/non_strict_utils.py", 1, "__torch_function__", "return func(*args, **kwargs)",
          "torch function torch._C.TensorBase.contiguous"), "torch function"),
    (Site("/x/model.py", 3, "forward", "return x.contiguous()"), "contiguous line"),
    (Site("/x/model.py", 3, "forward", "if h.shape[0] >= 64:", "layout-only branch of h"), "layout-only branch"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_judge_names_the_rule_and_any_answer_agrees(site: Site, rule: str) -> None:
    verdict = judge(site)
    assert verdict is not None and verdict.rule.name == rule and verdict.why == justification(site)
    assert any_answer(site) is verdict.rule.any_answer
