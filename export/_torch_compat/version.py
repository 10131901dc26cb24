"""The supported torch versions and the gate (no torch import here: a pure check).

:mod:`export._torch_compat` runs :func:`check_torch_version` on the installed torch when it is
imported, before any of its modules imports a private torch name.
"""

from __future__ import annotations

import re

from export.errors import UnsupportedTorchVersionError

__all__ = ["SUPPORTED_TORCH", "check_torch_version"]

SUPPORTED_TORCH: tuple[tuple[int, int], tuple[int, int]] = ((2, 13), (2, 16))
"""Supported torch versions: ``lower <= (major, minor) < upper`` (pyproject says the same)."""


def check_torch_version(version: str) -> tuple[int, int]:
    """``(major, minor)`` of ``version``; raise :class:`UnsupportedTorchVersionError`
    unless it is supported.

    >>> check_torch_version("2.13.0+cpu")
    (2, 13)
    >>> check_torch_version("2.14.1+cu130")
    (2, 14)
    >>> check_torch_version("2.15.0+cu132")
    (2, 15)
    >>> check_torch_version("2.16.0")
    Traceback (most recent call last):
    ...
    export.errors.UnsupportedTorchVersionError: torch 2.16.0 is not supported: ...
    """
    (lo, hi) = SUPPORTED_TORCH
    m = re.match(r"(\d+)\.(\d+)(?!\d)", version)
    found = (int(m[1]), int(m[2])) if m else None
    if found is None or not lo <= found < hi:
        wanted = f"torch>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1]}"
        raise UnsupportedTorchVersionError(
            f"torch {version} is not supported: symshape overrides torch's private "
            f"symbolic-shape internals and is verified on {wanted} only; install a "
            f"supported torch (pip install '{wanted}')"
        )
    return found


# Per-version differences -------------------------------------------------------------
# None in what this package touches, measured by diffing the installs (docs/torch_internals.md):
# torch 2.13 -> 2.14 (section 6) and 2.14 -> 2.15 (section 7). The install sites, the
# signatures and bodies of evaluate_expr / _inner_evaluate_expr / _evaluate_expr /
# guard_or_defer_runtime_assert / _update_var_to_range / _set_replacement / _refine_ranges,
# create_symbol's 0/1 specialization, create_unbacked_symint's ranges, the symbolic-context
# dataclasses and torch's sympy functions behave the same on all three (2.15 adds lines that
# do not change what the routing sees: a name index of symbols, a memo of symbolic arithmetic,
# a nested-tensor early return in _maybe_evaluate_static), so no code of the package branches
# on the version. A future difference goes here, as a function named after what it adapts that
# branches on ``check_torch_version(torch.__version__)`` (the package's ``TORCH_VERSION``), and
# is listed in that document; tests/export/test_torch_compat.py checks the overridden
# signatures against the installed torch.
