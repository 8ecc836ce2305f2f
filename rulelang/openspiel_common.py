"""What the OpenSpiel and PettingZoo adapters share (no third-party imports here)."""
from __future__ import annotations


def ruleset_of(path_or_ruleset, variants=(), root=None):
    """A loaded Ruleset as it is, or the rule file at a path loaded with the variants."""
    from interpreter.engine import Ruleset
    if isinstance(path_or_ruleset, Ruleset):
        if variants and tuple(variants) != tuple(path_or_ruleset.active_variants):
            raise ValueError("variants are given when loading the ruleset; this one was loaded with "
                             f"{list(path_or_ruleset.active_variants)}")
        return path_or_ruleset
    import rulelang
    return rulelang.load(str(path_or_ruleset), variants=tuple(variants), root=root)
