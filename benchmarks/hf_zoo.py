"""A zoo of tiny Hugging Face ``transformers`` models (random weights, no downloads).

Each :class:`HFModel` builds a 2-layer model (hidden <= 128, small vocab) from a config,
in eval mode with a fixed seed, and its inputs at given sizes. Its dynamic dims are named
(``batch``, ``seq``, ...) and listed per input; :func:`spec` turns them into the three
``dynamic_shapes`` variants of issue 8:

* ``shared``: one ``Dim`` per name, shared by every input that has it (what a user writes
  first), example batch 2, seq 8;
* ``separate``: one ``Dim`` per input and dim (an equality violation the fix must repair);
* ``batch1``: as ``shared``, with an example of batch 1 (torch specializes it).

What plain ``torch.export`` (2.13, non-strict) does with them (measured): every model
exports, directly or after its own suggested fix. ``shared``: GPT-2, Llama, Qwen2, T5, ViT,
the Whisper encoder and the KV-cache step export directly; BERT and DistilBERT need
``seq <= 64`` (position embeddings), wav2vec2 ``samples >= 11`` (its >= 2 frames
assumption). ``separate``: the equalities (ViT and Whisper have one dynamic input, so it
equals ``shared``). ``batch1``: ``batch = 1``, which re-exports, except on wav2vec2 where
torch's fix fails. Whisper's encoder demands exactly ``2 * max_source_positions`` mel
frames, so only its batch is dynamic (wav2vec2 is the audio model with a dynamic length).

>>> m = MODELS["bert"]
>>> sorted(spec(m, "separate")["input_ids"].items())
[(0, Dim('input_ids_batch', min=0)), (1, Dim('input_ids_seq', min=0))]
>>> example_sizes(m, "batch1")
{'batch': 1, 'seq': 8}
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.export import Dim

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # noqa: E402
from transformers import DynamicCache  # noqa: E402
from transformers.models.whisper.modeling_whisper import WhisperEncoder  # noqa: E402

__all__ = ["HFModel", "MODELS", "VARIANTS", "Call", "example_sizes", "grid", "spec"]

Call = tuple[tuple[Any, ...], dict[str, Any]]
VARIANTS = ("shared", "separate", "batch1")

HIDDEN, LAYERS, HEADS, FFN, VOCAB, POSITIONS = 64, 2, 4, 128, 128, 64
SEQ_GRID: tuple[int, ...] = (1, 2, 7, 16)
BATCH_GRID: tuple[int, ...] = (1, 2, 3, 5)


@dataclass(frozen=True, slots=True)
class HFModel:
    """A zoo entry: ``build()`` -> model, ``inputs(sizes)`` -> ``(args, kwargs)``.

    ``dims`` maps each dynamic input (a kwarg name) to ``{tensor dim: dim name}`` (a list
    of those for a list of tensors);
    ``example`` gives the example size of every dim name, ``grid`` the sizes to run the
    exported program on (their product), ``family`` the kind of model; ``heavy`` models
    (minutes of export time on 2 cores) are left to the benchmark.
    """

    name: str
    family: str
    build: Callable[[], nn.Module]
    inputs: Callable[[dict[str, int]], Call]
    dims: dict[str, Any]
    example: dict[str, int]
    grid: dict[str, tuple[int, ...]]
    notes: str = ""
    heavy: bool = False


# -- sizes and specs ----------------------------------------------------------------------


def example_sizes(m: HFModel, variant: str) -> dict[str, int]:
    """The example sizes of ``variant`` (batch 1 for ``batch1``)."""
    sizes = dict(m.example)
    if variant == "batch1":
        sizes["batch"] = 1
    return sizes


def spec(m: HFModel, variant: str) -> dict[str, dict[int, Any]]:
    """A fresh ``dynamic_shapes`` dict for ``variant`` (new ``Dim`` objects every call)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {VARIANTS}")
    if variant == "separate":
        return {inp: _map_dims(ds, inp, lambda where, name: Dim(f"{where}_{name}")) for inp, ds in m.dims.items()}
    shared: dict[str, Any] = {}
    return {inp: _map_dims(ds, inp, lambda _, name: shared.setdefault(name, Dim(name)))
            for inp, ds in m.dims.items()}


def _map_dims(ds: Any, where: str, make: Callable[[str, str], Any]) -> Any:
    """``{tensor dim: name}`` -> ``{tensor dim: make(where, name)}``, through lists."""
    if isinstance(ds, list):
        return [_map_dims(d, f"{where}{i}", make) for i, d in enumerate(ds)]
    return {i: make(where, name) for i, name in ds.items()}


def grid(m: HFModel, limit: dict[str, tuple[int, ...]] | None = None) -> list[dict[str, int]]:
    """Every combination of the grid sizes (``limit`` overrides some dims' values).

    >>> len(grid(MODELS["gpt2"])), grid(MODELS["gpt2"], {"batch": (1,), "seq": (1, 2)})
    (16, [{'batch': 1, 'seq': 1}, {'batch': 1, 'seq': 2}])
    """
    axes = {**m.grid, **(limit or {})}
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def _gen(seed: int, sizes: dict[str, int]) -> torch.Generator:
    return torch.Generator().manual_seed(hash((seed, *sorted(sizes.items()))) & 0xFFFF_FFFF)


def _ids(g: torch.Generator, *shape: int, vocab: int = VOCAB) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=g)


def _mask(b: int, s: int) -> torch.Tensor:
    """A padding mask: the last row (when b > 1) has its final position padded."""
    mask = torch.ones(b, s, dtype=torch.long)
    if b > 1 and s > 1:
        mask[-1, -1] = 0
    return mask


def _seeded(make: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(0)
        return make().eval()
    return build


# -- text: ids + mask ---------------------------------------------------------------------


def _text_inputs(sizes: dict[str, int]) -> Call:
    b, s = sizes["batch"], sizes["seq"]
    return (), {"input_ids": _ids(_gen(1, sizes), b, s), "attention_mask": _mask(b, s)}


TEXT_DIMS = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
TEXT_EXAMPLE = {"batch": 2, "seq": 8}
TEXT_GRID: dict[str, tuple[int, ...]] = {"batch": BATCH_GRID, "seq": SEQ_GRID}


def _text(name: str, family: str, make: Callable[[], nn.Module], notes: str = "") -> HFModel:
    return HFModel(name, family, _seeded(make), _text_inputs, TEXT_DIMS, TEXT_EXAMPLE, TEXT_GRID, notes)


def _gpt2() -> nn.Module:
    cfg = transformers.GPT2Config(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=FFN,
                                  vocab_size=VOCAB, n_positions=POSITIONS, use_cache=False,
                                  bos_token_id=0, eos_token_id=0)
    return transformers.GPT2Model(cfg)


def _llama_config(cls: Any = transformers.LlamaConfig, **extra: Any) -> Any:
    return cls(hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
               num_attention_heads=HEADS, num_key_value_heads=2, vocab_size=VOCAB,
               max_position_embeddings=POSITIONS, **extra)


def _llama() -> nn.Module:
    return transformers.LlamaModel(_llama_config(use_cache=False))


def _qwen2() -> nn.Module:
    return transformers.Qwen2Model(_llama_config(transformers.Qwen2Config, use_cache=False))


def _bert() -> nn.Module:
    cfg = transformers.BertConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                  intermediate_size=FFN, vocab_size=VOCAB, max_position_embeddings=POSITIONS)
    return transformers.BertModel(cfg, add_pooling_layer=False)


def _distilbert() -> nn.Module:
    cfg = transformers.DistilBertConfig(dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=FFN,
                                        vocab_size=VOCAB, max_position_embeddings=POSITIONS)
    return transformers.DistilBertModel(cfg)


# -- encoder-decoder ----------------------------------------------------------------------


def _t5() -> nn.Module:
    cfg = transformers.T5Config(d_model=HIDDEN, d_ff=FFN, d_kv=HIDDEN // HEADS, num_layers=LAYERS,
                                num_decoder_layers=LAYERS, num_heads=HEADS, vocab_size=VOCAB,
                                relative_attention_num_buckets=8, use_cache=False)
    return transformers.T5Model(cfg)


def _seq2seq_inputs(sizes: dict[str, int]) -> Call:
    args, kwargs = _text_inputs(sizes)
    kwargs["decoder_input_ids"] = _ids(_gen(2, sizes), sizes["batch"], sizes["dec_seq"])
    return args, kwargs


# -- vision and audio ---------------------------------------------------------------------


def _vit() -> nn.Module:
    cfg = transformers.ViTConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                 intermediate_size=FFN, image_size=32, patch_size=8, num_channels=3)
    return transformers.ViTModel(cfg, add_pooling_layer=False)


def _vit_inputs(sizes: dict[str, int]) -> Call:
    g = _gen(3, sizes)
    return (), {"pixel_values": torch.randn(sizes["batch"], 3, 32, 32, generator=g)}


def _wav2vec2() -> nn.Module:
    cfg = transformers.Wav2Vec2Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                      intermediate_size=FFN, conv_dim=(16, 16), conv_stride=(2, 2),
                                      conv_kernel=(3, 3), num_conv_pos_embeddings=8,
                                      num_conv_pos_embedding_groups=4, vocab_size=32)
    return transformers.Wav2Vec2Model(cfg)


def _whisper() -> nn.Module:
    cfg = transformers.WhisperConfig(d_model=HIDDEN, encoder_layers=LAYERS, decoder_layers=LAYERS,
                                     encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
                                     encoder_ffn_dim=FFN, decoder_ffn_dim=FFN, num_mel_bins=16,
                                     max_source_positions=16, max_target_positions=POSITIONS, vocab_size=VOCAB,
                                     pad_token_id=0, bos_token_id=0, eos_token_id=0, decoder_start_token_id=0)
    return WhisperEncoder(cfg)


def _mel_inputs(sizes: dict[str, int]) -> Call:
    g = _gen(6, sizes)
    return (), {"input_features": torch.randn(sizes["batch"], 16, 32, generator=g)}


def _audio_inputs(sizes: dict[str, int]) -> Call:
    g = _gen(4, sizes)
    return (), {"input_values": torch.randn(sizes["batch"], sizes["samples"], generator=g)}


# -- a decoding step with a KV cache ------------------------------------------------------


class CachedStep(nn.Module):
    """One Llama decoding step: ``past`` keys/values (per layer, length P) in a
    ``DynamicCache``, ``seq`` new tokens; returns the hidden states and the updated cache."""

    def __init__(self) -> None:
        super().__init__()
        self.cfg = _llama_config(use_cache=True)
        self.model = transformers.LlamaModel(self.cfg)

    def forward(self, input_ids: torch.Tensor, past_keys: list[torch.Tensor],
                past_values: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        cache = DynamicCache(ddp_cache_data=list(zip(past_keys, past_values)), config=self.cfg)
        out = self.model(input_ids=input_ids, past_key_values=cache, use_cache=True)
        layers = out.past_key_values.layers
        return (out.last_hidden_state, *(t for layer in layers for t in (layer.keys, layer.values)))


def _kv_inputs(sizes: dict[str, int]) -> Call:
    b, s, p = sizes["batch"], sizes["seq"], sizes["past"]
    g = _gen(5, sizes)
    kv = 2, HIDDEN // HEADS
    keys = [torch.randn(b, kv[0], p, kv[1], generator=g) for _ in range(LAYERS)]
    values = [torch.randn(b, kv[0], p, kv[1], generator=g) for _ in range(LAYERS)]
    return (), {"input_ids": _ids(g, b, s), "past_keys": keys, "past_values": values}


def _kv_dims() -> dict[str, Any]:
    cache = [{0: "batch", 2: "past"} for _ in range(LAYERS)]
    return {"input_ids": {0: "batch", 1: "seq"}, "past_keys": cache, "past_values": cache}


# -- the zoo --------------------------------------------------------------------------------


def _zoo() -> dict[str, HFModel]:
    seq2seq_dims = {**TEXT_DIMS, "decoder_input_ids": {0: "batch", 1: "dec_seq"}}
    entries = [
        _text("gpt2", "decoder", _gpt2),
        _text("llama", "decoder", _llama),
        _text("qwen2", "decoder", _qwen2),
        _text("bert", "encoder", _bert),
        _text("distilbert", "encoder", _distilbert),
        HFModel("t5", "encoder-decoder", _seeded(_t5), _seq2seq_inputs, seq2seq_dims,
                {**TEXT_EXAMPLE, "dec_seq": 4}, {**TEXT_GRID, "dec_seq": (1, 5)}),
        HFModel("vit", "vision", _seeded(_vit), _vit_inputs, {"pixel_values": {0: "batch"}},
                {"batch": 2}, {"batch": BATCH_GRID}),
        HFModel("whisper_enc", "audio", _seeded(_whisper), _mel_inputs, {"input_features": {0: "batch"}},
                {"batch": 2}, {"batch": BATCH_GRID},
                "Whisper's encoder requires exactly 2 * max_source_positions mel frames: only batch is dynamic"),
        HFModel("wav2vec2", "audio", _seeded(_wav2vec2), _audio_inputs,
                {"input_values": {0: "batch", 1: "samples"}}, {"batch": 2, "samples": 64},
                {"batch": BATCH_GRID, "samples": (7, 16, 33, 100)},
                "raw audio samples through two strided convs: 7 samples make 1 frame", heavy=True),
        HFModel("llama_kv", "decoder+cache", _seeded(CachedStep), _kv_inputs, _kv_dims(),
                {"batch": 2, "seq": 8, "past": 5}, {**TEXT_GRID, "past": (1, 6)}),
    ]
    return {m.name: m for m in entries}


MODELS: dict[str, HFModel] = _zoo()
