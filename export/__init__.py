"""export: symshape's torch.export integration (the only package that imports torch).

>>> import torch
>>> from export import export, dynamic_dim
>>> x = torch.randn(4, 3)
>>> ep = export(lambda x: x + 1, (x,), constraints=[dynamic_dim(x, 0) <= 64])
>>> ep.range_constraints
{s77: VR[2, 64]}

Importing it first makes sure ``shapes`` and ``solver`` are symshape's own packages, even when
the current folder holds a ``shapes.py`` or ``solver.py`` (see :mod:`export._siblings`).
"""

__version__ = "0.1.0"
"""symshape's version (the same in ``shapes``, ``solver``, ``export`` and pyproject.toml)."""

from export._siblings import claim

claim()

from export.api import constrain_as_size, constrain_as_value, dynamic_dim, export  # noqa: E402
from export.diagnose.violations import Cause  # noqa: E402
from export.fixes.suggested import SuggestedFixes  # noqa: E402
from export.errors import (  # noqa: E402
    ArchiveError,
    ConstraintViolationError,
    DataDependentError,
    ExportError,
    InputError,
    ModelError,
    RefusedInputError,
    SymshapeWarning,
    UnsupportedTorchVersionError,
)
from export.program.exported import Report, SymshapeProgram, load, save  # noqa: E402
from shapes.spec import InputDim  # noqa: E402

__all__ = [
    "ArchiveError",
    "Cause",
    "ConstraintViolationError",
    "DataDependentError",
    "ExportError",
    "InputDim",
    "InputError",
    "ModelError",
    "RefusedInputError",
    "Report",
    "SuggestedFixes",
    "SymshapeProgram",
    "SymshapeWarning",
    "UnsupportedTorchVersionError",
    "constrain_as_size",
    "constrain_as_value",
    "dynamic_dim",
    "export",
    "load",
    "save",
]
