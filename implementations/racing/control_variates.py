"""Control variates for racing rewards (000_26bed7cc1ef3ab92.txt, Sec. 3.4, Eq. 11).

Control variates are a target transform, so the code lives with the targets in
:mod:`harness.targets.location_model` (the harness builds its ``cv-studentt`` problem from it and
imports no implementation); the racing family re-exports it here.
"""

from harness.targets.location_model import (
    DataModel,
    control_variate_rewards,
    model_target,
    reward_matrix,
    studentt_location_model,
)

__all__ = [
    "DataModel",
    "control_variate_rewards",
    "model_target",
    "reward_matrix",
    "studentt_location_model",
]
