"""The user's spec: the inputs of the call (:mod:`.inputs`), torch's ``dynamic_shapes`` and the
classic ``dynamic_dim`` constraints read into a :class:`shapes.spec.Spec` (:mod:`.dynamic_shapes`,
:mod:`.classic`), and a spec rendered back as code in both forms (:mod:`.render`).

Step 1 of an export: ``(f, args, kwargs, dynamic_shapes | constraints) -> Spec``.
"""
