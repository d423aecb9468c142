"""The one version string of the tabletop-rl package (``pyproject.toml`` reads it from here)."""

__version__ = "1.0.0"
