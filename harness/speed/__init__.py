"""Speed: side-by-side ratios, the limits a figure can reach, device and CPU hardware runs,
and the asv and pytest-benchmark timings the report reads."""
