"""Machine-checkable expectations: what symshape SHOULD do on each corpus case.

Derived from each case's `expect`, `expect_dims` and `expect_fix` (cases.py). One `Expect` per
case id, in `EXPECT`. Sizes are written as assignments `{"x.size(1)": 16, ...}`; dims not
mentioned keep the size of the case's example input. Fields:

  verdict     ok | violation | specialized | data_dependent | rejects_at_runtime
              (rejects_at_runtime = the case is `silently_wrong` for vanilla torch: symshape must
              either fail the export or make ep.module() reject the offending input)
  dims        the input dims the causes must name (violation / specialized) or, for
              data_dependent, what the message must mention (any of the spellings)
  ranges      expected ranges per input dim of the *fixed* program (violation) or of the program
              (ok); lo is the program's lower bound: 1 (torch's size symbols are positive), 2
              when a hard branch (if / int() / torch._check) relied on torch's >= 2 assumption,
              more if the spec says so; hi None = oo
  equal       pairs of dims the fixed program (or the ok program) must report as equal
  static      dims the weakest fix makes static
  admit       size assignments the weakest fix must admit: the re-exported program accepts them
              and matches eager (sizes the model handles in eager must stay admitted)
  reject      size assignments the fixed program must reject at run time (outside the fix)
  admit_small sizes 0/1 that eager handles and the traced program computes correctly; a program
              must not reject them (kept apart: they test the blanket >= 2 runtime assert)
  needs_check the weakest fix is not a Dim expression: it needs torch._check lines in the model
              (fixes.checks) on top of the Dim-form spec
  hint        specialized: a substring the message must contain ("size >= 2" or "broadcast")
  example_fix specialized: re-exporting with the example resized like this (same spec) succeeds
  snippet     data_dependent: the source line the message must point at (cases.py:<line>)
  remedy      data_dependent: the message must contain one of these (torch._check / constrain_as by
              default; torch.cond / while_loop where expect_fix says no torch._check can decide it)
  make        optional input builder make(sizes, example_args) -> args, for data-carrying inputs
"""
from __future__ import annotations

import os
import tempfile
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch

Sizes = dict  # {"x.size(1)": 16}

VERDICTS = ("ok", "violation", "specialized", "data_dependent", "rejects_at_runtime")


@dataclass(frozen=True)
class Expect:
    verdict: str
    dims: tuple[str, ...] = ()
    ranges: dict = field(default_factory=dict)
    equal: tuple[tuple[str, str], ...] = ()
    static: tuple[str, ...] = ()
    admit: tuple[Sizes, ...] = ()
    reject: tuple[Sizes, ...] = ()
    admit_small: tuple[Sizes, ...] = ()
    needs_check: bool = False
    hint: str = ""
    example_fix: Optional[Sizes] = None
    snippet: str = ""
    remedy: tuple[str, ...] = ("torch._check(", "constrain_as")
    make: Optional[Callable[[Sizes, tuple], tuple]] = None


def _lengths_make(sizes: Sizes, example: tuple) -> tuple:
    """length_mask_batch: lengths.max() must equal T (the mask is broadcast against x)."""
    b = sizes.get("x.size(0)", example[0].shape[0])
    t = sizes.get("x.size(1)", example[0].shape[1])
    nb = sizes.get("lengths.size(0)", b)
    x = torch.randn(b, t, example[0].shape[2])
    lengths = torch.tensor([t] + [max(1, t - 1 - i % t) for i in range(nb - 1)])
    return (x, lengths)


def X(n):  # noqa: N802 - shorthand for one-dim cases
    return {"x.size(0)": n}


EXPECT: dict[str, Expect] = {
    # ------------------------------------------------------------------ violation: ranges
    "branch_le6_range": Expect(
        "violation", ("x.size(0)",), ranges={"x.size(0)": (3, 6)},
        admit=(X(3), X(4), X(6)), reject=(X(7), X(10), X(2)),
    ),
    "pos_table_max_len": Expect(
        "violation", ("x.size(1)",), ranges={"x.size(0)": (1, None), "x.size(1)": (1, 16)},
        admit=({"x.size(1)": 16}, {"x.size(1)": 2}, {"x.size(0)": 3, "x.size(1)": 9}),
        reject=({"x.size(1)": 17},),
    ),
    "cache_write_max": Expect(
        "violation", ("x.size(0)",), ranges={"x.size(0)": (1, 10)},
        admit=(X(2), X(7), X(10)), reject=(X(11), X(12)),
    ),
    "check_ge4_min": Expect(
        "violation", ("x.size(0)",), ranges={"x.size(0)": (4, None)},
        admit=(X(4), X(5), X(100)), reject=(X(3), X(2)),
    ),
    "not_equal_512": Expect(
        "violation", ("x.size(1)",), ranges={"x.size(1)": (1, 511)},
        admit=({"x.size(1)": 2}, {"x.size(1)": 300}, {"x.size(1)": 511}), reject=({"x.size(1)": 512},),
    ),
    "slice_from5_min": Expect(
        # fix-floors: x.size(1) - 5 == 1 was asked only at value-neutral torch places (no fact):
        # 6 is admitted (x[:, 5:] of size 1) and runs like eager
        "violation", ("x.size(1)",), ranges={"x.size(1)": (6, None)},
        admit=({"x.size(1)": 6}, {"x.size(1)": 7}, {"x.size(1)": 50}), reject=({"x.size(1)": 5},),
    ),
    # n != 5 is torch's contiguity bookkeeping (x[:, :5] of n = 5 is all of x: the same values),
    # asked as guard_or_false at a value-neutral place and in the fake-tensor cache under
    # suppress_guards: no requirement, so 5 is admitted (torch's program refuses it)
    "slice_to5_min": Expect(
        "violation", ("x.size(1)",), ranges={"x.size(1)": (5, None)},
        admit=({"x.size(1)": 5}, {"x.size(1)": 6}, {"x.size(1)": 40}), reject=({"x.size(1)": 4},),
    ),
    # ------------------------------------------------------------------ violation: equalities
    # the intended fix shares the Dim with y (y.size(0) == x.size(0)); specializing x to 10 is
    # valid but not the weakest: it rejects matching batches other than 10 that eager handles
    "matmul_batch_unshared": Expect(
        "violation", ("x.size(0)",), equal=(("x.size(0)", "y.size(0)"),),
        admit=({"x.size(0)": 10, "y.size(0)": 10}, {"x.size(0)": 4, "y.size(0)": 4}),
        reject=({"x.size(0)": 4, "y.size(0)": 10},),
    ),
    "matmul_inner_dims": Expect(
        "violation", ("y.size(0)", "y.size(1)"), equal=(("x.size(0)", "y.size(0)"), ("x.size(2)", "y.size(1)")),
        admit=({"x.size(0)": 3, "x.size(1)": 5, "x.size(2)": 7, "y.size(0)": 3, "y.size(1)": 7, "y.size(2)": 2},),
        reject=({"x.size(0)": 3, "x.size(1)": 5, "x.size(2)": 7, "y.size(0)": 4, "y.size(1)": 7, "y.size(2)": 2},
                {"x.size(0)": 3, "x.size(1)": 5, "x.size(2)": 7, "y.size(0)": 3, "y.size(1)": 6, "y.size(2)": 2}),
    ),
    "add_separate_dims": Expect(
        "violation", ("y.size(0)",), equal=(("x.size(0)", "y.size(0)"),),
        admit=({"x.size(0)": 7, "y.size(0)": 7}, {"x.size(0)": 2, "y.size(0)": 2}),
        reject=({"x.size(0)": 7, "y.size(0)": 8},),
    ),
    "ids_mask_equal": Expect(
        "violation", ("attention_mask.size(0)", "attention_mask.size(1)"),
        equal=(("input_ids.size(0)", "attention_mask.size(0)"), ("input_ids.size(1)", "attention_mask.size(1)")),
        admit=({"input_ids.size(0)": 3, "input_ids.size(1)": 9, "attention_mask.size(0)": 3, "attention_mask.size(1)": 9},),
        reject=({"input_ids.size(0)": 3, "input_ids.size(1)": 9, "attention_mask.size(0)": 3, "attention_mask.size(1)": 8},
                {"input_ids.size(0)": 3, "input_ids.size(1)": 9, "attention_mask.size(0)": 4, "attention_mask.size(1)": 9}),
    ),
    # the data-dependent u0 == T (lengths.max() == x.size(1)) is a runtime assert on data, not a
    # restriction of the declared dims: it must neither block the export nor appear as a cause
    "length_mask_batch": Expect(
        "violation", ("lengths.size(0)",), equal=(("x.size(0)", "lengths.size(0)"),),
        admit=({"x.size(0)": 3, "x.size(1)": 6, "lengths.size(0)": 3}, {"x.size(0)": 2, "x.size(1)": 2, "lengths.size(0)": 2}),
        reject=({"x.size(0)": 3, "x.size(1)": 6, "lengths.size(0)": 4},),
        make=_lengths_make,
    ),
    "masked_fill_mask_dims": Expect(
        "violation", ("mask.size(0)", "mask.size(2)", "mask.size(3)"),
        equal=(("scores.size(0)", "mask.size(0)"), ("scores.size(2)", "mask.size(2)"), ("scores.size(3)", "mask.size(3)")),
        admit=({"scores.size(0)": 3, "scores.size(2)": 6, "scores.size(3)": 7,
                "mask.size(0)": 3, "mask.size(2)": 6, "mask.size(3)": 7},),
        reject=({"scores.size(0)": 3, "scores.size(2)": 6, "scores.size(3)": 7,
                 "mask.size(0)": 3, "mask.size(2)": 7, "mask.size(3)": 7},),
    ),
    # a + b == 10 has no Dim spelling (10 - a is refused by Dim): keep both dynamic, add a check
    "cat_sum_const10": Expect(
        "violation", ("a.size(0)", "b.size(0)"), ranges={"a.size(0)": (2, 8), "b.size(0)": (2, 8)},
        admit=({"a.size(0)": 4, "b.size(0)": 6}, {"a.size(0)": 2, "b.size(0)": 8},
               {"a.size(0)": 8, "b.size(0)": 2}, {"a.size(0)": 5, "b.size(0)": 5}),
        reject=({"a.size(0)": 4, "b.size(0)": 7}, {"a.size(0)": 5, "b.size(0)": 4}),
        needs_check=True,
    ),
    "cat_sum_undeclared": Expect(
        "violation", ("z.size(1)",),
        admit=({"x.size(1)": 3, "y.size(1)": 5, "z.size(1)": 8}, {"x.size(1)": 2, "y.size(1)": 2, "z.size(1)": 4},
               {"x.size(0)": 4, "y.size(0)": 4, "z.size(0)": 4, "x.size(1)": 10, "y.size(1)": 3, "z.size(1)": 13}),
        reject=({"x.size(1)": 3, "y.size(1)": 5, "z.size(1)": 9},),
        needs_check=True,
    ),
    "cat_plus_strided": Expect(
        "violation", ("z.size(1)",),
        admit=({"x.size(1)": 3, "y.size(1)": 5, "z.size(1)": 16}, {"x.size(1)": 3, "y.size(1)": 5, "z.size(1)": 15},
               {"x.size(1)": 2, "y.size(1)": 2, "z.size(1)": 8}, {"x.size(1)": 2, "y.size(1)": 2, "z.size(1)": 7}),
        reject=({"x.size(1)": 3, "y.size(1)": 5, "z.size(1)": 17}, {"x.size(1)": 3, "y.size(1)": 5, "z.size(1)": 14}),
        needs_check=True,
    ),
    "tutorial_wxyz": Expect(
        "violation", ("w.size(1)", "y.size(1)", "z.size(0)"), static=("w.size(1)",),
        equal=(("x.size(0)", "y.size(1)"),),
        admit=({"w.size(0)": 6, "x.size(0)": 4, "y.size(0)": 8, "y.size(1)": 4, "z.size(0)": 32},
               {"w.size(0)": 3, "x.size(0)": 3, "y.size(0)": 5, "y.size(1)": 3, "z.size(0)": 15}),
        reject=({"z.size(0)": 33}, {"w.size(1)": 6}, {"x.size(0)": 4, "y.size(1)": 5, "z.size(0)": 40}),
        needs_check=True,
    ),
    # Dim.DYNAMIC lets the trace infer relations and guards (torch's semantics, issue 10): the
    # program keeps, like torch's, the branches the example takes (x1 > y1), so it rejects x1 < y1
    # (and x1 == y1, which eager handles: a limit of the traced program, not of the spec)
    "pad_to_max_sym_max": Expect(
        "ok",
        admit=({"x.size(0)": 2, "x.size(1)": 3, "y.size(0)": 3, "y.size(1)": 2},
               {"x.size(0)": 4, "x.size(1)": 6, "y.size(0)": 5, "y.size(1)": 3},
               # y's sizes 1 and 0: the 0/1 evidence (the same values as the general graph)
               {"x.size(0)": 1, "x.size(1)": 2, "y.size(0)": 1, "y.size(1)": 1},
               {"x.size(0)": 1, "x.size(1)": 3, "y.size(0)": 1, "y.size(1)": 0}),
        reject=({"x.size(0)": 3, "x.size(1)": 2, "y.size(0)": 2, "y.size(1)": 3},),
    ),
    # ------------------------------------------------------------------ violation: derived dims
    "derived_offset_plus1": Expect(
        "violation", ("y.size(0)",), ranges={"x.size(0)": (3, 6), "y.size(0)": (4, 7)},
        admit=({"x.size(0)": 3, "y.size(0)": 4}, {"x.size(0)": 6, "y.size(0)": 7}),
        reject=({"x.size(0)": 4, "y.size(0)": 4}, {"x.size(0)": 7, "y.size(0)": 8}),
    ),
    # y.size(0) // 2 == x.size(0): y in {2x, 2x + 1}; dimy = 2*dimx + 1 would reject y = 2x
    "derived_stride_2x_plus1": Expect(
        "violation", ("y.size(0)",), ranges={"x.size(0)": (3, 6), "y.size(0)": (6, 13)},
        admit=({"x.size(0)": 5, "y.size(0)": 11}, {"x.size(0)": 5, "y.size(0)": 10},
               {"x.size(0)": 3, "y.size(0)": 6}, {"x.size(0)": 6, "y.size(0)": 13}),
        reject=({"x.size(0)": 5, "y.size(0)": 12}, {"x.size(0)": 4, "y.size(0)": 11}),
        needs_check=True,
    ),
    "derived_out_of_order": Expect(
        "violation", ("z.size(0)",), ranges={"z.size(0)": (6, 8)},
        admit=({"x.size(0)": 4, "y.size(0)": 5, "z.size(0)": 6}, {"x.size(0)": 6, "y.size(0)": 7, "z.size(0)": 8}),
        reject=({"x.size(0)": 4, "y.size(0)": 5, "z.size(0)": 7},),
    ),
    "repeat_2x": Expect(
        "violation", ("y.size(0)",),
        admit=({"x.size(0)": 5, "y.size(0)": 10}, {"x.size(0)": 2, "y.size(0)": 4}),
        reject=({"x.size(0)": 5, "y.size(0)": 11},),
    ),
    # ------------------------------------------------------------------ violation: divisibility / products
    "reshape_divisible_4": Expect(
        # fix-floors: the smallest multiple (x.size(0) // 4 == 1) is admitted and runs like eager
        "violation", ("x.size(0)",), ranges={"x.size(0)": (4, None)},
        admit=(X(4), X(8), X(12), X(40)), reject=(X(10), X(6)),
    ),
    "split_heads_divisible": Expect(
        "violation", ("x.size(2)",), ranges={"x.size(2)": (8, None)},
        admit=({"x.size(2)": 8}, {"x.size(0)": 3, "x.size(1)": 7, "x.size(2)": 64}),
        reject=({"x.size(2)": 30}, {"x.size(2)": 4}),
    ),
    "down_up_even": Expect(
        # fix-floors: h = w = 2 (a 1x1 map after the stride-2 conv) is admitted and runs like eager
        "violation", ("x.size(2)", "x.size(3)"), ranges={"x.size(2)": (2, None), "x.size(3)": (2, None)},
        admit=({"x.size(2)": 4, "x.size(3)": 6}, {"x.size(2)": 10, "x.size(3)": 4}, {"x.size(2)": 2},
               {"x.size(2)": 2, "x.size(3)": 2}),
        reject=({"x.size(2)": 7}, {"x.size(3)": 9}, {"x.size(2)": 3}),
    ),
    "mod2_branch": Expect(
        # fix-floors: w = 2 (w[::2] of size 1) is admitted and runs like eager
        "violation", ("w.size(0)",), ranges={"w.size(0)": (2, None)},
        admit=({"w.size(0)": 2}, {"w.size(0)": 4}, {"w.size(0)": 12}), reject=({"w.size(0)": 11}, {"w.size(0)": 3}),
    ),
    "view_minus_one": Expect(
        "violation", ("x.size(0)", "x.size(1)"),
        admit=({"x.size(0)": 3, "x.size(1)": 4}, {"x.size(0)": 3, "x.size(1)": 6},
               {"x.size(0)": 4, "x.size(1)": 6}, {"x.size(0)": 5, "x.size(1)": 8}),
        reject=({"x.size(0)": 3, "x.size(1)": 5}, {"x.size(0)": 4, "x.size(1)": 4}),
        needs_check=True,
    ),
    "flatten_hw_product": Expect(
        # issue 8: the floor on h, w served only view/reshape grouping (value-neutral): h = 1, w = 64 runs
        "violation", ("x.size(2)", "x.size(3)"), ranges={"x.size(2)": (1, 64), "x.size(3)": (1, 64)},
        admit=({"x.size(2)": 8, "x.size(3)": 8}, {"x.size(2)": 4, "x.size(3)": 16},
               {"x.size(2)": 2, "x.size(3)": 32}, {"x.size(0)": 5, "x.size(2)": 16, "x.size(3)": 4},
               {"x.size(2)": 1, "x.size(3)": 64}),
        reject=({"x.size(2)": 5, "x.size(3)": 5}, {"x.size(2)": 8, "x.size(3)": 9}),
        needs_check=True,
    ),
    # (H//4)*(W//4) == 16 with H//4, W//4 >= 2: H, W in [8, 35]
    "patch_pos_product": Expect(
        # fix-floors: H // 4 == 1 (one row of 16 patches) is admitted and runs like eager
        "violation", ("x.size(2)", "x.size(3)"), ranges={"x.size(2)": (4, 67), "x.size(3)": (4, 67)},
        admit=({"x.size(2)": 16, "x.size(3)": 16}, {"x.size(2)": 8, "x.size(3)": 32},
               {"x.size(2)": 19, "x.size(3)": 17}, {"x.size(2)": 32, "x.size(3)": 8},
               {"x.size(2)": 4, "x.size(3)": 64}, {"x.size(2)": 67, "x.size(3)": 7}),
        reject=({"x.size(2)": 16, "x.size(3)": 20}, {"x.size(2)": 12, "x.size(3)": 12}, {"x.size(2)": 4, "x.size(3)": 60}),
        needs_check=True,
    ),
    # ------------------------------------------------------------------ violation: to a constant
    "chunk3_constant": Expect(
        "violation", ("x.size(0)",), static=("x.size(0)",), admit=(X(3),), reject=(X(2),),
    ),
    "split_sizes_constant": Expect(
        "violation", ("x.size(0)",), static=("x.size(0)",), admit=(X(5),), reject=(X(6), X(4)),
    ),
    "conv_in_channels": Expect(
        "violation", ("x.size(1)",), static=("x.size(1)",), ranges={"x.size(0)": (1, None)},
        admit=({"x.size(0)": 5, "x.size(1)": 3}, {"x.size(0)": 2, "x.size(1)": 3}),
        reject=({"x.size(1)": 4},),
    ),
    # ------------------------------------------------------------------ specialized (0/1)
    "batch1_named_dim": Expect("specialized", ("x.size(0)",), hint="size >= 2", example_fix=X(2)),
    "batch1_dim_dynamic": Expect("specialized", ("x.size(0)",), hint="size >= 2", example_fix=X(2)),
    "batch1_dim_auto_static": Expect("specialized", ("x.size(0)",), hint="size >= 2", example_fix=X(2)),
    "broadcast_size1": Expect("specialized", ("y.size(0)",), hint="broadcast"),
    "eq1_branch_example1": Expect("specialized", ("x.size(0)",), hint="size >= 2", example_fix=X(2)),
    "squeeze_example1": Expect("specialized", ("x.size(0)",), hint="size >= 2", example_fix=X(2)),
    "example_size0": Expect("specialized", ("x.size(0)",), hint="size >= 2", example_fix=X(2)),
    "attn_mask_heads1": Expect("specialized", ("mask.size(1)",), hint="broadcast"),
    # ------------------------------------------------------------------ data-dependent
    "nonzero_branch": Expect("data_dependent", snippet="if y.shape[0] > 2:", remedy=("torch.cond",)),
    "item_value_branch": Expect("data_dependent", snippet="if x.sum().item() > 0:", remedy=("torch.cond", "torch.where")),
    "item_eq1_repeat": Expect("data_dependent", snippet="if k == 1:"),
    "item_loop_count": Expect("data_dependent", snippet="for _ in range(n.item()):", remedy=("while_loop",)),
    "mask_empty_check": Expect("data_dependent", snippet="if kept.numel() == 0:",
                               remedy=("torch.cond", "torch._check(", "constrain_as")),
    # the guard is u0 > x.size(0): the message must name the dim, not its example value (6)
    "item_clamp_branch": Expect("data_dependent", dims=("x.size(0)", "x.shape[0]"), snippet="if k > x.shape[0]:",
                                remedy=("sym_min", "torch._check(")),
    # ------------------------------------------------------------------ silently wrong (vanilla)
    "eq1_branch_silently_wrong": Expect(
        "rejects_at_runtime", ("x.size(0)",), admit=(X(2), X(5), X(8)), reject=(X(9),),
    ),
    "empty_boxes_silently_wrong": Expect(
        "rejects_at_runtime", ("boxes.size(0)",), admit=({"boxes.size(0)": 2}, {"boxes.size(0)": 50}),
    ),
    "small_batch_silently_wrong": Expect(
        "rejects_at_runtime", ("x.size(0)",), admit=(X(2), X(9)),
    ),
    # ------------------------------------------------------------------ ok
    "mlp_dynamic_batch": Expect(
        "ok", ranges={"x.size(0)": (1, None)}, admit=(X(7), X(2)), admit_small=(X(1),),
    ),
    "convbn_dynamic_batch_hw": Expect(
        "ok", ranges={"x.size(0)": (1, None), "x.size(2)": (1, None), "x.size(3)": (1, None)},
        admit=({"x.size(0)": 3, "x.size(2)": 5, "x.size(3)": 9},), admit_small=(X(1),),
    ),
    "attention_dynamic_seq": Expect(
        "ok", ranges={"x.size(0)": (1, None), "x.size(1)": (1, 64)},  # issue 8: size 1 admitted (admit_small)
        admit=({"x.size(0)": 3, "x.size(1)": 9}, {"x.size(1)": 64}), reject=({"x.size(1)": 65},),
        admit_small=({"x.size(0)": 1, "x.size(1)": 1},),
    ),
    "derived_offset_correct": Expect(
        "ok", ranges={"x.size(0)": (3, 6), "y.size(0)": (4, 7)},
        admit=({"x.size(0)": 4, "y.size(0)": 5}, {"x.size(0)": 6, "y.size(0)": 7}),
        reject=({"x.size(0)": 4, "y.size(0)": 4}, {"x.size(0)": 7, "y.size(0)": 8}),
    ),
    "matmul_shared_dims": Expect(
        "ok", equal=(("x.size(0)", "y.size(0)"), ("x.size(2)", "y.size(1)")),
        admit=({"x.size(0)": 3, "x.size(1)": 5, "x.size(2)": 7, "y.size(0)": 3, "y.size(1)": 7, "y.size(2)": 2},),
        reject=({"x.size(0)": 3, "x.size(1)": 5, "x.size(2)": 7, "y.size(0)": 4, "y.size(1)": 7, "y.size(2)": 2},),
    ),
    "cond_shape_predicate": Expect(
        "ok", ranges={"x.size(0)": (2, None)}, admit=(X(2), X(4), X(5), X(9)),
    ),
    "reshape_derived_correct": Expect(
        "ok", ranges={"x.size(0)": (8, None)}, admit=(X(8), X(20)), reject=(X(18), X(4)),
    ),
    "cache_write_at_max": Expect(
        "ok", ranges={"x.size(0)": (1, 10)}, admit=(X(3), X(10)), reject=(X(11),), admit_small=(X(1),),
    ),
}


def expected(case_id: str) -> Expect:
    return EXPECT[case_id]


def sizes_text(s: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in s.items())


# ----------------------------------------------------------------------------------------------
# checking helpers (shared by test_corpus_symshape.py and benchmarks/bench_fixes.py)
# ----------------------------------------------------------------------------------------------

import importlib.util  # noqa: E402
import inspect  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

HERE = Path(__file__).resolve().parent
DIM_RE = re.compile(r"^(\w+)\.size\((\d+)\)$")


def load_cases():
    """tests/corpus/cases.py, loaded once under the name test_corpus_vanilla.py uses."""
    name = "symshape_corpus_cases"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "cases.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def params_of(model: Any) -> list[str]:
    return list(inspect.signature(model.forward).parameters)


def parse_dim(text: str) -> tuple[str, int]:
    m = DIM_RE.match(text)
    assert m, f"not an input dim: {text!r}"
    return m.group(1), int(m.group(2))


def example_sizes(model: Any, args: tuple) -> dict[str, int]:
    """{"x.size(0)": 5, ...} for every dim of every tensor argument."""
    out = {}
    for name, a in zip(params_of(model), args):
        if isinstance(a, torch.Tensor):
            for d, n in enumerate(a.shape):
                out[f"{name}.size({d})"] = int(n)
    return out


def full_sizes(model: Any, args: tuple, sizes: Sizes) -> dict[str, int]:
    out = example_sizes(model, args)
    for k in sizes:
        assert k in out, f"unknown dim {k} (dims: {sorted(out)})"
    out.update(sizes)
    return out


def inputs_at(model: Any, args: tuple, sizes: Sizes, make: Optional[Callable] = None, seed: int = 1234) -> tuple:
    """The example arguments resized to `sizes` (fresh values, same dtypes)."""
    torch.manual_seed(seed)
    if make is not None:
        return make(sizes, args)
    names = params_of(model)
    out = []
    for name, a in zip(names, args):
        if not isinstance(a, torch.Tensor):
            out.append(a)
            continue
        shape = [sizes.get(f"{name}.size({d})", n) for d, n in enumerate(a.shape)]
        if a.dtype.is_floating_point:
            out.append(torch.randn(*shape, dtype=a.dtype))
        elif a.dtype == torch.bool:
            out.append(torch.rand(*shape) > 0.5)
        else:
            hi = int(a.max()) + 1 if a.numel() else 2
            out.append(torch.randint(0, max(hi, 1), shape, dtype=a.dtype))
    return tuple(out)


def flat(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def same(a: Any, b: Any) -> bool:
    a, b = flat(a), flat(b)
    return len(a) == len(b) and all(
        x.shape == y.shape and torch.allclose(x, y, atol=1e-4, equal_nan=True) for x, y in zip(a, b)
    )


def runs_like_eager(ep: Any, model: Any, args: tuple) -> Optional[str]:
    """None when ep.module() accepts `args` and agrees with eager, else what went wrong."""
    try:
        want = model(*args)
    except Exception as e:  # noqa: BLE001
        return f"eager fails: {type(e).__name__}: {e}"
    try:
        got = ep.module()(*args)
    except Exception as e:  # noqa: BLE001
        return f"program rejects it: {type(e).__name__}: {str(e)[:300]}"
    return None if same(got, want) else "program output differs from eager"


def rejects(ep: Any, args: tuple) -> bool:
    try:
        ep.module()(*args)
    except Exception:  # noqa: BLE001
        return True
    return False


def with_checks(model: Any, checks: tuple[str, ...]) -> Any:
    """`model` with the suggested torch._check lines at the top of forward (same signature)."""
    if not checks:
        return model
    names = params_of(model)
    src = f"def forward(self, {', '.join(names)}):\n"
    src += "".join(f"    {c}\n" for c in checks)
    src += f"    return self.inner({', '.join(names)})\n"
    ns: dict[str, Any] = {"torch": torch}
    # a real file, as when a user pastes the lines into their model: tracebacks, linecache and
    # symshape's provenance (which reads the user's source line) see it like any source file
    fd, path = tempfile.mkstemp(prefix="symshape_checks_", suffix=".py")
    with os.fdopen(fd, "w") as fh:
        fh.write(src)
    exec(compile(src, path, "exec"), ns)  # noqa: S102
    cls = type(f"Checked{type(model).__name__}", (torch.nn.Module,), {"forward": ns["forward"]})
    wrapper = cls()
    wrapper.inner = model
    weakref.finalize(wrapper, os.remove, path)  # the file lives as long as the model it defines
    return wrapper.eval()


class _Check:
    @staticmethod
    def _check(cond: Any, *a: Any, **k: Any) -> None:
        if not bool(cond):
            raise AssertionError("check failed")


def _solve(expr: Any, value: int, roots: dict) -> Optional[bool]:
    """Assign/verify the root of an affine decl expr; None when not affine in one root."""
    syms = list(expr.free_symbols)
    if len(syms) != 1:
        return None
    (s,) = syms
    a = expr.coeff(s)
    b = expr.subs(s, 0)
    if not (a.is_Integer and b.is_Integer) or a == 0:
        return None
    q, r = divmod(value - int(b), int(a))
    if r:
        return False
    if s.name in roots and roots[s.name] != q:
        return False
    roots[s.name] = q
    return True


def spec_admits(spec: Any, checks: tuple[str, ...], sizes: dict[str, int], example: dict[str, int]) -> tuple[bool, str]:
    """Does a normalized shapes.spec.Spec (plus torch._check lines) admit these full sizes?
    Dims the spec does not declare are static: they must keep their `example` size."""
    decls = {f"{d.dim.input_name}.size({d.dim.dim})": d for d in spec.decls}
    roots: dict[str, int] = {}
    pending = []
    for dim, v in sizes.items():
        d = decls.get(dim)
        if d is None:
            if v != example[dim]:
                return False, f"{dim} is static {example[dim]}, not {v}"
            continue
        if d.expr is None:
            continue
        ok = _solve(d.expr, v, roots)
        if ok is False:
            return False, f"{dim} = {v} is not {d.expr}"
        if ok is None:
            pending.append((dim, d, v))
    for dim, d, v in pending:
        try:
            got = int(d.expr.subs({s: roots[s.name] for s in d.expr.free_symbols}))
        except KeyError:
            return False, f"cannot evaluate {d.expr}"
        if got != v:
            return False, f"{dim} = {v} but {d.expr} = {got}"
    for r in spec.roots:
        if r.name in roots:
            v = roots[r.name]
            if v < r.lo or (r.hi is not None and v > r.hi):
                return False, f"root {r.name} = {v} outside [{r.lo}, {r.hi}]"
    ns: dict[str, Any] = {"torch": _Check}
    by_input: dict[str, dict[int, int]] = {}
    for dim, v in sizes.items():
        name, i = parse_dim(dim)
        by_input.setdefault(name, {})[i] = v
    for name, dims in by_input.items():
        ns[name] = SimpleNamespace(shape=tuple(dims[i] for i in range(len(dims))))
    for c in checks:
        try:
            eval(c, ns)  # noqa: S307
        except AssertionError:
            return False, f"{c} fails"
        except Exception as e:  # noqa: BLE001
            return False, f"{c} cannot be evaluated on input shapes ({type(e).__name__}: {e})"
    return True, "admitted"


def static_in(spec: Any, dim: str) -> bool:
    name, i = parse_dim(dim)
    return not any(d.dim.input_name == name and d.dim.dim == i for d in spec.decls)


def same_expr(spec: Any, a: str, b: str) -> bool:
    da = next((d for d in spec.decls if f"{d.dim.input_name}.size({d.dim.dim})" == a), None)
    db = next((d for d in spec.decls if f"{d.dim.input_name}.size({d.dim.dim})" == b), None)
    return da is not None and db is not None and da.expr is not None and da.expr == db.expr


def source_line(case: Any, snippet: str) -> int:
    """The line number in cases.py of `snippet` inside the case model's forward."""
    model, _, _ = case.build()
    lines, start = inspect.getsourcelines(type(model).forward)
    for i, line in enumerate(lines):
        if snippet in line:
            return start + i
    raise AssertionError(f"{snippet!r} not in {type(model).__name__}.forward")
