"""Many tables of one game stepped in one call: the public batched API.

>>> import envs.vector
>>> tables = envs.vector.make("sequence_v0", 64, seed=0, num_teams=3)
>>> obs, infos = tables.reset()                    # obs["observation"] (64, 710), obs["action_mask"] (64, 349)
>>> actions = tables.sample_legal(np.random.default_rng(0))   # or any (64,) array of legal actions
>>> obs, rewards, terminations, truncations, infos = tables.step(actions)

The contract (backends are written against it; ``envs/sequence/vector.py`` is one)
----------------------------------------------------------------------------------
``make(name, num_envs, *, seed=None, backend="auto", max_cycles=None, max_steps=None, autoreset=True, copy=True,
**config) -> VectorTables``

:class:`VectorTables` has ``game`` (the configured :class:`~envs.core.game.Game`), ``num_envs``,
``num_seats``, ``backend`` (its name), ``max_cycles`` and ``single_observation_space`` /
``single_action_space`` (the per-seat PettingZoo spaces of ``raw_env``).

* ``reset(seed=None) -> (obs, infos)``: ``obs = {"observation": float32 (N, *obs_shape),
  "action_mask": int8 (N, A)}`` for the seat to act at each table; ``infos = {"current_seat": int64 (N,)}``.
* ``step(actions) -> (obs, rewards, terminations, truncations, infos)``: ``actions`` an integer array
  (N,); each table plays its action for its seat to act (an illegal action raises
  :class:`~envs.core.errors.IllegalActionError` naming the table, before any table moves). ``rewards``
  float32 (N, seats), ``terminations`` / ``truncations`` bool (N,). A finished table starts its next
  game at once (same-step autoreset), so ``obs`` of that table is the new game's first position;
  ``infos``: ``"current_seat"`` (N,) for the returned obs, ``"final_returns"`` float32 (N, seats)
  (zeros where nothing ended), ``"_final_returns"`` bool (N,) (where a game ended) and
  ``"episode_length"`` int64 (N,) (actions in the game that ended; 0 where none ended).
* Truncation follows the environment's cap: ``max_cycles`` x seats actions (the game's
  ``default_max_cycles`` when not given), as ``raw_env`` does; truncated seats get
  ``State.truncation_returns()``. ``max_steps`` sets the cap in actions instead (it need not be whole
  cycles: the trainers' ``--max-actions``).
* Seeding: game ``k`` (0, 1, 2, ...) of table ``i`` is dealt from :meth:`VectorTables.table_seed`
  ``(i, k)``, a function of the batch seed, ``i`` and ``k`` only (``make(seed=...)`` or
  ``reset(seed=...)`` sets the batch seed and restarts the game counts; ``reset()`` without a seed deals
  every table its next game).
* ``step(actions, active=mask)``: only the tables where the bool (N,) ``active`` is True move (the others'
  actions are ignored and not checked; their rewards and ends are zero), for callers that play some
  tables' seats themselves (``training.vector_env``'s opponents). A backend that cannot step a subset
  (:attr:`Backend.steps_subsets` False) refuses it.
* ``autoreset=False``: a table whose game ended waits (``awaiting_deal[i]`` True; its observation and mask
  hold anything) until the caller deals it with ``deal(rows, seeds=None)``: game ``seeds[j]`` at table
  ``rows[j]`` exactly as ``Game.new_initial_state(seed)``, or without ``seeds`` each table's next game
  from :meth:`VectorTables.table_seed`. Before the first deal every table waits. ``deal`` works with
  autoreset too (a table's game in progress is replaced). Stepping a waiting table is refused.
* ``observe() -> obs``: the current stacked observations, no stepping.
* ``copy``: with True (the default) every observation, mask and ``current_seat`` handed out is a fresh
  array; with False they are the backend's buffers themselves, overwritten by the next ``step`` or
  ``reset`` (no copy per step: for callers that consume them at once).
* ``player_view(i) -> dict``: what the seat to act at table ``i`` may know (``State.player_view``), for
  agents that read views.
* ``save_state(i) -> dict``: ``Game.save(state)`` of table ``i`` plus the environment's part
  ``"env": {"steps", "max_cycles"}`` exactly as ``raw_env().save_state()`` writes it, so
  ``Game.load`` and ``raw_env().reset(options={"state": data})`` continue it.
  ``load_state(i, data)``: validated by ``Game.load``; an ``"env"`` part's step count carries over
  (0 without one); table ``i`` continues from it. A finished game is refused.

Backend (one per implementation, registered per game in :data:`BACKENDS`)
  ``__init__(game, num_envs, *, max_cycles=None, max_steps=None)`` (``max_steps``, where given, is the cap
  in actions); ``reset_tables(rows, seeds)`` deals a fresh game at
  each row from its seed exactly as ``Game.new_initial_state(seed)``; ``step(actions) -> (rewards,
  terminations, truncations)`` for actions already checked legal (a backend may check again), and
  ``step(actions, active)`` where it can step a subset (it says so in its class attribute
  ``steps_subsets = True``; both backends here can); buffers
  ``observation`` / ``action_mask`` / ``current_seat`` written in place (rows of tables that just ended
  hold anything until they are dealt again); ``save_state(i)`` / ``load_state(i, data)`` as above.
  :class:`VectorTables` owns seeding, the autoreset and the infos.

Why the contract is shaped so: backends take ``max_cycles`` because they need the cap for truncation
and for observations that show the time left; ``save_state`` carries the ``"env"`` part of
``raw_env``'s save so that a table's step count travels with it; ``player_view(i, seat)`` is optional
(:class:`Backend` builds it from ``save_state`` through the reference engine).
"""

from __future__ import annotations

import abc
import hashlib
import importlib
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

import envs
from envs.core.errors import ConfigError, IllegalActionError, StateError
from envs.core.fields import MAX_COUNT, show
from envs.core.game import Game, State
from envs.core.rng import make_rng

#: Backends by game: ``{game name: {backend name: "module:Class"}}``; "python" serves every game and is
#: not listed. Modules are imported only when a backend is asked for. ``backend="auto"`` takes the
#: first one listed for the game (the fastest measured), else "python".
BACKENDS: dict[str, dict[str, str]] = {
    "sequence_v0": {"numpy": "envs.sequence.vector:SequenceNumpyBackend"},
}


def available_backends(name: str) -> list[str]:
    """The backends ``make`` accepts for game ``name`` (fastest first; "python" always last)."""
    envs.game_class(name)  # a clear ValueError for an unknown game
    found = []
    for backend, target in BACKENDS.get(name, {}).items():
        if _load_backend(target, required=False) is not None:
            found.append(backend)
    return [*found, "python"]


def _load_backend(target: str, required: bool) -> type | None:
    module_name, _, cls_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if required or exc.name != module_name:
            raise
        return None
    return getattr(module, cls_name)


def _check_max_cycles(game: Game, max_cycles: Any) -> int:
    if max_cycles is None:
        return type(game).default_max_cycles
    if isinstance(max_cycles, (bool, np.bool_)) or not isinstance(max_cycles, (int, np.integer)) or max_cycles < 1:
        raise ConfigError(f"{game.name}: max_cycles={max_cycles!r} is not allowed; it must be an integer >= 1")
    return int(max_cycles)


class Backend(abc.ABC):
    """The tables of one backend: its state, and the buffers :class:`VectorTables` hands out."""

    #: The name ``make(backend=...)`` knows it by.
    name: ClassVar[str]
    #: Whether ``step(actions, active)`` steps only the tables where ``active`` is True.
    steps_subsets: ClassVar[bool] = False

    def __init__(self, game: Game, num_envs: int, *, max_cycles: int | None = None,
                 max_steps: int | None = None) -> None:
        self.game = game
        self.num_envs = num_envs
        self.max_cycles = _check_max_cycles(game, max_cycles)
        self.max_steps = self.max_cycles * game.num_players
        if max_steps is not None:  # a cap in actions that need not be whole cycles (the trainers' --max-actions)
            self.max_steps = _count(max_steps, f"{game.name}: max_steps", 1)
        self.observation = np.zeros((num_envs, *game.observation_shape), dtype=np.float32)
        self.action_mask = np.zeros((num_envs, game.num_actions), dtype=np.int8)
        self.current_seat = np.zeros(num_envs, dtype=np.int64)

    @abc.abstractmethod
    def reset_tables(self, rows: Any, seeds: Any) -> None:
        """Deal game ``seeds[j]`` at table ``rows[j]`` (as ``Game.new_initial_state(seed)``); buffers written."""

    @abc.abstractmethod
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions`` (legal, one per table); ``(rewards (N, seats), terminations, truncations)``."""

    @abc.abstractmethod
    def save_state(self, i: int) -> dict[str, Any]:
        """Table ``i`` as ``raw_env().save_state()`` writes it."""

    @abc.abstractmethod
    def load_state(self, i: int, data: Any) -> None:
        """Put a saved state (validated by ``Game.load``) at table ``i``; buffers written."""

    def player_view(self, i: int, seat: int) -> dict[str, Any]:
        """What ``seat`` may know at table ``i``; by default through the reference engine."""
        return self.game.load(self.save_state(i)).player_view(seat)

    def encode_state(self, i: int) -> np.ndarray:
        """The whole position at table ``i`` (``Game.encode_state``); by default through the reference engine."""
        return self.game.encode_state(self.game.load(self.save_state(i)))


class PythonBackend(Backend):
    """The reference engines, one :class:`~envs.core.game.State` per table, stepped in one loop."""

    name = "python"
    steps_subsets = True

    def __init__(self, game: Game, num_envs: int, *, max_cycles: int | None = None,
                 max_steps: int | None = None) -> None:
        super().__init__(game, num_envs, max_cycles=max_cycles, max_steps=max_steps)
        self.states: list[State | None] = [None] * num_envs
        #: actions played in each table's current game (a list: read and written once per table-step)
        self.steps: list[int] = [0] * num_envs

    def _write(self, i: int, state: State) -> None:
        seat = state.current_player()
        self.current_seat[i] = seat
        self.action_mask[i] = state.legal_mask()
        self.observation[i] = self.game.observe(state, seat)

    def reset_tables(self, rows: Any, seeds: Any) -> None:
        game, limit = self.game, self.max_steps
        for i, seed in zip(rows, seeds):
            state = game.new_initial_state(seed)
            state.set_step_limit(limit)
            self.states[i] = state
            self.steps[i] = 0
            self._write(i, state)

    def _step_rows(self, rows: list[int], actions: list[int]) -> list[int]:
        """Table ``rows[j]`` plays ``actions[j]`` (legal, not checked again); the buffers of the tables
        still playing are written. Returns the rows whose game ended, by the rules or the cap."""
        states, steps, limit = self.states, self.steps, self.max_steps
        observe, observation, action_mask, current_seat = (self.game.observe, self.observation, self.action_mask,
                                                           self.current_seat)
        ended = []
        for i, action in zip(rows, actions):
            state = states[i]
            state.apply_unchecked(action)
            steps[i] = count = steps[i] + 1
            if state.is_terminal() or count >= limit:
                ended.append(i)
            else:
                seat = state.current_player()
                current_seat[i] = seat
                action_mask[i] = state.legal_mask()
                observation[i] = observe(state, seat)
        return ended

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        rewards = np.zeros((n, self.game.num_players), dtype=np.float32)
        terminations = np.zeros(n, dtype=bool)
        truncations = np.zeros(n, dtype=bool)
        if active is None:
            ended = self._step_rows(range(n), actions.tolist())
        else:
            rows = np.flatnonzero(active)
            ended = self._step_rows(rows.tolist(), actions[rows].tolist())
        for i in ended:
            state = self.states[i]
            if state.is_terminal():
                terminations[i] = True
                rewards[i] = state.returns()
            else:
                truncations[i] = True
                rewards[i] = state.truncation_returns()
        return rewards, terminations, truncations

    def player_view(self, i: int, seat: int) -> dict[str, Any]:
        return self.states[i].player_view(seat)

    def encode_state(self, i: int) -> np.ndarray:
        return self.game.encode_state(self.states[i])

    def save_state(self, i: int) -> dict[str, Any]:
        data = self.game.save(self.states[i])
        data["env"] = {"steps": int(self.steps[i]), "max_cycles": self.max_cycles}
        return data

    def load_state(self, i: int, data: Any) -> None:
        state = self.game.load(data)
        state.set_step_limit(self.max_steps)
        self.states[i] = state
        self.steps[i] = saved_steps(data)
        self._write(i, state)


def illegal_action(tables: Backend, i: int, action: int) -> IllegalActionError:
    """The error for ``action`` at table ``i`` of ``tables`` (a backend): the table, the action and
    its seat, and the legal actions with their names (for callers that check a batch before moving it)."""
    game = tables.game
    allowed = np.flatnonzero(tables.action_mask[i]).tolist()
    shown = ", ".join(f"{x} ({game.action_to_string(x)})" for x in allowed[:12])
    more = f" and {len(allowed) - 12} more" if len(allowed) > 12 else ""
    return IllegalActionError(
        f"{game.name}: table {i}: action {action} ({game.action_to_string(action)}) is illegal for seat "
        f"{int(tables.current_seat[i])}; legal actions: {shown}{more} (no table moved)")


def saved_steps(data: dict[str, Any]) -> int:
    """The step count of a save's ``"env"`` part (0 without one); a StateError if it is not a count."""
    env_part = data.get("env", {"steps": 0})
    if not isinstance(env_part, dict):
        raise StateError(f"saved state's 'env' part must be a dict with 'steps' and 'max_cycles', got {show(env_part)}")
    steps = env_part.get("steps", 0)
    if type(steps) is not int or not 0 <= steps <= MAX_COUNT:
        raise StateError(f"saved state's env.steps must be an integer in [0, {MAX_COUNT}], got {show(steps)}")
    return steps


def _count(value: Any, what: str, lo: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ValueError(f"{what} must be an integer >= {lo}, got {value!r}")
    return int(value)


#: Masks of up to this many entries are sampled on a running count along each row (see
#: ``VectorTables.sample_legal``); measured faster below it, and above it the fresh temporaries make
#: the C heap grow and shrink every call.
_SMALL_MASK = 32_768


class VectorTables:
    """``num_envs`` tables of one configured game; see the module docstring for the contract."""

    def __init__(self, name: str, num_envs: int, *, seed: int | None = None, backend: str = "auto",
                 max_cycles: int | None = None, max_steps: int | None = None, autoreset: bool = True,
                 copy: bool = True, **config: Any) -> None:
        for flag, value in (("copy", copy), ("autoreset", autoreset)):
            if value is not True and value is not False:
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        self.copy = copy
        self.autoreset = autoreset
        game_cls = envs.game_class(name)
        num_envs = _count(num_envs, "num_envs", 1)
        self.game: Game = game_cls(**config)
        self.max_cycles = _check_max_cycles(self.game, max_cycles)
        choices = available_backends(name)
        if backend == "auto":
            backend = choices[0]
        if backend == "python":
            cls: type = PythonBackend
        elif backend in BACKENDS.get(name, {}):
            cls = _load_backend(BACKENDS[name][backend], required=True)
        else:
            raise ValueError(f"{name}: backend={backend!r} is not available; choose 'auto' or one of {choices}")
        self.backend: str = backend
        self.num_envs = num_envs
        self.num_seats = self.game.num_players
        cap = {} if max_steps is None else {"max_steps": max_steps}
        self._tables = cls(self.game, num_envs, max_cycles=self.max_cycles, **cap)
        #: The cap on actions per game (``max_cycles`` x seats, or ``max_steps`` where given).
        self.max_steps: int = self._tables.max_steps
        self._steps_subsets = bool(getattr(cls, "steps_subsets", False))
        game = self.game
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(low=game.observation_low, high=game.observation_high,
                                      shape=tuple(game.observation_shape), dtype=game.observation_dtype),
            "action_mask": spaces.Box(low=0, high=1, shape=(game.num_actions,), dtype=np.int8),
        })
        self.single_action_space = spaces.Discrete(game.num_actions)
        self._seed = self._check_seed(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**63)
        self._games = np.zeros(num_envs, dtype=np.int64)  # games dealt so far at each table
        self._lengths = np.zeros(num_envs, dtype=np.int64)  # actions in each table's current game
        #: without autoreset, the tables whose game ended (or that were never dealt), awaiting ``deal``
        self.awaiting_deal = np.ones(num_envs, dtype=bool)
        self._ready = not autoreset  # without autoreset the tables start empty, awaiting their deals
        self._sample_buffers: tuple[np.ndarray, np.ndarray] | None = None  # sample_legal: packed mask, bit ranks

    # ----------------------------------------------------------------------------------------------
    @staticmethod
    def _check_seed(seed: Any) -> int:
        make_rng(seed)  # the engines' rules for a seed: an integer >= 0
        return int(seed)

    def table_seed(self, table: int, game: int) -> int:
        """The seed game ``game`` (0, 1, ...) of table ``table`` is dealt from, under the batch seed."""
        # A hash of the three numbers (BLAKE2b, 64 bits, the top 63 kept): unrelated seeds for
        # neighbouring tables and games, the same on every platform, and ~1 µs where numpy's
        # SeedSequence took ~10 µs (a batch deals several games per step).
        key = f"{self._seed}:{int(table)}:{int(game)}".encode()
        return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") >> 1

    def _deal(self, rows: np.ndarray) -> None:
        rows = rows.tolist()
        self._tables.reset_tables(rows, [self.table_seed(i, self._games[i]) for i in rows])
        self._dealt(rows)

    def _dealt(self, rows: list[int]) -> None:
        self._games[rows] += 1
        self._lengths[rows] = 0
        self.awaiting_deal[rows] = False

    def deal(self, rows: Any, seeds: Any = None) -> None:
        """A new game at each table in ``rows``: game ``seeds[j]`` at ``rows[j]`` (exactly as
        ``Game.new_initial_state(seed)``), or without ``seeds`` each table's next game under the batch
        seed. For callers that deal games themselves (``autoreset=False``); a game in progress there is
        replaced."""
        rows = [self._row(i) for i in rows]
        if seeds is None:
            seeds = [self.table_seed(i, self._games[i]) for i in rows]
        else:
            seeds = [self._check_seed(s) for s in seeds]
            if len(seeds) != len(rows):
                raise ValueError(f"{self.game.name}: deal got {len(rows)} tables but {len(seeds)} seeds")
        self._tables.reset_tables(rows, seeds)
        self._dealt(rows)

    def reset(self, seed: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Deal every table a game: from ``seed`` (then game counts restart), or each table's next game."""
        if seed is not None:
            self._seed = self._check_seed(seed)
            self._games[:] = 0
        self._deal(np.arange(self.num_envs))
        self._ready = True
        return self.observe(), {"current_seat": self._seats()}

    def observe(self) -> dict[str, np.ndarray]:
        """The current stacked observations and masks of the seat to act at each table (copies unless
        the batch was made with ``copy=False``)."""
        self._need_reset("observe")
        tables = self._tables
        if self.copy:
            return {"observation": tables.observation.copy(), "action_mask": tables.action_mask.copy()}
        return {"observation": tables.observation, "action_mask": tables.action_mask}

    def _seats(self) -> np.ndarray:
        return self._tables.current_seat.copy() if self.copy else self._tables.current_seat

    @property
    def current_seat(self) -> np.ndarray:
        """The seat to act at each table (a copy)."""
        self._need_reset("current_seat")
        return self._tables.current_seat.copy()

    def step(self, actions: Any, active: Any = None) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                                               np.ndarray, dict[str, Any]]:
        """Each table (each where ``active`` is True, if given) plays its action for its seat to act;
        finished tables are dealt their next game at once. See the module docstring for the returns."""
        self._need_reset("step")
        if active is None:
            if self.awaiting_deal.any():
                self._refuse_waiting(self.awaiting_deal)
            actions = self._check_actions(actions)
            rewards, terminations, truncations = self._tables.step(actions)
            self._lengths += 1
        else:
            active = np.asarray(active)
            if active.shape != (self.num_envs,) or active.dtype != bool:
                raise ValueError(f"{self.game.name}: active must be a bool array of shape ({self.num_envs},), "
                                 f"got shape {active.shape} of dtype {active.dtype}")
            if not self._steps_subsets:
                raise ValueError(f"{self.game.name}: the {self.backend} backend cannot step a subset of its tables "
                                 f"(it does not declare steps_subsets); use backend='python'")
            if (active & self.awaiting_deal).any():
                self._refuse_waiting(active & self.awaiting_deal)
            actions = self._check_actions(actions, active)
            rewards, terminations, truncations = self._tables.step(actions, active)
            self._lengths += active
        ended = terminations | truncations
        final = np.zeros_like(rewards)
        lengths = np.zeros(self.num_envs, dtype=np.int64)
        if ended.any():
            final[ended] = rewards[ended]
            lengths[ended] = self._lengths[ended]
            if self.autoreset:
                self._deal(np.flatnonzero(ended))
            else:
                self.awaiting_deal |= ended
        infos = {"current_seat": self._seats(), "final_returns": final,
                 "_final_returns": ended, "episode_length": lengths}
        return self.observe(), rewards, terminations, truncations, infos

    def _refuse_waiting(self, waiting: np.ndarray) -> None:
        i = int(np.flatnonzero(waiting)[0])
        raise RuntimeError(f"{self.game.name}: table {i} has no game in progress (autoreset is off); deal it a "
                           f"game with deal() before stepping it")

    def _check_actions(self, actions: Any, active: np.ndarray | None = None) -> np.ndarray:
        """``actions`` as int64, each legal where it is played (every table, or where ``active``)."""
        a = np.asarray(actions)
        n, num_actions, name = self.num_envs, self.game.num_actions, self.game.name
        if a.shape != (n,) or a.dtype.kind not in "iu":
            raise IllegalActionError(f"{name}: step needs one integer action per table, an array of shape ({n},); "
                                     f"got shape {a.shape} of dtype {a.dtype}")
        if active is not None:
            a = np.where(active, a, 0)  # the tables that do not move: their actions are ignored
        outside = (a < 0) | (a >= num_actions)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise IllegalActionError(f"{name}: table {i}: action {int(a[i])} is outside [0, {num_actions})")
        a = a.astype(np.int64, copy=False)
        legal = self._tables.action_mask[np.arange(n), a] != 0
        if active is not None:
            legal |= ~active
        if not legal.all():
            i = int(np.flatnonzero(~legal)[0])
            raise illegal_action(self._tables, i, int(a[i]))
        return a

    def player_view(self, i: int) -> dict[str, Any]:
        """What the seat to act at table ``i`` may know (the agents' ``view`` argument)."""
        self._need_reset("player_view")
        i = self._in_play(i)
        seat = int(self._tables.current_seat[i])
        if isinstance(self._tables, Backend):
            return self._tables.player_view(i, seat)
        return self.game.load(self._tables.save_state(i)).player_view(seat)  # a backend on the contract alone

    def encode_state(self, rows: Any) -> np.ndarray:
        """The whole position at each table of ``rows`` (``Game.encode_state``: hidden information
        included, for a centralised critic, never for a seat's policy), stacked float32 ``(len(rows),
        *game.state_shape)``. The reference engines encode their states directly; another backend goes
        through a save and a load per table (correct, and much slower)."""
        self._need_reset("encode_state")
        out = np.empty((len(rows), *self.game.state_shape), dtype=np.float32)
        for j, i in enumerate(rows):
            i = self._in_play(i)
            if isinstance(self._tables, Backend):
                out[j] = self._tables.encode_state(i)
            else:
                out[j] = self.game.encode_state(self.game.load(self._tables.save_state(i)))
        return out

    def sample_legal(self, rng: np.random.Generator) -> np.ndarray:
        """One uniformly random legal action per table (for random play and benchmarks).

        One random number per table: table ``i`` with ``k`` legal actions takes its ``floor(u * k)``-th
        legal action, in the mask's order (``u`` uniform in [0, 1); a table with no legal action gets 0).
        The mask is packed into bits (64 actions to a word); the word holding that action is found on
        the running count of the words' set bits, then its byte in the word the same way, then the bit
        (from a table of each byte value's set bits). The same draws as a running count along each row
        of the mask, at about a third of its cost at N = 1024 (which was 3x cheaper than noise over
        the whole mask). Small masks (up to ``_SMALL_MASK`` entries) take that running count itself:
        with its few operations it costs a fifth as much there (5 µs instead of 25 at N = 1)."""
        self._need_reset("sample_legal")
        mask = self._tables.action_mask  # int8 0 or 1 (the contract), so it reads as bool
        n, num_actions = mask.shape
        if mask.size <= _SMALL_MASK:
            running = np.cumsum(mask, axis=1, dtype=np.int32)  # 0 or 1 entries: the running count
            nth = (rng.random(n) * running[:, -1]).astype(np.int32)
            return np.argmax(running > nth[:, None], axis=1)
        num_bytes = -(-num_actions // 8)
        num_words = -(-num_bytes // 8)
        if self._sample_buffers is None:
            # Kept between calls: each table's bits, padded to whole words (the padding stays zero),
            # and rank_bits[v, r], the place of the r-th lowest set bit of the byte v.
            packed = np.zeros((n, 8 * num_words), dtype=np.uint8)
            bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
            value, place = np.nonzero(bits)
            rank_bits = np.zeros((256, 8), dtype=np.intp)
            rank_bits[value, np.cumsum(bits, axis=1)[value, place] - 1] = place
            self._sample_buffers = (packed, rank_bits)
        packed, rank_bits = self._sample_buffers
        packed[:, :num_bytes] = np.packbits(mask.view(np.bool_), axis=1, bitorder="little")
        # Bit b of word w of a table is its action 64 w + b. Words and bytes are laid out (position,
        # table), so the running counts add whole rows of N, one row after another (numpy's cumsum
        # would run along each table's few entries, at several times the cost).
        rows = np.arange(n)
        popcount = getattr(np, "bitwise_count", None) or (  # numpy < 2 has no bitwise_count
            lambda a: np.unpackbits(a.view(np.uint8).reshape(*a.shape, -1), axis=-1).sum(axis=-1))
        words = np.ascontiguousarray(packed.view("<u8").T)  # (num_words, N)
        in_word = popcount(words).astype(np.int32)
        before = in_word.copy()  # legal actions up to the end of each word
        for w in range(1, num_words):
            before[w] += before[w - 1]
        count = before[-1]
        nth = (rng.random(n) * count).astype(np.int32)
        word = np.minimum((before <= nth).sum(axis=0), num_words - 1)  # words wholly before the nth
        at = word * n + rows
        nth -= before.reshape(-1)[at] - in_word.reshape(-1)[at]  # now the rank within its word
        # The same search within the word, by bytes (little-endian: byte j holds bits 8 j .. 8 j + 7).
        chosen = np.ascontiguousarray(words.reshape(-1)[at].view(np.uint8).reshape(n, 8).T)  # (8, N)
        in_byte = popcount(chosen).astype(np.int32)
        before = in_byte.copy()
        for b in range(1, 8):
            before[b] += before[b - 1]
        byte = np.minimum((before <= nth).sum(axis=0), 7)
        at = byte * n + rows
        nth -= before.reshape(-1)[at] - in_byte.reshape(-1)[at]
        bit = rank_bits.reshape(-1)[chosen.reshape(-1)[at].astype(np.intp) * 8 + nth]
        return np.where(count > 0, 64 * word + 8 * byte + bit, 0)

    # ----------------------------------------------------------------------------------------------
    def _row(self, i: Any) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise IndexError(f"{self.game.name}: table index must be an integer in [0, {self.num_envs}), got {i!r}")
        return int(i)

    def save_state(self, i: int) -> dict[str, Any]:
        """Table ``i`` as ``raw_env().save_state()`` writes it (``Game.save`` plus the ``"env"`` part)."""
        self._need_reset("save_state")
        return self._tables.save_state(self._in_play(i))

    def load_state(self, i: int, data: Any) -> None:
        """Table ``i`` continues from ``data`` (validated by ``Game.load``; a finished game is refused)."""
        self._need_reset("load_state")
        i = self._row(i)
        state = self.game.load(data)  # every check, with the engine's messages
        if state.is_terminal():
            raise StateError(f"{self.game.name}: table {i} cannot continue a finished game; load a game that goes on")
        steps = saved_steps(data)
        if steps >= self._tables.max_steps:
            raise StateError(f"{self.game.name}: table {i} cannot take a game saved after {steps} actions: this "
                             f"batch truncates games at {self._tables.max_steps} (max_cycles={self.max_cycles})")
        self._tables.load_state(i, data)
        self._lengths[i] = steps
        self.awaiting_deal[i] = False

    def _in_play(self, i: Any) -> int:
        i = self._row(i)
        if self.awaiting_deal[i]:
            self._refuse_waiting(np.arange(self.num_envs) == i)
        return i

    def _need_reset(self, what: str) -> None:
        if not self._ready:
            raise RuntimeError(f"{self.game.name}: call reset() before {what}()")

    def __repr__(self) -> str:
        return (f"VectorTables({self.game!r}, num_envs={self.num_envs}, backend={self.backend!r}, "
                f"max_cycles={self.max_cycles})")


def make(name: str, num_envs: int, *, seed: int | None = None, backend: str = "auto",
         max_cycles: int | None = None, max_steps: int | None = None, autoreset: bool = True, copy: bool = True,
         **config: Any) -> VectorTables:
    """``num_envs`` tables of game ``name`` configured by ``config``; see the module docstring."""
    return VectorTables(name, num_envs, seed=seed, backend=backend, max_cycles=max_cycles, max_steps=max_steps,
                        autoreset=autoreset, copy=copy, **config)


__all__ = ["BACKENDS", "Backend", "PythonBackend", "VectorTables", "available_backends", "illegal_action", "make",
           "saved_steps"]
