"""export: symshape's torch.export integration (the only package that imports torch).

>>> import torch
>>> from export import export, dynamic_dim
>>> x = torch.randn(4, 3)
>>> ep = export(lambda x: x + 1, (x,), constraints=[dynamic_dim(x, 0) <= 64])
>>> ep.range_constraints
{s77: VR[2, 64]}
"""

from export.api import constrain_as_size, constrain_as_value, dynamic_dim, export
from export.diagnose import Cause, SuggestedFixes
from export.errors import (
    ConstraintViolationError,
    DataDependentError,
    ExportError,
    InputError,
    SymshapeWarning,
    UnsupportedTorchVersionError,
)
from export.program import Report, SymshapeProgram, load, save
from shapes.spec import InputDim

__all__ = [
    "Cause",
    "ConstraintViolationError",
    "DataDependentError",
    "ExportError",
    "InputDim",
    "InputError",
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
