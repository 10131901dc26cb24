"""Swin with a dynamic image size: plain ``torch.export`` vs symshape, side by side.

Usage::

    python benchmarks/bench_swin.py                       # transformers' Swin (the default, --model hf)
    python benchmarks/bench_swin.py --model torchvision   # torchvision's swin_t, dynamic H/W

A 2-stage ``transformers.SwinModel`` (patch 4, window 4, random weights, no download) with
``{0: Dim("batch"), 2: Dim("h"), 3: Dim("w")}`` on ``pixel_values``, example 2x3x64x64. Both
exporters fail (Swin pads to its patch and window sizes, and the trace takes the no-padding
branches). Printed: each one's time, message size and causes; torch's suggested fix re-exported;
both programs run against eager on square sizes 36..128.

Measured (2026-12-02, torch 2.13, a 2-core machine with a test or CI run beside it):

* torch: fails in 36-61 s, 76 lines (20 KB) of raw guards; its fix ``h = 4*_h`` re-exports
  (28-39 s); that program refuses 36, 40, 48 and 80 with ``Guard failed: (4 + -1 *
  (pixel_values.size()[3] // 4 % 4)) % 4 <= 0`` and runs 64, 96 and 128 like eager.
* symshape before this session's solver work: 228-261 s, 34 causes in 300 KB (window-view
  guards thousands of characters long), fix ``32*_h`` plus a dozen ``torch._check`` lines of
  several KB each, not verified without them.
* symshape now: 158-205 s, 5 root causes in 1.7 KB (``h`` divisible by 4, the window padding:
  ``h // 4`` and ``(h // 4 + 1) // 2`` divisible by 4, the merged size ``>= 5``), fix ``32 * _h`` with ``_h =
  Dim('_h', min=2)``, no check, verified and offered as a program (``err.fixes.program``) that
  runs exactly the sizes torch's fixed program runs (64, 96, 128; 36, 40, 48, 80 refused by
  both), said up front. In one run side by side: 164.6 s against torch's 61.4 s + 27.9 s for
  its failing export and its fix's re-export, a ratio of 1.85. The time is three traces (the
  failing one, its 0/1 boundary re-trace, the verification), each spending a large share in
  torch's own sympy simplification.
* 2026-12-03, torch 2.14.1, one thread, after ``aten.adaptive_avg_pool1d`` (Swin's pooler) joined
  the 0/1 site table (it was the fixed spec's only boundary re-trace: ``batch > 1`` in its
  memory-format choice): torch fails in 79.9 s and its fix re-exports in 39.7 s; symshape fails
  in 173.5 s with the same 5 causes (1.7 KB) and the same verified fix, whose program runs the
  same sizes as torch's fixed one: 1.45x torch's failing export plus its fix's re-export.
* 2026-12-03 (later), torch 2.14.1, one thread, the corpus tests running beside it, after padding
  sums read as multiples (``shapes.expr.round_up_sums``: ``e + Mod(-e, m)`` is
  ``m*FloorDiv(e + m - 1, m)``): torch fails in 90.9 s and its fix re-exports in 48.1 s;
  symshape fails in 111.0 s with the same 5 causes and the same verified fix and program (sizes
  as above): **0.80x** torch's failing export plus its fix's re-export.

``--model torchvision``: torchvision's ``swin_t`` (4 stages, window 7, random weights),
``{2: Dim("h", min=32, max=512), 3: Dim("w", min=32, max=512)}`` on ``x``, example 1x3x224x224;
the programs run on square sizes 64..256. Measured 2026-12-03, torch 2.14.1, one thread, the
machine otherwise quiet but for a small export beside it: torch fails in 205.3 s (72,617
characters of guards) and suggests a static 224 x 224, which re-exports in 2.5 s and runs 224
only; symshape fails in **156.7 s** (0.75x torch's 207.8 s) with 3 causes in 1.3 KB: the example
needs no padding (``x.size(3) // 4 must be divisible by 7``, and the same of the third stage),
and each stage's window branch (``x.size(2)`` between 116 and 227); its verified fix is
``h = Dim('h', min=116, max=227)``, ``w = Dim('w', min=224, max=227)``, a program that runs 224
and 227 like eager. Before padding sums were read as multiples it took 986-1158 s and offered a
dozen ``torch._check`` lines of several KB each, not verified.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from torch.export import Dim  # noqa: E402

import export  # noqa: E402

SIZES = (36, 40, 48, 64, 80, 96, 128)
TV_SIZES = (64, 112, 116, 160, 224, 227, 256)


@dataclass(frozen=True)
class Case:
    """One Swin and its spec: ``inputs(batch, h, w)`` builds its keyword inputs, ``output`` reads
    the tensor to compare from what the model returns."""

    name: str
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[int, int, int], dict[str, torch.Tensor]]
    spec: dict[str, dict[int, Any]]
    example: tuple[int, int, int]
    sizes: tuple[int, ...]
    output: Callable[[Any], torch.Tensor]


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    cfg = transformers.SwinConfig(image_size=64, patch_size=4, num_channels=3, embed_dim=16, depths=[1, 1],
                                  num_heads=[2, 2], window_size=4)
    return transformers.SwinModel(cfg).eval()


def torchvision_model() -> torch.nn.Module:
    import torchvision  # (only this case needs it)

    torch.manual_seed(0)
    return torchvision.models.swin_t(weights=None).eval()


CASES = {
    "hf": Case("transformers SwinModel, 2 stages, window 4", model,
               lambda b, h, w: {"pixel_values": torch.randn(b, 3, h, w)},
               {"pixel_values": {0: Dim("batch"), 2: Dim("h"), 3: Dim("w")}}, (2, 64, 64), SIZES,
               lambda out: out.last_hidden_state),
    "torchvision": Case("torchvision swin_t, 4 stages, window 7", torchvision_model,
                        lambda b, h, w: {"x": torch.randn(b, 3, h, w)},
                        {"x": {2: Dim("h", min=32, max=512), 3: Dim("w", min=32, max=512)}}, (1, 224, 224),
                        TV_SIZES, lambda out: out),
}


def sizes(case: Case, m: torch.nn.Module, program: Any) -> str:
    out = []
    for s in case.sizes:
        kwargs = case.inputs(case.example[0], s, s)
        want = case.output(m(**kwargs))
        try:
            got = case.output(program.module()(**kwargs))
            out.append(f"{s}:{'ok' if torch.allclose(got, want, atol=1e-4) else 'WRONG'}")
        except Exception:  # noqa: BLE001 - a refusal is what is counted
            out.append(f"{s}:refused")
    return " ".join(out)


def torch_fix(message: str, spec: dict[str, dict[int, Any]]) -> dict[str, dict[int, Any]] | None:
    """The spec torch's "Suggested fixes:" lines make of ``spec`` (its ``Dim`` lines run, each
    dim they redefine replaced), None when it suggests none."""
    if "Suggested fixes:" not in message:
        return None
    lines = []
    for line in message.split("Suggested fixes:", 1)[1].splitlines()[1:]:
        if not line.strip():
            break
        lines.append(line.strip())
    names: dict[str, Any] = {"Dim": Dim, "oo": None}  # (torch prints an unbounded max as ``max=oo``)
    exec("\n".join(lines), names)  # noqa: S102 - torch's own suggestion, as its user would paste it
    return {arg: {i: names.get(d.__name__, d) if hasattr(d, "__name__") else d for i, d in dims.items()}
            for arg, dims in spec.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", choices=sorted(CASES), default="hf")
    case = CASES[parser.parse_args(argv).model]
    m = case.build()
    kwargs = case.inputs(*case.example)
    print(f"{case.name}, example {case.example}, spec {case.spec}")
    t = time.perf_counter()
    total_torch = 0.0
    fix = None
    try:
        torch.export.export(m, (), kwargs, dynamic_shapes=case.spec)
        print("torch: exported")
    except Exception as e:  # noqa: BLE001
        total_torch = time.perf_counter() - t
        print(f"torch: {type(e).__name__} in {total_torch:.1f} s, {len(str(e))} characters")
        fix = torch_fix(str(e), case.spec)
    if fix is not None:
        t = time.perf_counter()
        try:
            fixed = torch.export.export(m, (), kwargs, dynamic_shapes=fix)
            spent = time.perf_counter() - t
            print(f"torch's fix {fix} re-exported in {spent:.1f} s: {sizes(case, m, fixed)}")
        except Exception as e:  # noqa: BLE001
            spent = time.perf_counter() - t
            print(f"torch's fix {fix} fails in {spent:.1f} s: {type(e).__name__}")
        total_torch += spent
    t = time.perf_counter()
    try:
        export.export(m, (), kwargs, dynamic_shapes=case.spec)
        print("symshape: exported")
    except export.ConstraintViolationError as e:
        spent = time.perf_counter() - t
        print(f"symshape: {type(e).__name__} in {spent:.1f} s, {len(str(e))} characters, "
              f"{len(e.causes)} causes, verified={e.fixes.verified}, stats {e.stats}")
        print(str(e))
        if e.fixes.program is not None:
            print(f"symshape's fixed program: {sizes(case, m, e.fixes.program)}")
        if total_torch:
            print(f"ratio: {spent / total_torch:.2f} (symshape's failing export with its verified program, "
                  f"against torch's failing export plus its fix's re-export: {spent:.1f} s / {total_torch:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
