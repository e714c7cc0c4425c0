"""Algorithm families. Each family lists its specs explicitly; the registry reads FAMILIES."""

from implementations.astar import ASTAR_FAMILY
from implementations.firefly import FIREFLY_FAMILY
from implementations.gumbel import GUMBEL_FAMILY
from implementations.minibatch_gibbs import MINIBATCH_GIBBS_FAMILY
from implementations.minibatch_gibbs.continuous import CONTINUOUS_FAMILY
from implementations.racing import RACING_FAMILY

FAMILIES = [
    GUMBEL_FAMILY,
    RACING_FAMILY,
    MINIBATCH_GIBBS_FAMILY,
    CONTINUOUS_FAMILY,
    ASTAR_FAMILY,
    FIREFLY_FAMILY,
]
