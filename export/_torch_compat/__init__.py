"""The one package that touches torch's private symbolic-shape APIs (torch 2.13, 2.14, 2.15).

Everything here is version-gated: importing this package with a torch outside
``[2.13, 2.16)`` raises :class:`export.errors.UnsupportedTorchVersionError` before any of
its modules imports a private torch name. See ``docs/torch_internals.md`` for the torch
internals (with line numbers) this relies on, and for what differs between the supported
versions; per-version differences live in :mod:`export._torch_compat.version` only.

The rest of :mod:`export` imports this package (``from export import _torch_compat as tc``)
and never touches a private torch name itself (``tests/test_layering.py`` checks). One
module per concern:

* :mod:`~export._torch_compat.version` -- :data:`SUPPORTED_TORCH`, :func:`check_torch_version`;
* :mod:`~export._torch_compat.decider` -- the :class:`Decider` protocol, :class:`BaseDecider`,
  :data:`NEUTRAL`;
* :mod:`~export._torch_compat.symbols` -- :func:`value_range`, :func:`range_bounds`,
  :func:`symbol_kind` ...; torch's sympy function classes, re-exported for :mod:`export.tracing.convert`;
* :mod:`~export._torch_compat.routing` -- :class:`RoutingShapeEnv`, a ``ShapeEnv`` subclass
  whose guard entry points ask a decider first (``decider=None`` keeps torch's vanilla
  behaviour);
* :mod:`~export._torch_compat.patches` -- :func:`route_shape_env` /
  :func:`install_shape_env_class`: make ``torch.export.export`` (non-strict and
  ``strict=True``) build that subclass for the duration of a ``with``, under one
  process-wide re-entrant lock (see ``docs/design.md``, "Threads and archives");
* :mod:`~export._torch_compat.program` -- :func:`shape_env_of`,
  :func:`set_range_constraints`, :func:`add_asserts`, frames and stacks: reading and
  writing a finished export;
* :mod:`~export._torch_compat.refusals` -- :func:`explain_refusals`: a program's input
  checks (``ep.module()``'s pre-hook and ``_guards_fn``) failing with the user's words;
* :mod:`~export._torch_compat.tracer_errors` -- :func:`is_dynamo_error`,
  :func:`wrapped_exception`, :func:`dynamo_user_stack`: an error torch raised while tracing,
  read for :class:`export.errors.ModelError`;
* :mod:`~export._torch_compat.pytree` -- pytrees (:func:`tree_flatten_with_path`,
  :func:`keystr`, :func:`key_entry` ...), torch's source names of input sizes
  (:func:`size_source`) and the kinds of ``Dim`` objects (:func:`is_dim_hint`,
  :func:`is_derived_dim`);
* :mod:`~export._torch_compat.spec214` -- the ``dynamic_shapes`` forms new in torch 2.14;
* :mod:`~export._torch_compat.executorch_support` -- :func:`size_upper_bound`: a size's largest
  value, as ExecuTorch's memory planning needs it (:mod:`export.deploy.executorch`);
* :mod:`~export._torch_compat.neutral` -- the source-keyed 0/1 tables (``NEUTRAL_SITES`` ...,
  transformers' ``CONDITIONAL_SITES``), each entry gated by the fingerprint of the function it
  sits in, their matchers and frame readers for :mod:`export.tracing.sites`, and
  :func:`zero_one_entries`, every entry's state on the running release.
"""

from __future__ import annotations

import torch

from export._torch_compat.version import SUPPORTED_TORCH, check_torch_version

TORCH_VERSION: tuple[int, int] = check_torch_version(torch.__version__)
"""``(major, minor)`` of the installed torch, inside :data:`SUPPORTED_TORCH`."""

# Private torch imports (every module below has some): only after the version gate.
from torch.fx.experimental.symbolic_shapes import (  # noqa: E402
    ConstraintViolationError,
    GuardOnDataDependentSymNode,
    ShapeEnv,
)

from export._torch_compat.decider import NEUTRAL, Answer, Api, BaseDecider, Decider, Neutral  # noqa: E402
from export._torch_compat.static_guards import drop_static_guards  # noqa: E402
from export._torch_compat.patches import SHAPE_ENV_SITES, exclusive, install_shape_env_class, route_shape_env  # noqa: E402
from export._torch_compat.program import (  # noqa: E402
    add_asserts,
    decider_of,
    returns_self,
    reword_asserts,
    static_input_sizes,
    user_input_values,
    data_dependent_asserts,
    drop_guards,
    dynamo_stack,
    recorded_guards,
    set_range_constraints,
    shape_env_of,
    sym_expr,
    graph_mutates,
    symbol_origin_frames,
    unbacked_symbols_with_stacks,
)
from export._torch_compat.pytree import (  # noqa: E402
    SizeSource,
    int_wrapper_value,
    is_derived_dim,
    is_dim_hint,
    key_entry,
    keystr,
    size_source,
    tree_flatten_with_path,
    tree_map,
    tree_map_with_path,
)
from export._torch_compat.routing import RoutingShapeEnv  # noqa: E402
from export._torch_compat.executorch_support import size_upper_bound  # noqa: E402
from export._torch_compat.neutral import (  # noqa: E402
    CHECK_FUNCTIONS,
    CONDITIONAL_SITES,
    NEUTRAL_FUNCTIONS,
    NEUTRAL_OPS,
    NEUTRAL_SITES,
    STRIDE_ORDER_SITES,
    SYMBOLIC_MACHINERY,
    Conditional,
    ZeroOneEntry,
    conditional_detail,
    conditional_why,
    frame_detail,
    function_detail,
    function_why,
    op_detail,
    op_why,
    site_why,
    stride_order_why,
    zero_one_entries,
)
from export._torch_compat.refusals import explain_refusals  # noqa: E402
from export._torch_compat.tracer_errors import (  # noqa: E402
    dynamo_explanation,
    dynamo_user_stack,
    is_dynamo_error,
    is_unsupported,
    wrapped_exception,
)
from export._torch_compat.spec214 import (  # noqa: E402
    decorated_dynamic_shapes,
    decorator_resolved,
    is_shapes_spec,
    normalize_kwargs_shapes,
    shapes_spec_assumptions,
    shapes_spec_leaves,
    spec_symbol_range,
)
from export._torch_compat.symbols import (  # noqa: E402
    CeilToInt,
    CleanDiv,
    FloorDiv,
    FloorToInt,
    Identity,
    IntTrueDiv,
    IsNonOverlappingAndDenseIndicator,
    LShift,
    Max,
    Min,
    Mod,
    ModularIndexing,
    PowByNatural,
    PythonMod,
    RoundToInt,
    RShift,
    TruncToInt,
    Where,
    int_oo,
    range_bounds,
    symbol_hint,
    symbol_kind,
    symbol_range,
    value_range,
)

__all__ = [
    "SUPPORTED_TORCH",
    "TORCH_VERSION",
    "SHAPE_ENV_SITES",
    "check_torch_version",
    "Decider",
    "BaseDecider",
    "NEUTRAL",
    "Neutral",
    "Answer",
    "Api",
    "RoutingShapeEnv",
    "install_shape_env_class",
    "exclusive",
    "route_shape_env",
    "shape_env_of",
    "set_range_constraints",
    "add_asserts",
    "explain_refusals",
    "is_dynamo_error",
    "is_unsupported",
    "wrapped_exception",
    "dynamo_explanation",
    "dynamo_user_stack",
    "reword_asserts",
    "returns_self",
    "static_input_sizes",
    "user_input_values",
    "data_dependent_asserts",
    "drop_guards",
    "drop_static_guards",
    "dynamo_stack",
    "symbol_origin_frames",
    "value_range",
    "range_bounds",
    "symbol_kind",
    "symbol_range",
    "symbol_hint",
    "unbacked_symbols_with_stacks",
    "decider_of",
    "sym_expr",
    "graph_mutates",
    "recorded_guards",
    "tree_flatten_with_path",
    "tree_map",
    "tree_map_with_path",
    "keystr",
    "key_entry",
    "SizeSource",
    "size_source",
    "is_dim_hint",
    "is_derived_dim",
    "int_wrapper_value",
    "size_upper_bound",
    # the source-keyed 0/1 tables (export.tracing.sites)
    "NEUTRAL_SITES", "STRIDE_ORDER_SITES", "NEUTRAL_OPS", "NEUTRAL_FUNCTIONS", "CONDITIONAL_SITES", "Conditional",
    "SYMBOLIC_MACHINERY", "CHECK_FUNCTIONS", "site_why", "stride_order_why", "op_why", "function_why",
    "conditional_why", "frame_detail", "op_detail", "function_detail", "conditional_detail", "zero_one_entries",
    "ZeroOneEntry",
    # dynamic_shapes forms new in torch 2.14
    "is_shapes_spec", "decorated_dynamic_shapes", "shapes_spec_leaves", "shapes_spec_assumptions",
    "spec_symbol_range", "normalize_kwargs_shapes", "decorator_resolved",
    "ShapeEnv",
    "ConstraintViolationError",
    "GuardOnDataDependentSymNode",
    # torch's sympy functions (for export.tracing.convert)
    "FloorDiv", "CleanDiv", "ModularIndexing", "PythonMod", "Mod", "IntTrueDiv",
    "FloorToInt", "CeilToInt", "TruncToInt", "RoundToInt", "PowByNatural", "Max", "Min",
    "Where", "Identity", "LShift", "RShift", "IsNonOverlappingAndDenseIndicator", "int_oo",
]
