"""The version of dpkit: each round's release its own, so a report or model file names the code that made it."""

__version__ = "0.7.2"
