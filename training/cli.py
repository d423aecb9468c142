"""Command lines from a CleanRL-style ``Args`` dataclass: one ``--flag`` per field, its meaning and default."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any


def dataclass_parser(cls: type, helps: dict[str, str], **parser_kwargs: Any) -> argparse.ArgumentParser:
    """A parser with one option per field of ``cls``; its help is ``helps[field]`` and the default.

    Booleans become ``--x/--no-x``, lists take one or more values of their default's element type;
    parse with ``cls(**vars(parser.parse_args(argv)))``.
    """
    parser = argparse.ArgumentParser(formatter_class=argparse.RawDescriptionHelpFormatter, **parser_kwargs)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        text = helps[f.name] + " (default: %(default)r)"
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=text)
        elif isinstance(default, list):
            kind = type(default[0]) if default else str
            parser.add_argument(flag, nargs="+", type=kind, default=default, help=text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=text)
    return parser
