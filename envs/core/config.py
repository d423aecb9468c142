"""Config keywords typed on a command line: ``KEY=VALUE`` pairs read as JSON values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def parse_key_values(pairs: Sequence[str], option: str = "--config") -> dict[str, Any]:
    """``["num_teams=3", "layout=generated"]`` -> ``{"num_teams": 3, "layout": "generated"}``.

    Values are read as JSON (numbers, true/false/null, quoted strings, lists); anything that is not
    valid JSON is kept as a plain string. A pair without ``=`` or a key raises ``SystemExit`` naming
    ``option``, so a command line answers in one line.
    """
    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"{option} takes KEY=VALUE pairs (VALUE in JSON, e.g. num_teams=3), got {pair!r}")
        try:
            config[key] = json.loads(value)
        except json.JSONDecodeError:
            config[key] = value
    return config
