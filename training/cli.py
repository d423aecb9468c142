"""Command lines from a CleanRL-style ``Args`` dataclass: one ``--flag`` per field, its meaning and default."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import typing
from typing import Any


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of ``cls`` and of the dataclasses it is built on (the CleanRL
    convention), by field name; a subclass's docstring for a field replaces its base's. A docstring that
    runs over several lines is joined into one line, whole."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            docs.update(_own_field_docs(klass))
    return docs


def _own_field_docs(cls: type) -> dict[str, str]:
    lines = inspect.getsource(cls).splitlines()
    docs = {}
    for i, (line, following) in enumerate(zip(lines, lines[1:])):
        name = line.strip().split(":", 1)[0]
        text = following.strip()
        if ":" not in line or not text.startswith('"""') or not name.isidentifier():
            continue
        text = text[3:]
        parts = []
        j = i + 1
        while not text.endswith('"""'):  # the docstring goes on below
            parts.append(text)
            j += 1
            text = lines[j].strip()
        parts.append(text[:-3])
        docs[name] = " ".join(p for p in parts if p)
    return docs


def dataclass_parser(cls: type, helps: dict[str, str] | None = None, *, list_nargs: str = "+",
                     **parser_kwargs: Any) -> argparse.ArgumentParser:
    """A parser with one option per field of ``cls``; its help is ``helps[field]`` (by default the
    field's docstring) and the default.

    Booleans become ``--x/--no-x``, lists take ``list_nargs`` values of their annotated element type;
    parse with ``cls(**vars(parser.parse_args(argv)))``.
    """
    helps = field_docs(cls) if helps is None else helps
    hints = typing.get_type_hints(cls)
    parser = argparse.ArgumentParser(formatter_class=argparse.RawDescriptionHelpFormatter, **parser_kwargs)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        text = helps.get(f.name, f.name.replace("_", " ")) + " (default: %(default)r)"
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=text)
        elif isinstance(default, list):
            item = typing.get_args(hints.get(f.name))  # list[float] -> (float,)
            kind = item[0] if item and isinstance(item[0], type) else type(default[0]) if default else str
            parser.add_argument(flag, nargs=list_nargs, type=kind, default=default, help=text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=text)
    return parser
