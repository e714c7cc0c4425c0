"""The HTML report: the page, its first screen, the bands and verdict text, and the timing and
hardware sections."""
