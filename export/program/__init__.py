"""The exported program: the solver's final ranges and equalities put on a real
``torch.export.ExportedProgram`` (:mod:`.exported`), which torch floors (sizes >= 2) it keeps
(:mod:`.floor_policy`) on the 0/1 evidence (:mod:`.zero_one`), and its archive (:mod:`.archive`).

Step 3 on success: ``Trace -> SymshapeProgram``.
"""
