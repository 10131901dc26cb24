"""Suggested fixes: the solver's fix records applied to the user's spec (:mod:`.apply`),
re-exported with exactly what ``apply()`` returns (:mod:`.verify`), and handed to the user as
:class:`.suggested.SuggestedFixes` (both API forms, the verified program).

Step 4 on failure: ``facts -> fixes -> fixed spec -> program``.
"""
