"""AOTInductor on zoo models (issue 33, item 5): a Hugging Face Llama decoding step with a KV
cache (benchmarks/hf_zoo.py ``llama_kv``: shared ``batch``, ``seq``, ``past``) and timm's ViT
with a dynamic image size (benchmarks/vision_zoo.py ``vit_tiny``, ``hw``: H and W must be
multiples of 8, the verified fix's program), each compiled by the real AOTInductor.

Oracle: on a grid of sizes and on calls that break the contract (a cache whose layers disagree,
a batch the cache does not share, an image of 44 rows), symshape's loader runs and refuses
exactly what ``ep.module()`` does, with the same words and results; torch's own loader runs the
same package without the contract, and the calls it runs although ``ep.module()`` refuses them
are counted and named (what the contract is for).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import export
from deploy_models import first, outcome
from export import ConstraintViolationError, RefusedInputError
from export.deploy import aoti_compile_and_package, aoti_load_package

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import hf_zoo, vision_zoo  # noqa: E402


def _same(want: Any, got: Any) -> bool:
    pairs = zip(want, got) if isinstance(want, (tuple, list)) else [(want, got)]
    return all(a.shape == b.shape and torch.allclose(a, b, atol=1e-4, rtol=1e-4) for a, b in pairs)


def _compare(ep: Any, path: str, calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> dict[str, int]:
    module, loaded, bare = ep.module(), aoti_load_package(path), torch._inductor.aoti_load_package(path)
    counts = {"ran": 0, "refused": 0, "torch_loader_ran_refused": 0}
    for args, kwargs in calls:
        runs, want = outcome(lambda: module(*args, **kwargs), ())
        aoti_runs, got = outcome(lambda: loaded(*args, **kwargs), ())
        assert aoti_runs == runs, got
        if runs:
            assert _same(want, got)
            bare_runs, bare_got = outcome(lambda: bare(*args, **kwargs), ())
            assert bare_runs and _same(want, bare_got)
        else:
            assert isinstance(got, RefusedInputError) and str(got) == str(want), (str(got), str(want))
            counts["torch_loader_ran_refused"] += outcome(lambda: bare(*args, **kwargs), ())[0]
        counts["ran" if runs else "refused"] += 1
    return counts


def test_a_llama_decoding_step_with_a_kv_cache(tmp_path: Path) -> None:
    m = hf_zoo.MODELS["llama_kv"]
    args, kwargs = m.inputs(hf_zoo.example_sizes(m, "shared"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(m.build(), args, kwargs, dynamic_shapes=hf_zoo.spec(m, "shared"))
    path = aoti_compile_and_package(ep, tmp_path / "llama_kv.pt2")
    calls = [m.inputs(sizes) for sizes in hf_zoo.grid(m, {"batch": (1, 3), "seq": (1, 7), "past": (1, 6)})]
    layers_disagree = m.inputs({"batch": 2, "seq": 3, "past": 4})
    layers_disagree[1]["past_keys"][1] = layers_disagree[1]["past_keys"][1][:, :, :3]
    other_batch = m.inputs({"batch": 2, "seq": 3, "past": 4})
    other_batch[1]["input_ids"] = other_batch[1]["input_ids"][:1]
    counts = _compare(ep, path, [*calls, layers_disagree, other_batch])
    assert counts == {"ran": len(calls), "refused": 2, "torch_loader_ran_refused": 2}, counts


@pytest.mark.skipif(not vision_zoo.available("timm"), reason="timm needs torchvision, which imports beside torch 2.14.1 only")
def test_a_vit_with_a_dynamic_image_size(tmp_path: Path) -> None:
    m = vision_zoo.entry(vision_zoo.MODELS["vit_tiny"], "hw")
    args, kwargs = m.inputs(m.example)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ConstraintViolationError) as caught:  # H and W must be multiples of 8
            export.export(m.build(), args, kwargs, dynamic_shapes=hf_zoo.spec(m, "shared"))
    ep = caught.value.fixes.program
    assert ep is not None
    path = aoti_compile_and_package(ep, tmp_path / "vit.pt2")
    calls = [m.inputs(sizes) for sizes in hf_zoo.grid(m, {"batch": (1, 3), "h": (32, 56), "w": (24, 64)})]
    refused = [m.inputs({"batch": 2, "h": 44, "w": 48}), m.inputs({"batch": 2, "h": 40, "w": 50})]
    counts = _compare(ep, path, [*calls, *refused])
    assert counts["ran"] == len(calls) and counts["refused"] == 2, counts
    assert first(ep.module()(*calls[0][0], **calls[0][1])).shape[0] == 1
