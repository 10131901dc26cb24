"""Swin with a dynamic image size: plain ``torch.export`` vs symshape, side by side.

Usage::

    python benchmarks/bench_swin.py

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
"""

from __future__ import annotations

import os
import sys
import time
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


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    cfg = transformers.SwinConfig(image_size=64, patch_size=4, num_channels=3, embed_dim=16, depths=[1, 1],
                                  num_heads=[2, 2], window_size=4)
    return transformers.SwinModel(cfg).eval()


def sizes(m: torch.nn.Module, program: Any) -> str:
    out = []
    for s in SIZES:
        x = torch.randn(2, 3, s, s)
        want = m(pixel_values=x).last_hidden_state
        try:
            got = program.module()(pixel_values=x).last_hidden_state
            out.append(f"{s}:{'ok' if torch.allclose(got, want, atol=1e-4) else 'WRONG'}")
        except Exception:  # noqa: BLE001 - a refusal is what is counted
            out.append(f"{s}:refused")
    return " ".join(out)


def main() -> int:
    m = model()
    kwargs = {"pixel_values": torch.randn(2, 3, 64, 64)}
    spec = {"pixel_values": {0: Dim("batch"), 2: Dim("h"), 3: Dim("w")}}
    t = time.perf_counter()
    try:
        torch.export.export(m, (), kwargs, dynamic_shapes=spec)
        print("torch: exported")
    except Exception as e:  # noqa: BLE001
        print(f"torch: {type(e).__name__} in {time.perf_counter() - t:.1f} s, {len(str(e))} characters")
    _h, _w = Dim("_h", min=1), Dim("_w", min=1)
    t = time.perf_counter()
    fixed = torch.export.export(m, (), kwargs, dynamic_shapes={"pixel_values": {0: Dim("batch"), 2: 4 * _h, 3: 4 * _w}})
    print(f"torch's fix (h = 4*_h) re-exported in {time.perf_counter() - t:.1f} s: {sizes(m, fixed)}")
    t = time.perf_counter()
    try:
        export.export(m, (), kwargs, dynamic_shapes=spec)
        print("symshape: exported")
    except export.ConstraintViolationError as e:
        print(f"symshape: {type(e).__name__} in {time.perf_counter() - t:.1f} s, {len(str(e))} characters, "
              f"{len(e.causes)} causes, verified={e.fixes.verified}")
        print(str(e))
        if e.fixes.program is not None:
            print(f"symshape's fixed program: {sizes(m, e.fixes.program)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
