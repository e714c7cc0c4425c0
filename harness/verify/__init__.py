"""``harness verify`` and ``harness calibrate``: cases into tasks on the engine, stages of
escalation, verdicts; the gates' own false-failure rates."""
