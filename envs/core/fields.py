"""Saved states declared once: field specs that load, validate and save a state.

Every game describes the JSON form of its state as a :class:`Record` of named fields, each with its
type, its range or size and its nesting. From that one declaration follow

* saving: :meth:`Record.dump` reads the state's attributes and writes plain JSON values;
* loading: :meth:`Record.load` checks a JSON-like dict field by field and returns the Python values
  (never trusting anything: ``True`` is not an integer, ``"no"`` is not a boolean, a list longer than
  declared is refused before a single item is read), raising :class:`StateError` naming the field,
  e.g. ``state.hands[1][3]: expected an integer in [0, 51], got -1``.

A game's own invariants (cards conserved, positions possible, winner consistent) are checked after
the fields load, by ``State.check_invariants``; see :meth:`envs.core.game.Game.load_state`.

Declaring a field::

    Record(
        Field("player", Int(0, n - 1)),                       # an integer in a range
        Field("winner", Optional(Int(0, teams - 1))),          # None or an integer
        Field("hands", List(List(Int(0, 51), max_len=104), size=n)),
        Field("stage", Choice(PHASE_NAMES, index=True)),        # saved as a name, held as its index
        Field("strength_tenths", List(Int(1, MAX)), attr="strength"),  # attribute named differently
        Field("rng", Rng()),
    )

Types: :class:`Int`, :class:`Bool`, :class:`Choice`, :class:`Str`, :class:`Optional`, :class:`List`,
:class:`Tuple`, :class:`Tagged` (a list whose first item names its shape), :class:`BitSet` (a hex
string), :class:`Record` (a dict with fixed keys), :class:`Rng` and :class:`Convert` (a declared JSON
shape plus a conversion to and from the attribute's own form).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from envs.core.errors import StateError

#: Default upper bound of counters that only grow (actions, turns, rounds): far above any real game,
#: small enough that arithmetic and normalised observations stay sane.
MAX_COUNT = 10**9


def show(value: Any) -> str:
    """A short description of a value for error messages (never the repr of a huge list)."""
    if isinstance(value, (list, tuple, dict, str, bytes)) and len(value) > 12:
        return f"a {type(value).__name__} of length {len(value)}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Spec:
    """The shape of one JSON value. ``load`` validates and converts; ``dump`` writes JSON."""

    def load(self, value: Any, where: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def dump(self, value: Any) -> Any:
        return value

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def fail(self, value: Any, where: str, why: str = "") -> StateError:
        extra = f" ({why})" if why else ""
        return StateError(f"{where}: expected {self.describe()}, got {show(value)}{extra}")


class Int(Spec):
    """An integer (Python or numpy, never a bool) in ``[lo, hi]``."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = int(lo), int(hi)

    def describe(self) -> str:
        return f"an integer in [{self.lo}, {self.hi}]"

    def load(self, value: Any, where: str) -> int:
        if type(value) is not int:
            if isinstance(value, bool) or not isinstance(value, np.integer):
                raise self.fail(value, where)
            value = int(value)
        if not self.lo <= value <= self.hi:
            raise self.fail(value, where)
        return value


class Bool(Spec):
    """``True`` or ``False`` (not 0/1, not ``"no"``, not numpy booleans)."""

    def describe(self) -> str:
        return "true or false"

    def load(self, value: Any, where: str) -> bool:
        if value is not True and value is not False:
            raise self.fail(value, where)
        return value


class Str(Spec):
    """A string of ``min_len`` to ``max_len`` characters, optionally made only of ``alphabet``."""

    __slots__ = ("alphabet", "max_len", "min_len")

    def __init__(self, max_len: int, alphabet: str | None = None, min_len: int = 0) -> None:
        self.min_len, self.max_len, self.alphabet = min_len, max_len, alphabet

    def describe(self) -> str:
        chars = f" of the characters {self.alphabet!r}" if self.alphabet else ""
        n = str(self.max_len) if self.min_len == self.max_len else f"{self.min_len} to {self.max_len}"
        return f"a string of {n} characters{chars}"

    def load(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not self.min_len <= len(value) <= self.max_len:
            raise self.fail(value, where)
        if self.alphabet is not None and not set(value) <= set(self.alphabet):
            raise self.fail(value, where)
        return value


class Choice(Spec):
    """One of a fixed set of values (strings or ints). With ``index=True`` the JSON holds the value
    and the attribute holds its position in ``options``."""

    __slots__ = ("_lookup", "index", "options")

    def __init__(self, options: Sequence[Any], index: bool = False) -> None:
        self.options = tuple(options)
        self.index = index
        self._lookup = {(type(o), o): i for i, o in enumerate(self.options)}

    def describe(self) -> str:
        return f"one of {list(self.options)}"

    def load(self, value: Any, where: str) -> Any:
        try:
            i = self._lookup.get((type(value), value))
        except TypeError:  # unhashable
            i = None
        if i is None:
            raise self.fail(value, where)
        return i if self.index else value

    def dump(self, value: Any) -> Any:
        return self.options[value] if self.index else value


class Optional(Spec):
    """``None`` (JSON null) or a value of ``inner``."""

    __slots__ = ("inner",)

    def __init__(self, inner: Spec) -> None:
        self.inner = inner

    def describe(self) -> str:
        return f"null or {self.inner.describe()}"

    def load(self, value: Any, where: str) -> Any:
        return None if value is None else self.inner.load(value, where)

    def dump(self, value: Any) -> Any:
        return None if value is None else self.inner.dump(value)


_SCALARS = (Int, Bool, Str, Choice)


class List(Spec):
    """A list of ``item`` values: exactly ``size`` long, or between ``min_len`` and ``max_len``.
    The length is checked before any item is read, so a huge list is refused at once."""

    __slots__ = ("_plain", "item", "max_len", "min_len")

    def __init__(self, item: Spec, size: int | None = None, min_len: int = 0, max_len: int | None = None) -> None:
        if size is not None:
            min_len = max_len = size
        if max_len is None:
            raise ValueError("a List needs a size or a max_len: every saved list is bounded")
        self.item, self.min_len, self.max_len = item, int(min_len), int(max_len)
        self._plain = isinstance(item, _SCALARS) and not (isinstance(item, Choice) and item.index)

    def describe(self) -> str:
        n = str(self.min_len) if self.min_len == self.max_len else f"{self.min_len} to {self.max_len}"
        return f"a list of {n} items, each {self.item.describe()}"

    def load(self, value: Any, where: str) -> list:
        if not isinstance(value, (list, tuple)):
            raise self.fail(value, where)
        if not self.min_len <= len(value) <= self.max_len:
            raise self.fail(value, where, "" if len(value) > 12 else f"length {len(value)}")
        load = self.item.load
        return [load(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def dump(self, value: Any) -> list:
        if self._plain:
            return list(value)
        dump = self.item.dump
        return [dump(v) for v in value]


class Tuple(Spec):
    """A list of fixed length whose items have their own shapes (loaded as a Python list)."""

    __slots__ = ("items",)

    def __init__(self, *items: Spec) -> None:
        self.items = items

    def describe(self) -> str:
        return "a list [" + ", ".join(i.describe() for i in self.items) + "]"

    def load(self, value: Any, where: str) -> list:
        if not isinstance(value, (list, tuple)) or len(value) != len(self.items):
            raise self.fail(value, where)
        return [spec.load(v, f"{where}[{i}]") for i, (spec, v) in enumerate(zip(self.items, value))]

    def dump(self, value: Any) -> list:
        return [spec.dump(v) for spec, v in zip(self.items, value)]


class Tagged(Spec):
    """A list whose first item is a tag naming the shape of the rest: ``{"tag": Tuple(...)}``,
    where the Tuple describes the items after the tag."""

    __slots__ = ("cases",)

    def __init__(self, cases: dict[str, Tuple]) -> None:
        self.cases = cases

    def describe(self) -> str:
        return " or ".join(f"[{tag!r}, ...{len(t.items)} item(s)]" for tag, t in self.cases.items())

    def load(self, value: Any, where: str) -> list:
        if not isinstance(value, (list, tuple)) or not value or not isinstance(value[0], str) \
                or value[0] not in self.cases:
            raise self.fail(value, where)
        return [value[0], *self.cases[value[0]].load(list(value[1:]), where)]

    def dump(self, value: Any) -> list:
        return [value[0], *self.cases[value[0]].dump(value[1:])]


class BitSet(Spec):
    """A set of small integers held as an int bit set, saved as a hex string (``"0x1a"``)."""

    __slots__ = ("bits",)

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def describe(self) -> str:
        return f"a hex string ('0x...') of a bit set of {self.bits} bits"

    def load(self, value: Any, where: str) -> int:
        if not isinstance(value, str) or not value.startswith("0x") or len(value) > 2 + (self.bits + 3) // 4:
            raise self.fail(value, where)
        try:
            out = int(value, 16)
        except ValueError:
            raise self.fail(value, where) from None
        if not 0 <= out < 1 << self.bits:
            raise self.fail(value, where)
        return out

    def dump(self, value: int) -> str:
        return hex(value)


class Rng(Spec):
    """The complete state of a :class:`random.Random` (``rng_to_json``): ``[3, 625 words, gauss]``."""

    def describe(self) -> str:
        return "a saved random generator [3, [624 words in [0, 2**32) and a position in [0, 624]], null]"

    def fail(self, value: Any, where: str, why: str = "") -> StateError:
        return StateError(f"{where}: corrupt RNG state: {why or 'not ' + self.describe()}, got {show(value)}")

    def load(self, value: Any, where: str) -> random.Random:
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            raise self.fail(value, where)
        version, words, gauss = value
        if type(version) is not int or version != 3:
            raise self.fail(value, where, "version must be 3")
        if not isinstance(words, (list, tuple)) or len(words) != 625:
            raise self.fail(words, f"{where}[1]", "expected 625 state words")
        for i, w in enumerate(words):
            if type(w) is not int or not 0 <= w < 1 << 32:
                raise self.fail(w, f"{where}[1][{i}]", "state words are integers in [0, 2**32)")
        if not words[624] <= 624:
            raise self.fail(words[624], f"{where}[1][624]", "the position word is in [0, 624]")
        if not any(words[:624]):
            raise self.fail(words, f"{where}[1]", "an all-zero generator state")
        if gauss is not None and (type(gauss) is not float or not np.isfinite(gauss)):
            raise self.fail(gauss, f"{where}[2]", "null or a finite float")
        rng = random.Random()
        rng.setstate((version, tuple(words), gauss))
        return rng

    def dump(self, value: random.Random) -> list:
        version, internal, gauss = value.getstate()
        return [version, list(internal), gauss]


class Convert(Spec):
    """A declared JSON shape plus conversions: ``to_attr`` turns the loaded JSON value into the
    attribute's form (it may raise StateError), ``to_json`` turns the attribute back."""

    __slots__ = ("inner", "to_attr", "to_json")

    def __init__(self, inner: Spec, to_attr: Callable[[Any, str], Any], to_json: Callable[[Any], Any]) -> None:
        self.inner, self.to_attr, self.to_json = inner, to_attr, to_json

    def describe(self) -> str:
        return self.inner.describe()

    def load(self, value: Any, where: str) -> Any:
        return self.to_attr(self.inner.load(value, where), where)

    def dump(self, value: Any) -> Any:
        return self.inner.dump(self.to_json(value))


class Field:
    """One named entry of a :class:`Record`, held in attribute ``attr`` (default: the name)."""

    __slots__ = ("attr", "doc", "name", "spec")

    def __init__(self, name: str, spec: Spec, attr: str | None = None, doc: str = "") -> None:
        self.name, self.spec, self.attr, self.doc = name, spec, attr or name, doc


class Record(Spec):
    """A dict with exactly the declared keys (nothing missing, nothing unknown)."""

    __slots__ = ("fields", "names")

    def __init__(self, *fields: Field) -> None:
        self.fields = fields
        self.names = tuple(f.name for f in fields)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"a Record declares a field twice: {self.names}")

    def describe(self) -> str:
        return f"a dict with the keys {list(self.names)}"

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def load(self, value: Any, where: str = "state") -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(value, where)
        missing = [k for k in self.names if k not in value]
        if missing:
            raise StateError(f"{where} is missing the field(s) {missing}")
        if len(value) != len(self.names):
            unknown = sorted(map(str, set(value) - set(self.names)))[:10]
            raise StateError(f"{where} has unknown field(s) {unknown}; its fields are {list(self.names)}")
        return {f.name: f.spec.load(value[f.name], f"{where}.{f.name}") for f in self.fields}

    def dump(self, value: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
        """JSON of ``value``: a dict keyed by field name, or an object read by attribute; the
        fields named in ``skip`` are left out (a player's view leaves out the secret ones)."""
        fields = [f for f in self.fields if f.name not in skip] if skip else self.fields
        if isinstance(value, dict):
            return {f.name: f.spec.dump(value[f.name]) for f in fields}
        return {f.name: f.spec.dump(getattr(value, f.attr)) for f in fields}

    def table(self) -> str:
        """The declaration as a Markdown table (for docs)."""
        rows = ["| field | shape |", "|---|---|"]
        rows += [f"| `{f.name}` | {f.spec.describe()} |" for f in self.fields]
        return "\n".join(rows)
