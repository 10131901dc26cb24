"""A zoo of tiny vision models: timm, torchvision, diffusers (random weights, no downloads).

Issue 21 item 5 / issue 22 item 3: the transformers zoo (``benchmarks/hf_zoo.py``) has one
vision model with a static image; this zoo has the classifiers and dense models people
export with a dynamic batch and a dynamic image size. Every :class:`VisionModel` builds its
model from a config in code (``pretrained=False`` / ``weights=None``, small widths where the
library lets them be set, fixed seed, eval mode) and its inputs at given sizes
(``batch``, ``h``, ``w``). Three spec variants (:data:`VARIANTS`):

* ``batch``: ``Dim("batch")`` on the image (and on the UNet's timesteps), example batch 2;
* ``hw``: ``Dim("batch")``, ``Dim("h")``, ``Dim("w")``, example batch 2 and a non-square image;
* ``batch1``: as ``batch``, with an example of batch 1 (torch specializes it).

A (model, variant) becomes an :class:`benchmarks.hf_zoo.HFModel` with the variant's dims
(:func:`entry`), so the harness of the transformers zoo (``benchmarks.hf_compare``: both
exporters, each one's fix, the grid run against eager) compares it unchanged: the vision
``batch`` and ``hw`` variants are hf_zoo's ``shared`` (one ``Dim`` per name), ``batch1`` is
``batch1``. The libraries are imported when a model is built; :func:`available` says which
import (torchvision 0.29 fails with a RuntimeError on torch 2.13's CPU build, so any
exception counts as missing).

>>> m = MODELS["resnet18"]
>>> e = entry(m, "hw")
>>> e.name, e.dims, e.example
('resnet18-hw', {'x': {0: 'batch', 2: 'h', 3: 'w'}}, {'batch': 2, 'h': 64, 'w': 80})
>>> entry(m, "batch1").dims, entry(m, "batch1").grid
({'x': {0: 'batch'}}, {'batch': (1, 2, 3)})
>>> hf_variant("hw"), hf_variant("batch1")
('shared', 'batch1')
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import torch
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.hf_zoo import Call, HFModel  # noqa: E402

__all__ = ["VisionModel", "MODELS", "VARIANTS", "LIBRARIES", "available", "entry", "hf_variant"]

VARIANTS = ("batch", "hw", "batch1")
LIBRARIES = ("torchvision", "timm", "diffusers")
CLASSES = 10
BATCH_GRID: tuple[int, ...] = (1, 2, 3)


@functools.cache
def available(library: str) -> bool:
    """Whether ``library`` imports (any exception is "no": torchvision's import raises a
    RuntimeError when its compiled ops do not match torch)."""
    try:
        importlib.import_module(library)
    except Exception:  # noqa: BLE001 - a broken install is a missing one
        return False
    return True


@dataclass(frozen=True, slots=True)
class VisionModel:
    """A zoo entry: ``build()`` -> model, ``inputs(sizes)`` -> ``(args, kwargs)``.

    ``image``: the name of the image input (a kwarg), ``extra``: other inputs with a batch
    dim (the UNet's ``timestep``); ``example``: the example sizes (``batch``, ``h``, ``w``);
    ``hw_grid``: the image sizes to run the programs on in the ``hw`` variant (the ``batch``
    variants run at the example's image size); ``library``: the import it needs.
    """

    name: str
    family: str
    library: str
    build: Callable[[], nn.Module]
    inputs: Callable[[dict[str, int]], Call]
    example: dict[str, int]
    hw_grid: dict[str, tuple[int, ...]]
    image: str = "x"
    extra: tuple[str, ...] = ()
    variants: tuple[str, ...] = VARIANTS
    notes: str = ""
    batch_grid: tuple[int, ...] = field(default=BATCH_GRID)


def hf_variant(variant: str) -> str:
    """The ``benchmarks.hf_zoo`` variant a vision variant is: ``batch1`` or ``shared``."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {VARIANTS}")
    return "batch1" if variant == "batch1" else "shared"


def entry(m: VisionModel, variant: str) -> HFModel:
    """``m`` with ``variant``'s dynamic dims, as an entry of the transformers zoo's harness:
    its grid is the batch sizes, times the image sizes in ``hw`` (the example's image
    otherwise, a static one)."""
    hf_variant(variant)
    hw = variant == "hw"
    image = {0: "batch", 2: "h", 3: "w"} if hw else {0: "batch"}
    dims: dict[str, Any] = {m.image: image, **{name: {0: "batch"} for name in m.extra}}
    fixed = {k: v for k, v in m.example.items() if k != "batch"}

    def inputs(sizes: dict[str, int]) -> Call:
        return m.inputs({**fixed, **sizes})

    example = dict(m.example) if hw else {"batch": m.example["batch"]}
    axes = {"batch": m.batch_grid, **(m.hw_grid if hw else {})}
    return HFModel(f"{m.name}-{variant}", m.family, m.build, inputs, dims, example, axes, m.notes)


# -- inputs ------------------------------------------------------------------------------------


def _gen(seed: int, sizes: dict[str, int]) -> torch.Generator:
    return torch.Generator().manual_seed(hash((seed, *sorted(sizes.items()))) & 0xFFFF_FFFF)


def _image(sizes: dict[str, int]) -> Call:
    g = _gen(1, sizes)
    return (), {"x": torch.randn(sizes["batch"], 3, sizes["h"], sizes["w"], generator=g)}


def _noisy(sizes: dict[str, int]) -> Call:
    g = _gen(2, sizes)
    b = sizes["batch"]
    sample = torch.randn(b, 3, sizes["h"], sizes["w"], generator=g)
    return (), {"sample": sample, "timestep": torch.randint(0, 1000, (b,), generator=g)}


def _seeded(make: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(0)
        return make().eval()
    return build


# -- builders (the library is imported here, not at module import) ------------------------------


def _timm(name: str, **config: Any) -> Callable[[], nn.Module]:
    def make() -> nn.Module:
        import timm

        return timm.create_model(name, pretrained=False, num_classes=CLASSES, **config)
    return _seeded(make)


def _resnet18() -> nn.Module:
    from torchvision.models import resnet18

    return resnet18(weights=None, num_classes=CLASSES)


class Segmenter(nn.Module):
    """A torchvision segmentation net returning its ``out`` map (not the OrderedDict)."""

    def __init__(self) -> None:
        super().__init__()
        from torchvision.models.segmentation import lraspp_mobilenet_v3_large

        self.net = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)["out"]


class Denoiser(nn.Module):
    """A tiny diffusers ``UNet2DModel`` (2 blocks, 16/32 channels, one attention block),
    returning the predicted noise as a tensor."""

    def __init__(self) -> None:
        super().__init__()
        from diffusers import UNet2DModel

        unet = UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                           block_out_channels=(16, 32), norm_num_groups=8, attention_head_dim=8,
                           down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                           up_block_types=("AttnUpBlock2D", "UpBlock2D"))
        self.unet = cast(nn.Module, unet)  # (diffusers' ModelMixin is an nn.Module mypy does not see)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        return self.unet(sample, timestep, return_dict=False)[0]


# -- the zoo ---------------------------------------------------------------------------------------

IMAGE = {"batch": 2, "h": 64, "w": 80}
HW_GRID: dict[str, tuple[int, ...]] = {"h": (32, 77), "w": (57, 96)}


def _classifier(name: str, library: str, build: Callable[[], nn.Module], notes: str = "",
                example: dict[str, int] | None = None, hw_grid: dict[str, tuple[int, ...]] | None = None) -> VisionModel:
    return VisionModel(name, "classifier", library, build, _image, example or IMAGE, hw_grid or HW_GRID, notes=notes)


def _zoo() -> dict[str, VisionModel]:
    entries = [
        _classifier("resnet18", "torchvision", _seeded(_resnet18)),
        _classifier("efficientnet_b0", "timm", _timm("efficientnet_b0")),
        _classifier("mobilenetv3_small", "timm", _timm("mobilenetv3_small_050")),
        _classifier("convnext_atto", "timm", _timm("convnext_atto")),
        _classifier("regnetx_002", "timm", _timm("regnetx_002")),
        _classifier("vit_tiny", "timm",
                    _timm("vit_tiny_patch16_224", img_size=32, patch_size=8, depth=2, dynamic_img_size=True),
                    "deit/vit tiny, 2 blocks, patch 8, dynamic_img_size: the position embedding is resampled "
                    "to the patch grid; H and W must be multiples of 8 (timm asserts it)",
                    {"batch": 2, "h": 40, "w": 48}, {"h": (32, 45, 56), "w": (24, 64)}),
        VisionModel("lraspp_mbv3", "segmentation", "torchvision", _seeded(Segmenter), _image, IMAGE, HW_GRID,
                    notes="torchvision LR-ASPP on a dilated MobileNetV3-large, the map upsampled to H x W"),
        VisionModel("unet2d", "diffusion", "diffusers", _seeded(Denoiser), _noisy, {"batch": 2, "h": 16, "w": 24},
                    {"h": (16, 23), "w": (8, 32)}, image="sample", extra=("timestep",),
                    notes="diffusers UNet2DModel, 2 blocks: one 2x downsample, so H and W must be even"),
    ]
    return {m.name: m for m in entries}


MODELS: dict[str, VisionModel] = _zoo()
