"""What the solver knows: the facts, classes and ranges (:mod:`.known`), scopes that assume
facts for a while (:mod:`.scopes`), and the example point with its repairs (:mod:`.point`).
"""
