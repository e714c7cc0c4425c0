"""What verification checks on one task: the output and seed contracts, the gate sets each
target kind and guarantee call for, and how a reference is held to its Numba twin."""
