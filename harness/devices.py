"""Which implementation keys this machine can run.

``reference`` and ``numba`` run everywhere the package installs. ``cuda`` needs numba-cuda (the
optional extra ``sampler-harness[cuda]``) and a CUDA device, or numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1``, which CI uses: it runs the kernels in Python, slowly, on tiny
problems only).
"""

from __future__ import annotations

import functools
import subprocess
import sys

from harness.spec import IMPLEMENTATION_NAMES

#: Seconds the device probe may take (driver start-up is slow on a cold machine).
PROBE_S = 120


def cuda_unavailable() -> str | None:
    """None when the ``cuda`` key can run here, else one line saying why not.

    A real device is probed in a child process: initialising the CUDA driver here would break
    every worker the process engine later forks from this process (CUDA does not survive a
    fork). The simulator has no driver and is asked here."""
    try:
        from numba import (
            config,
            cuda,  # noqa: F401  (numba-cuda installed?)
        )
    except ImportError as exc:
        return (
            f"numba-cuda is not installed ({exc}); install the extra: "
            "pip install 'sampler-harness[cuda]'"
        )
    if config.ENABLE_CUDASIM:
        return None
    return _probe_device()


@functools.cache
def _probe_device() -> str | None:
    code = "from numba import cuda; import sys; sys.exit(0 if cuda.is_available() else 3)"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=PROBE_S
        )
    except subprocess.TimeoutExpired:
        return f"numba.cuda did not answer within {PROBE_S} s"
    if done.returncode == 0:
        return None
    if done.returncode == 3:
        return "no CUDA device on this machine (numba.cuda.is_available() is False)"
    last = (done.stderr.strip().splitlines() or ["?"])[-1]
    return f"numba.cuda cannot see a device: {last}"


def unavailable(impl: str) -> str | None:
    """Why this machine cannot run implementation key ``impl``; None when it can."""
    if impl not in IMPLEMENTATION_NAMES:
        raise ValueError(
            f"implementation {impl!r} is invalid; valid: {', '.join(IMPLEMENTATION_NAMES)}"
        )
    return cuda_unavailable() if impl == "cuda" else None


def runnable(simulator: bool = False) -> tuple[str, ...]:
    """The implementation keys this machine can run, in IMPLEMENTATION_NAMES order. The
    simulator counts only when ``simulator`` is set: it is there to test the kernels, and a
    whole verification in it would take hours."""
    return tuple(
        i
        for i in IMPLEMENTATION_NAMES
        if unavailable(i) is None and (i != "cuda" or simulator or not simulated())
    )


def simulated() -> bool:
    """Whether ``cuda`` would run in numba-cuda's simulator rather than on a device."""
    from numba import config

    return bool(getattr(config, "ENABLE_CUDASIM", False))
