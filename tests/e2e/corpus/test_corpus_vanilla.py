"""Pin what vanilla torch.export.export (torch 2.13) does on every corpus case.

`vanilla` is "ok", "error:<substring of torch's message>" or "wrong:<description>"; for "wrong"
the exported program is run on the case's offending input and must differ from eager.
"""
from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch._dynamo.exc import UserError
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode


def _load_cases():
    """Import tests/corpus/cases.py under a unique module name (the tests dirs are not packages)."""
    name = "symshape_corpus_cases"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("cases.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_cases = _load_cases()
CASES, VERDICTS, Case = _cases.CASES, _cases.VERDICTS, _cases.Case

TORCH_EXPORT_ERRORS = (UserError, GuardOnDataDependentSymNode, ValueError)
"""What torch.export.export raises on an "error" case (torch 2.13 to 2.15 alike): a UserError for a
constraint violation, a GuardOnDataDependentSymNode for a branch on a data-dependent value, a
ValueError for a ``Dim.DYNAMIC`` hint's range that the trace contradicts (batch1_dim_dynamic)."""


def _export(case: Case):
    model, args, kwargs = case.build()
    ds = case.dynamic_shapes() if case.dynamic_shapes is not None else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = torch.export.export(model, args, kwargs, dynamic_shapes=ds)
    return model, ep


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _same(a, b) -> bool:
    a, b = _flat(a), _flat(b)
    return len(a) == len(b) and all(
        x.shape == y.shape and torch.allclose(x, y, atol=1e-5, equal_nan=True) for x, y in zip(a, b)
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_vanilla(case: Case):
    kind, _, detail = case.vanilla.partition(":")
    if kind == "error":
        with pytest.raises(TORCH_EXPORT_ERRORS) as info:
            _export(case)
        assert detail in str(info.value), f"{case.id}: {detail!r} not in:\n{info.value}"
        return
    model, ep = _export(case)
    if kind == "ok":
        assert case.offending is None
        if case.check is not None:
            case.check(ep, model)
        return
    assert kind == "wrong", case.vanilla
    assert case.offending is not None, case.id
    args, kwargs = case.offending()
    torch.manual_seed(0)
    want = model(*args, **kwargs)
    got = ep.module()(*args, **kwargs)  # accepted: no runtime assert fires
    assert not _same(got, want), f"{case.id}: exported program agrees with eager"


def test_corpus_shape():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) and len(CASES) >= 45
    for c in CASES:
        assert c.expect in VERDICTS, c.id
        assert c.source and c.summary, c.id
        assert c.vanilla.split(":")[0] in ("ok", "error", "wrong"), c.id
        assert (c.expect == "silently_wrong") == (c.offending is not None), c.id
        if c.expect in ("violation", "specialized", "silently_wrong"):
            assert c.expect_dims and c.expect_fix, c.id
        if c.expect == "ok":
            assert c.vanilla == "ok", c.id
    counts = {v: sum(c.expect == v for c in CASES) for v in VERDICTS}
    assert all(counts[v] >= 3 for v in VERDICTS), counts


@pytest.mark.parametrize("case", [c for c in CASES if c.expect != "data_dependent"], ids=lambda c: c.id)
def test_builds_run_eagerly(case: Case):
    """Every example input is valid for its eager model."""
    model, args, kwargs = case.build()
    model(*args, **kwargs)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.torch_fix_spec is not None], ids=lambda c: c.id
)
def test_torch_suggested_fix(case: Case):
    """Apply torch's own suggested fix literally: does the re-export succeed?"""
    model, args, kwargs = case.build()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.export.export(model, args, kwargs, dynamic_shapes=case.torch_fix_spec())
    except Exception as e:  # noqa: BLE001
        assert not case.torch_fix_exports, f"{case.id}: torch's fix fails: {e}"
    else:
        assert case.torch_fix_exports, f"{case.id}: torch's fix unexpectedly exports"
