"""The library's version: the one place it is written (the build backend reads it)."""

__version__ = "0.1.0"
