"""Algorithm families. Each family lists its specs explicitly; the registry reads FAMILIES."""

from implementations.gumbel import GUMBEL_FAMILY

FAMILIES = [GUMBEL_FAMILY]
