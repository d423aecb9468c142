"""The games in OpenSpiel: ``import envs.openspiel`` registers each one as ``python_tabletop_<env name>``.

>>> import pyspiel, envs.openspiel
>>> game = pyspiel.load_game("python_tabletop_sequence_v0", {"num_teams": 3, "seed": 7})
>>> state = game.new_initial_state()
>>> state.apply_action(state.legal_actions()[0])

Needs the ``openspiel`` extra (``pip install "tabletop-rl[openspiel]"``); without it, importing this
module raises an ImportError that says so. The rest of the package never imports it.

What OpenSpiel sees
-------------------
=========================  ======================================================================
Short name                 ``python_tabletop_<env name>`` (:func:`short_name`), one per game in ``envs.NAMES``
Dynamics                   sequential: one seat acts at a time (a seat deciding out of turn is simply
                           the current player)
Chance                     ``SAMPLED_STOCHASTIC``: the engine draws shuffles, dice and maps itself,
                           inside ``apply_action``; there are no chance nodes
Information                imperfect (hands, deck order and the dice to come are hidden)
Utility                    zero-sum where the config makes every game's returns sum to zero
                           (``Game.zero_sum``: Sequence with two teams, the other games), general-sum
                           otherwise (Sequence with three teams)
Rewards                    terminal: the engine's returns once the game ends, or its truncation returns
                           (zeros) at the step limit
Game length                at most ``max_cycles x num_players`` actions, counted here as ``env()`` counts them
Observation string         the seat's ``player_view``, as canonical JSON (sorted keys)
Observation tensor         the seat's observation from the environment (``Game.observe``), one tensor
                           named ``"observation"``
Information state          the same string and tensor (see below)
=========================  ======================================================================

Parameters
----------
Every config keyword of the game is a game parameter, with the game's own default, plus two:

* ``max_cycles`` (int, the environment's default): the step limit is ``max_cycles x num_players``
  actions, as in ``env(max_cycles=...)``; a state at the limit is terminal.
* ``seed`` (int, default -1): the stream the games are dealt from. The games this game object deals
  draw their seeds in turn from ``random.Random(seed)``, so one seed makes a whole run reproducible;
  -1 draws every game's seed from the operating system.

OpenSpiel holds a parameter as one scalar (bool, int, float or string) and never as None. A keyword
whose default is None or a list is therefore a **string** parameter read like a ``KEY=VALUE`` on this
project's command lines: JSON if the text parses as JSON, else the plain text. These are Sequence's
``sequences_to_win`` (``"null"``, the default, or e.g. ``"1"``), Dojo's ``board_file`` (``"null"``
or a path) and Pan's Trial's ``trump_order`` (a JSON list such as
``'["weapons", "ballista", "traps", "walls"]'``). OpenSpiel's integers are 32-bit, so Sequence's
``layout_seed`` takes values below 2**31 here. A float keyword takes a float (``0.15``, not ``1``).

Information state, clones, saves
--------------------------------
* The information-state string and tensor are the seat's view and observation: everything the seat
  knows now, which is what the rules let it act on. They are not the perfect-recall history of
  observations that OpenSpiel's tabular solvers (CFR, exploitability) assume; and those also need
  explicit chance nodes, which these games do not expose. Search and reinforcement learning work as
  they are.
* A clone goes through the engine's ``clone()`` (OpenSpiel's generic copy of a Python state would
  copy every attribute deeply). A clone shares the original's random generator's state, so it
  deals the same future; :func:`resample` draws a position consistent with one seat's view, with a
  fresh future (the resampler of OpenSpiel's ``ISMCTSBot``: see :func:`ismcts_bot`).
* ``state.serialize()`` gives the engine's validated JSON save (and the step count), and
  ``game.deserialize_state(text)`` loads it, checking every field; the loaded state's OpenSpiel
  ``history()`` starts empty (the save holds the position, not the moves). OpenSpiel's own route
  for Python states, ``pyspiel.serialize_game_and_state``, pickles the state's attributes; it is
  refused here with an error, and a string from that route is never to be loaded, since OpenSpiel
  would unpickle it.

Known limits of OpenSpiel with any Python game: its C++ MCTS and IS-MCTS bots fail on them (use the
Python ``open_spiel.python.algorithms.mcts`` and ``ismcts``), and ``random_sim_test(...,
serialize=True)`` needs an RNG state that a Python game cannot give (use ``serialize=False``).
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "envs.openspiel needs OpenSpiel, which is not installed: pip install 'tabletop-rl[openspiel]'"
    ) from exc

import envs
from envs.core.errors import StateError
from envs.core.game import Game as EngineGame
from envs.core.game import State as EngineState

PREFIX = "python_tabletop_"
SAVE_FORMAT = "tabletop-rl/openspiel-state"

#: Fewest and most seats each game's configs allow (the registered game type's player range).
PLAYER_RANGE: dict[str, tuple[int, int]] = {
    "sequence_v0": (2, 12),
    "pans_trial_v0": (2, 2),
    "dojo_v0": (2, 8),
    "wizard_arena_v0": (2, 16),
}
#: The parameters this bridge adds to every game's config keywords.
EXTRA_PARAMETERS = ("max_cycles", "seed")


def short_name(env_name: str) -> str:
    """OpenSpiel's name of a game: ``"sequence_v0"`` -> ``"python_tabletop_sequence_v0"``."""
    if env_name not in envs.NAMES:
        raise ValueError(f"unknown game {env_name!r}; available games: {list(envs.NAMES)}")
    return PREFIX + env_name


def _scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str))


@functools.cache
def _default_config(env_name: str) -> dict[str, Any]:
    return envs.game_class(env_name)().config


def text_keywords(env_name: str) -> tuple[str, ...]:
    """The config keywords that are string parameters holding JSON: those whose default is None or
    a list, which OpenSpiel cannot hold as one parameter."""
    return tuple(k for k, v in _default_config(env_name).items() if not _scalar(v))


def _text_parameter(value: str) -> Any:
    """A string parameter as a config value: JSON if it parses, else the plain text."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def parameter_specification(env_name: str) -> dict[str, Any]:
    """The game's OpenSpiel parameters with their defaults: every config keyword (those of
    :func:`text_keywords` as JSON text), then ``max_cycles`` and ``seed``."""
    text = text_keywords(env_name)
    spec = {k: json.dumps(v) if k in text else v for k, v in _default_config(env_name).items()}
    spec["max_cycles"] = int(envs.game_class(env_name).default_max_cycles)
    spec["seed"] = -1
    return spec


def game_parameters(engine: EngineGame, max_cycles: int | None = None, seed: int = -1) -> dict[str, Any]:
    """``pyspiel.load_game`` parameters for a configured engine (``envs.make_game(...)``)."""
    spec = parameter_specification(engine.name)
    text = text_keywords(engine.name)
    params = {k: json.dumps(v) if k in text else float(v) if isinstance(spec[k], float) else v
              for k, v in engine.config.items()}
    params["max_cycles"] = int(max_cycles if max_cycles is not None else type(engine).default_max_cycles)
    params["seed"] = int(seed)
    for key, value in params.items():
        if isinstance(value, int) and not isinstance(value, bool) and not -2**31 <= value < 2**31:
            raise ValueError(f"{short_name(engine.name)}: {key}={value} does not fit OpenSpiel's integer "
                             f"parameters (32-bit: below 2**31)")
    return params


def load(engine: EngineGame, max_cycles: int | None = None, seed: int = -1) -> TabletopGame:
    """The OpenSpiel game of a configured engine: ``pyspiel.load_game`` with :func:`game_parameters`."""
    _register_all()  # a game of envs.NAMES that was not listed when this module was imported
    return pyspiel.load_game(short_name(engine.name), game_parameters(engine, max_cycles, seed))


def _game_type(env_name: str, utility: Any) -> Any:
    low, high = PLAYER_RANGE[env_name]
    return pyspiel.GameType(
        short_name=short_name(env_name),
        long_name=f"tabletop-rl {env_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=high,
        min_num_players=low,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameter_specification(env_name),
    )


class _Position:
    """A state's mutable part, kept in one attribute: OpenSpiel clones a Python state by deep-copying
    each attribute, so this object's copy is the engine's ``clone()``.

    The deal waits until the position is first used, so the fresh state that OpenSpiel's clone starts
    from deals nothing. OpenSpiel's C++ side also builds a throwaway initial state whenever it needs a
    tensor's shape, writes one tensor from it and drops it; a deal used for nothing else goes back to
    its game when its state is dropped, and the game's next new state gets it, so those probes cost
    no deal and draw no seed. Any other use (a string, the legal actions, an action, a clone, the
    engine handed out) keeps the deal with its state."""

    __slots__ = ("_engine", "_game", "_fresh", "steps", "limit")

    def __init__(self, engine: EngineState | None, steps: int, limit: int, game: TabletopGame | None = None):
        self._engine = engine
        self._game = game
        self._fresh = False
        self.steps = steps
        self.limit = limit

    @property
    def engine(self) -> EngineState:
        engine = self._engine
        if engine is None:
            engine = self._engine = self._game.deal()
        self._fresh = False
        return engine

    def engine_for_tensor(self) -> EngineState:
        """The engine state for writing a tensor: a deal made for this alone may be recycled."""
        engine = self._engine
        if engine is None:
            engine = self._engine = self._game.deal()
            self._fresh = True
        return engine

    def __del__(self) -> None:
        if self._fresh and self._game is not None:
            self._game.recycle(self._engine)

    def __deepcopy__(self, memo: dict) -> _Position:
        return _Position(self.engine.clone(), self.steps, self.limit)

    def __reduce__(self):
        raise TypeError(
            "a tabletop-rl OpenSpiel state is not pickled (loading a pickle runs code): save it with "
            "state.serialize() (the engine's validated JSON) and load it with game.deserialize_state(text)"
        )


class TabletopGame(pyspiel.Game):
    """One configured game in OpenSpiel (see the module docstring). Each game has its own subclass,
    registered under :func:`short_name`; build it with ``pyspiel.load_game`` or :func:`load`."""

    env_name: str = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        spec = parameter_specification(self.env_name)
        params = {**spec, **dict(params or {})}
        unknown = sorted(set(params) - set(spec))
        if unknown:
            raise ValueError(f"{short_name(self.env_name)}: unknown parameter(s) {unknown}; known: {sorted(spec)}")
        text = text_keywords(self.env_name)
        config = {k: _text_parameter(v) if k in text and isinstance(v, str) else v
                  for k, v in params.items() if k not in EXTRA_PARAMETERS}
        engine = envs.make_game(self.env_name, **config)  # a ConfigError names the keyword and what is allowed
        max_cycles, seed = params["max_cycles"], params["seed"]
        if isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1:
            raise ValueError(f"{short_name(self.env_name)}: max_cycles must be an integer >= 1, got {max_cycles!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < -1:
            raise ValueError(f"{short_name(self.env_name)}: seed must be an integer >= 0, or -1 for a seed "
                             f"from the operating system; got {seed!r}")
        low, high = PLAYER_RANGE[self.env_name]
        if not low <= engine.num_players <= high:
            raise ValueError(f"{short_name(self.env_name)}: {engine.num_players} seats is outside the "
                             f"registered range {low}-{high}")
        utility = pyspiel.GameType.Utility.ZERO_SUM if engine.zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        limit = max_cycles * engine.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=engine.num_actions,
            max_chance_outcomes=0,
            num_players=engine.num_players,
            min_utility=float(engine.reward_range[0]),
            max_utility=float(engine.reward_range[1]),
            utility_sum=0.0 if engine.zero_sum else None,
            max_game_length=limit,
        )
        super().__init__(_game_type(self.env_name, utility), info, params)
        #: The configured engine game (:class:`envs.core.game.Game`) that every state of this game plays.
        self.engine_game = engine
        #: The step limit in actions: ``max_cycles x num_players``.
        self.step_limit = limit
        self._seeds = random.Random(seed) if seed >= 0 else random.SystemRandom()
        self._spare: EngineState | None = None

    def new_initial_state(self, *args: Any) -> TabletopState:
        """A fresh game, dealt from the game's seed stream when first used."""
        if args:
            raise ValueError(f"{short_name(self.env_name)}: new_initial_state takes no argument; "
                             "load a saved state with game.deserialize_state(text)")
        return TabletopState(self, _Position(None, 0, self.step_limit, game=self))

    def deal(self) -> EngineState:
        """A fresh engine state: one dealt but never played or handed out, else the next from
        this game's seed stream."""
        engine, self._spare = self._spare, None
        if engine is None:
            engine = self.engine_game.new_initial_state(self._seeds.randrange(2**63))
            engine.set_step_limit(self.step_limit)
        return engine

    def recycle(self, engine: EngineState) -> None:
        """Keep a dealt engine state that nobody played or saw for the next :meth:`deal`."""
        if self._spare is None:
            self._spare = engine

    def state_at(self, engine: EngineState, steps: int = 0) -> TabletopState:
        """An OpenSpiel state wrapping ``engine`` (a state of this game's engine, not copied), with
        ``steps`` actions already counted against the step limit."""
        if type(engine.game) is not type(self.engine_game) or engine.game.config_differences(self.engine_game.config):
            raise ValueError(f"{short_name(self.env_name)}: the engine state belongs to {engine.game!r}, "
                             f"not to this game's {self.engine_game!r}")
        if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= self.step_limit:
            raise ValueError(f"steps must be an integer in [0, {self.step_limit}], got {steps!r}")
        engine.set_step_limit(self.step_limit)
        return TabletopState(self, _Position(engine, steps, self.step_limit))

    def deserialize_state(self, text: str) -> TabletopState:
        """Load what ``state.serialize()`` wrote: the engine's save, fully validated (a
        :class:`~envs.core.errors.StateError` names what is wrong), and the step count."""
        try:
            data = json.loads(text)
        except (TypeError, json.JSONDecodeError) as exc:
            raise StateError(f"{short_name(self.env_name)}: a saved state is JSON text from state.serialize(): "
                             f"{exc}") from None
        if not isinstance(data, dict) or set(data) != {"format", "steps", "save"} or data["format"] != SAVE_FORMAT:
            raise StateError(f"{short_name(self.env_name)}: a saved state is an object with 'format' "
                             f"({SAVE_FORMAT!r}), 'steps' and 'save'")
        steps = data["steps"]
        if type(steps) is not int or not 0 <= steps <= self.step_limit:
            raise StateError(f"{short_name(self.env_name)}: saved steps must be an integer in "
                             f"[0, {self.step_limit}] (this game's step limit), got {steps!r}")
        return self.state_at(self.engine_game.load(data["save"]), steps)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> _Observer:
        return _Observer(self, iig_obs_type, params)


class TabletopState(pyspiel.State):
    """One position: the engine's state and the step count (see the module docstring)."""

    def __init__(self, game: TabletopGame, position: _Position) -> None:
        super().__init__(game)
        self._pos = position

    @property
    def engine(self) -> EngineState:
        """The engine's state (the full position: never hand it to a seat's policy)."""
        return self._pos.engine

    @property
    def steps(self) -> int:
        """Actions taken since the deal (counted against the step limit)."""
        return self._pos.steps

    def current_player(self) -> int:
        pos = self._pos
        engine = pos.engine
        if engine.is_terminal() or pos.steps >= pos.limit:
            return pyspiel.PlayerId.TERMINAL
        return engine.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        # OpenSpiel wants them ascending, which the mask gives.
        return np.flatnonzero(self._pos.engine.legal_mask()).tolist()

    def _apply_action(self, action: int) -> None:
        pos = self._pos
        pos.engine.apply_action(int(action))
        pos.steps += 1

    def observation_tensor(self, player: int | None = None) -> list[float]:
        """The seat's observation as a flat list (``player`` defaults to the seat to act). Answered
        here rather than by OpenSpiel's generic route, which first builds a state to learn the shape."""
        return self._tensor(player)

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        """The same as :meth:`observation_tensor` (see the module docstring)."""
        return self._tensor(player)

    def _tensor(self, player: int | None) -> list[float]:
        engine = self._pos.engine
        game = engine.game
        if player is None:
            player = self.current_player()
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < game.num_players:
            raise ValueError(f"player must be a seat in [0, {game.num_players}), got {player!r}")
        return np.asarray(game.observe(engine, int(player)), dtype=np.float32).reshape(-1).tolist()

    def _action_to_string(self, player: int, action: int) -> str:
        return self._pos.engine.game.action_to_string(int(action))

    def is_terminal(self) -> bool:
        pos = self._pos
        return pos.engine.is_terminal() or pos.steps >= pos.limit

    def returns(self) -> list[float]:
        pos = self._pos
        engine = pos.engine
        if engine.is_terminal():
            return [float(r) for r in engine.returns()]
        if pos.steps >= pos.limit:
            return [float(r) for r in engine.truncation_returns()]
        return [0.0] * engine.game.num_players

    def serialize(self) -> str:
        """The engine's validated JSON save and the step count, as text (load: ``game.deserialize_state``)."""
        engine = self._pos.engine
        return json.dumps({"format": SAVE_FORMAT, "steps": self._pos.steps, "save": engine.game.save(engine)},
                          separators=(",", ":"))

    def __str__(self) -> str:
        engine = self._pos.engine
        return engine.game.render_text(engine)


class _Observer:
    """OpenSpiel's observer for one seat: its view as a string, its observation as the tensor.
    Only the seat's own knowledge is offered (public information and its private information);
    other kinds (public information alone, every seat's secrets) are refused."""

    def __init__(self, game: TabletopGame, iig_obs_type: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"{short_name(game.env_name)}: observers take no parameters, got {params}")
        if iig_obs_type is not None and (
                not iig_obs_type.public_info
                or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER):
            raise ValueError(
                f"{short_name(game.env_name)}: observers show one seat's own knowledge (public_info=True, "
                f"private_info=SINGLE_PLAYER); got {iig_obs_type}"
            )
        shape = tuple(int(s) for s in game.engine_game.observation_shape)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: TabletopState, player: int) -> None:
        engine = state._pos.engine_for_tensor()
        self.tensor[:] = np.asarray(engine.game.observe(engine, player), dtype=np.float32).reshape(-1)

    def string_from(self, state: TabletopState, player: int) -> str:
        return json.dumps(state._pos.engine.player_view(player), sort_keys=True, separators=(",", ":"))


def resample(state: TabletopState, player: int, rng: random.Random) -> TabletopState:
    """A state consistent with everything ``player`` knows in ``state`` (the same view, the same step
    count), the hidden part (other hands, deck order, the random generator's future) drawn from
    ``rng`` by the engine's ``state_from_view``."""
    game = state.get_game()
    engine = game.engine_game.state_from_view(state._pos.engine.player_view(player), rng)
    return game.state_at(engine, state.steps)


def state_from_view(game: TabletopGame, view: dict[str, Any], rng: random.Random, steps: int = 0) -> TabletopState:
    """An OpenSpiel state consistent with one seat's ``player_view`` (what an agent at a table is
    given), the hidden part drawn from ``rng``; ``steps`` actions already counted."""
    return game.state_at(game.engine_game.state_from_view(view, rng), steps)


class RolloutEvaluator:
    """OpenSpiel's MCTS evaluator interface (``evaluate`` and ``prior``) by random rollouts played on
    the engine itself (a clone of it, legal actions drawn uniformly), a few times faster than
    OpenSpiel's ``RandomRolloutEvaluator``, which goes through the OpenSpiel state at every action.
    A rollout stops after ``rollout_actions`` actions (None: never) or at the step limit, and is
    worth the returns where it stops: the engine's once the game is over, the truncation returns at
    the step limit, zeros otherwise."""

    def __init__(self, rollout_actions: int | None = 200, seed: int | None = None, n_rollouts: int = 1) -> None:
        if rollout_actions is not None and (isinstance(rollout_actions, bool) or not isinstance(rollout_actions, int)
                                            or rollout_actions < 1):
            raise ValueError(f"rollout_actions must be an integer >= 1 or None, got {rollout_actions!r}")
        if isinstance(n_rollouts, bool) or not isinstance(n_rollouts, int) or n_rollouts < 1:
            raise ValueError(f"n_rollouts must be an integer >= 1, got {n_rollouts!r}")
        self.rollout_actions = rollout_actions
        self.n_rollouts = n_rollouts
        self._rng = random.Random(seed)

    def evaluate(self, state: TabletopState) -> np.ndarray:
        pos = state._pos
        start = pos.engine
        room = pos.limit - pos.steps
        cap = room if self.rollout_actions is None else min(room, self.rollout_actions)
        total = np.zeros(start.game.num_players)
        for _ in range(self.n_rollouts):
            engine = start.clone()
            taken = 0
            while taken < cap and not engine.is_terminal():
                legal = engine.legal_actions()
                engine.apply_unchecked(legal[self._rng.randrange(len(legal))])
                taken += 1
            if engine.is_terminal():
                total += engine.returns()
            elif taken >= room:
                total += engine.truncation_returns()
        return total / self.n_rollouts

    def prior(self, state: TabletopState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


def ismcts_bot(game: TabletopGame, player: int, num_simulations: int, seed: int, evaluator: Any = None,
               uct_c: float = 2.0, rollout_actions: int | None = 200) -> Any:
    """OpenSpiel's Python ``ISMCTSBot`` for ``player`` of ``game``, with :func:`resample` as its
    resampler: each simulation starts from a fresh guess at what the seat cannot see. ``evaluator``
    (any OpenSpiel MCTS evaluator) defaults to a :class:`RolloutEvaluator`: one random rollout of at
    most ``rollout_actions`` actions (None: to the end of the game; random play rarely ends a Dojo or
    Wizard Arena game, so a rollout to the end costs thousands of actions there). The search and the
    rollouts are seeded by ``seed``. Plays against any OpenSpiel bot (for example in
    ``open_spiel.python.algorithms.evaluate_bots``); it refuses to act for another seat."""
    from open_spiel.python.algorithms import ismcts

    if not isinstance(game, TabletopGame):
        raise TypeError(f"ismcts_bot takes a game loaded from envs.openspiel, got {type(game).__name__}")
    if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < game.num_players():
        raise ValueError(f"player must be an integer in [0, {game.num_players()}), got {player!r}")
    if isinstance(num_simulations, bool) or not isinstance(num_simulations, int) or num_simulations < 1:
        raise ValueError(f"num_simulations must be an integer >= 1, got {num_simulations!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    search_rng = np.random.RandomState(seed)
    if evaluator is None:
        evaluator = RolloutEvaluator(rollout_actions, seed=seed + 1)
    resample_rng = random.Random(seed)

    class SeatISMCTSBot(ismcts.ISMCTSBot):
        # The search keeps no tree between moves, so a new game or an opponent's move needs nothing.
        def restart_at(self, state):
            self.reset()

        def inform_action(self, state, player_id, action):
            pass

        def step(self, state):
            if state.current_player() != player:
                raise ValueError(f"this IS-MCTS bot plays seat {player}, but seat {state.current_player()} is to act")
            return super().step(state)

    bot = SeatISMCTSBot(game, evaluator, uct_c, num_simulations, random_state=search_rng)
    bot.set_resampler(lambda s, p: resample(s, p, resample_rng))
    bot.player = player
    return bot


def _register_all() -> None:
    registered = set(pyspiel.registered_names())
    for env_name in envs.NAMES:
        name = short_name(env_name)
        if name in registered:
            continue
        game_cls = type(f"{env_name}_openspiel_game", (TabletopGame,), {"env_name": env_name,
                                                                       "__module__": __name__})
        pyspiel.register_game(_game_type(env_name, pyspiel.GameType.Utility.GENERAL_SUM), game_cls)


_register_all()

__all__ = [
    "EXTRA_PARAMETERS", "PLAYER_RANGE", "PREFIX", "TabletopGame", "TabletopState", "game_parameters", "ismcts_bot",
    "RolloutEvaluator", "load", "parameter_specification", "resample", "short_name", "state_from_view", "text_keywords",
]
