"""The ``harness`` command: its parser, its help texts and the commands."""
