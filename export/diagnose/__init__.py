"""From a failing trace to the error the user reads: the violations that block and their
root causes (:mod:`.violations`, :mod:`.redundant`), in words (:mod:`.words`), 0/1
specializations explained by a probe with a larger example (:mod:`.probe`, :mod:`.dynamic_hints`),
and data-dependent errors (:mod:`.data_dependent`, :mod:`.value_reads`).

Step 4 on failure: ``Trace -> causes`` (and, through :mod:`export.fixes`, fixes).
"""
