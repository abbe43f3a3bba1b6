"""Independent checkers: feasibility and objective of any solution, re-computed from the raw
instance with plain arithmetic (no model, no solver values). One module per problem family.

Nothing is reported by dlsched that has not passed through here.
"""

from dlsched.check.hare import HareEvaluation, check_schedule
from dlsched.check.placement import PlacementEvaluation, check_placement

__all__ = ["HareEvaluation", "PlacementEvaluation", "check_placement", "check_schedule"]
