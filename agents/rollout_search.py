"""Search at play time over any base agent: determinized rollouts from the seat's view (PIMC).

:class:`RolloutSearchAgent` takes a *base* agent — a heuristic or a trained policy, any registered
id of the game — and plays better than it by trying its alternatives out:

1. **Forced moves are free.** With one legal action it plays it at once.
2. **The base agent's choice.** The base agent (its own copy, at the search's seat) is asked what it
   would play; that action is the default.
3. **Candidates.** Every legal action, or when there are more than ``max_candidates``: the base
   agent's choice and the others that look best one ply ahead (the game's value function on one
   determinization).
4. **Determinizations.** ``simulations`` full states consistent with what the seat knows, each drawn
   with ``game.state_from_view(view, rng)``: hidden hands and decks sampled, the seat's own
   knowledge kept, the random generator's future drawn afresh (in a game with dice and no hidden
   cards, such as Wizard Arena, they are samples of the dice to come).
5. **Rollouts.** In every determinization each candidate is applied to a copy, then every seat — the
   searching one included — plays on as the *rollout* agent (the base agent unless told otherwise;
   the other seats as the ``opponents`` agent where one is given),
   each seat handed only its own observation and view of that imagined position, for ``horizon``
   actions, or (with ``turns``) until the seat is to act for the ``turns``-th time after other
   seats have acted, or to the end of the game. All candidates of one determinization share the same
   rollout seeds (common random numbers), so their difference measures the move, not the luck.
6. **Leaf values.** A finished game scores the seat's return (with ``first_place=1``, first place
   alone: :func:`first_place_return`); an unfinished one the game's value
   function (:data:`VALUE_FUNCTIONS`: an estimate of the seat's return from the full imagined
   position; by default ``state.truncation_returns()``, what the cycle cap would pay).
7. **Choice.** The candidate with the best mean; another action than the base agent's must beat it
   by ``margin`` (in return units), so noise alone rarely overturns the base agent.

**Policy switching.** ``rollout`` may name several agents: each candidate is then rolled out once per
agent, that agent playing the searching seat on (the other seats play ``opponents``, by default the
first of them), with the same determinizations and seeds, and the candidate is worth its best mean
over them: the seat will choose again at its next turn, so a move is judged by the best way known to
go on from it. This lets the search try plans its base agent never makes (in Wizard Arena, gambling
on Gary: ``wizard_arena_v0/search-v3``), at the cost of one set of rollouts per agent.

**Lockstep rollouts.** With ``lockstep=N`` (0, the default, plays the rollouts one after the other) the
rollouts of as many determinizations as fit in ``N`` rollouts (at least one determinization's) advance
together, one action each per step, on their own copies of the position. At each step an agent that
decides for many positions at once (``act_batch``: :class:`agents.policy_agent.PolicyAgent`, whose one
forward pass reads every equal observation once) is asked once for all the rollouts where a seat it
plays is to act; any other agent (a heuristic) plays rollout by rollout, each rollout with its own copy
seeded as above; a value with ``values(states, seat)`` (:class:`NetworkValue`) scores all the leaves at
once. The seeds, the rollouts and the sums are the same, so the values and the choice are those of the
one-at-a-time search (``tests/test_lockstep_search.py`` holds them to it); only a network value's leaves
may differ in the last bits, a batch being computed by other kernels than one row. A ``lockstep`` whose
rollouts would fill more than half of the machine's memory is refused when the agent is made, with the
largest that fits. With ``time_ms`` the clock is read between groups of determinizations.

With ``time_ms`` the determinizations stop once that much wall time is spent (at least one is
always finished): the budget then holds on any machine, but the play depends on the machine's
speed. Without it (the shipped agents) the play is a function of the seed and the game alone.

The agent reads only its seat's observation and view (the determinizations are its own guesses),
so it can sit at any table its base agent can. Every choice's wall time is kept in
:attr:`RolloutSearchAgent.move_times` (forced moves are not counted); :meth:`timing` summarises them.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import random
import sys
import time
import types
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from agents.base import Agent
from agents.dojo import entrance_distances
from agents.pans_trial import h_evaluate
from agents.registry import make, register
from agents.search import check_ranged_settings
import envs
from envs import NAMES
from envs.core.game import Game, State
from envs.dojo.cards import KIAI

#: Every setting with its default and allowed range (inclusive).
SETTINGS: dict[str, tuple[Any, Any, Any]] = {
    "simulations": (8, 1, 4096),
    "time_ms": (0.0, 0.0, 600_000.0),
    "horizon": (24, 0, 100_000),
    "turns": (0, 0, 1000),
    "max_candidates": (8, 2, 512),
    "margin": (0.0, 0.0, 2.0),
    "first_place": (0, 0, 1),
    "lockstep": (0, 0, 1 << 20),
}


def check_settings(settings: Any, where: str = "search settings") -> dict[str, Any]:
    """The complete settings (defaults filled in), or a ``ValueError`` naming what is wrong."""
    return check_ranged_settings(SETTINGS, settings, where)


#: The share of this machine's memory that one group of lockstep rollouts may fill.
LOCKSTEP_MEMORY_SHARE = 0.5


def _size(count: int | float) -> str:
    return f"{count / 2**30:.1f} GiB" if count >= 2**30 else f"{count / 2**20:.0f} MiB"


def machine_memory() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


_NOT_COUNTED = (Game, type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType)


def approx_bytes(obj: Any, seen: set[int] | None = None) -> int:
    """About how much memory ``obj`` holds of its own: containers and attributes followed, numpy arrays by
    their data; a ``Game`` (shared by every state and agent), modules, classes and functions not counted."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, _NOT_COUNTED):
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return sys.getsizeof(obj) + (obj.nbytes if obj.base is None else 0)
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        return size + sum(approx_bytes(k, seen) + approx_bytes(v, seen) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return size + sum(approx_bytes(v, seen) for v in obj)
    if isinstance(obj, (str, bytes, int, float, bool, type(None), random.Random)):
        return size
    if type(obj).__module__.startswith("torch"):
        return 0  # a network is shared, never copied per rollout
    for cls in type(obj).__mro__:
        slots = getattr(cls, "__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            size += approx_bytes(getattr(obj, name, None), seen)
    return size + approx_bytes(getattr(obj, "__dict__", {}), seen)


# ----------------------------------------------------------------------------------------------
# Value functions: the seat's expected return from a full (imagined) position.
ValueFunction = Callable[[State, int], float]


def truncation_value(state: State, seat: int) -> float:
    """What the cycle cap would pay the seat now (zero in games whose cap pays nothing)."""
    return float(state.truncation_returns()[seat])


def pans_trial_value(state: State, seat: int) -> float:
    """``heuristic-v1``'s damage-race evaluation (in damage points) squashed into (-1, 1)."""
    return math.tanh(h_evaluate(state, seat) / 8.0)


def dojo_value(state: State, seat: int) -> float:
    """The return to expect if each seat's chance of winning grew by a constant factor per stripe
    of the progress track (winner +1, every other seat -1/(n-1), as the game pays)."""
    weights = [math.exp(0.45 * t) for t in state.track]
    p = weights[seat] / sum(weights)
    n = len(weights)
    return p - (1.0 - p) / (n - 1)


#: The fitted Dojo value's weights, in the order of :func:`dojo_features`: fitted by maximum likelihood
#: (a conditional logit: P(seat wins) = softmax over seats of w . f(seat)) on 14,034 positions of 300
#: games of four heuristic-v1 (deal seeds 900000+, a position every 15 actions). Held-out negative
#: log-likelihood 1.33, where the track value's exp(0.45 t) gives 1.53 and a uniform guess 1.39.
#: ``python -m benchmarks.fit_value dojo_v0`` refits them from the same games (holding out whole games).
DOJO_FITTED_WEIGHTS = (1.6115, 1.0957, -0.7937, 0.0968, 0.2049, 1.1226)

def dojo_features(state: State, seat: int) -> list[float]:
    """What the fitted Dojo value reads of a seat: track/17, Brown, Brown x steps to the Dojo/10, Blue or
    higher x steps to the Dojo/10, cards in hand/3, Kiai cards/2 (a seat inside the Dojo is 0 steps away,
    one not yet placed 30)."""
    board = state.game.board
    t, pos = state.track[seat], state.pos[seat]
    d = 30 if pos < 0 else 0 if board.dojo[pos] else min(entrance_distances(board)[pos], 30)
    brown, blue = float(t >= 15), float(t >= 12)
    hand = state.hands[seat]
    return [t / 17, brown, brown * d / 10, blue * d / 10, len(hand) / 3, hand.count(KIAI) / 2]


def winner_takes_all(p: float, n: int) -> float:
    """The return to expect at an ``n``-seat table where one seat wins (+1, every other seat -1/(n-1))
    and this seat wins with probability ``p``."""
    return p - (1.0 - p) / (n - 1)


def win_value(scores: list[float], seat: int) -> float:
    """The return to expect when one seat wins (+1, every other seat -1/(n-1)) and P(seat wins) is the
    softmax of ``scores`` over the seats."""
    top = max(scores)
    weights = [math.exp(x - top) for x in scores]
    return winner_takes_all(weights[seat] / sum(weights), len(weights))


def first_place_return(returns: Any, seat: int) -> float:
    """A finished game scored by first place alone: +1 for the sole winner (a first place shared by k seats
    is worth a k-th of it), -1/(n-1) for every other seat (:func:`winner_takes_all`)."""
    if len(returns) == 1:
        return 0.0
    top = max(returns)
    firsts = sum(1 for r in returns if r == top)
    return winner_takes_all(1.0 / firsts if returns[seat] == top else 0.0, len(returns))


def rank_value(keys: list[float], seat: int) -> float:
    """The ranking return 1 - 2(rank - 1)/(n - 1) made smooth: each other seat is ahead with probability
    sigmoid(its key - the seat's key)."""
    n = len(keys)
    if n == 1:
        return 0.0
    mine = keys[seat]
    ahead = sum(1.0 / (1.0 + math.exp(max(-30.0, min(30.0, mine - k)))) for i, k in enumerate(keys) if i != seat)
    return 1.0 - 2.0 * ahead / (n - 1)


def fitted_keys(weights: Any, features: Callable[[State, int], list[float]], state: State) -> list[float]:
    """Every seat's key under a fitted value: its ``features`` weighed by ``weights``, in seat order."""
    return [sum(w * f for w, f in zip(weights, features(state, p))) for p in range(state.game.num_players)]


def dojo_fitted_value(state: State, seat: int) -> float:
    """The return to expect under a win probability fitted on heuristic games (:data:`DOJO_FITTED_WEIGHTS`):
    the track counts far less than :func:`dojo_value` assumes, the way to the Dojo once Brown and the Kiai
    cards in hand count too."""
    return win_value(fitted_keys(DOJO_FITTED_WEIGHTS, dojo_features, state), seat)


def wizard_arena_value(state: State, seat: int) -> float:
    """The ranking reward, 1 - 2(rank - 1)/(n - 1), with the rank made smooth (:func:`rank_value`), the key
    being score plus small terms for strength and health (the ranking's tie-break, and what the next
    fights are won with); a fallen bot keeps its score but gains nothing more. The cycle cap's plain
    ranking changes too seldom within a short rollout to tell moves apart."""
    return rank_value([state.score[i] + 0.03 * state.strength[i] + (0.1 * state.hp[i] if state.alive[i] else -1.0)
                       for i in range(len(state.score))], seat)


def wizard_arena_features(state: State, seat: int) -> list[float]:
    """What a fitted Wizard Arena value reads of a bot: score/10, strength/10 (in whole units), HP/10 while
    alive, alive, leads a party, follows one, the followers of its line/5 and its line's total strength/10
    while alive, and score/10 x rounds played/128 (the score counts for more as the end nears)."""
    lead = state.leader_of[seat]
    line = state.line(lead)
    alive = 1.0 if state.alive[seat] else 0.0
    return [state.score[seat] / 10, state.strength[seat] / 100, alive * state.hp[seat] / 10, alive,
            1.0 if lead == seat and len(line) > 1 else 0.0, 1.0 if lead != seat else 0.0,
            alive * (len(line) - 1) / 5, alive * state.side_strength(lead) / 100,
            state.round / 128 * state.score[seat] / 10]


#: Wizard Arena's fitted ranking keys, in the order of :func:`wizard_arena_features`: the ``rank`` fit of
#: ``python -m benchmarks.fit_value wizard_arena_v0 --games 3000 --every 20 --offset 7`` (45,521 positions of
#: 3,000 games of six heuristic-v1, deal seeds 900000+, the last 600 games held out): held-out squared error
#: of the return 0.055, where the hand-written key of :func:`wizard_arena_value` gives 0.132.
WIZARD_ARENA_FITTED_WEIGHTS = (135.9044, 165.1475, -6.4535, -1.1457, 2.3955, -0.1112, -0.1346, -0.0291, 50.7275)


def wizard_arena_fitted_value(state: State, seat: int) -> float:
    """The ranking return to expect under keys fitted on heuristic games (:data:`WIZARD_ARENA_FITTED_WEIGHTS`,
    scored by :func:`rank_value`): score and strength dominate, the score more as the end nears."""
    return rank_value(fitted_keys(WIZARD_ARENA_FITTED_WEIGHTS, wizard_arena_features, state), seat)


def wizard_arena_first_value(state: State, seat: int) -> float:
    """The fitted ranking keys of :func:`wizard_arena_fitted_value` read as the chance of first place alone
    (a softmax over the seats, :func:`win_value`): a rank below first is worth nothing."""
    return win_value(fitted_keys(WIZARD_ARENA_FITTED_WEIGHTS, wizard_arena_features, state), seat)


#: The features a fitted value reads of a seat, by game (``python -m benchmarks.fit_value`` fits their weights).
VALUE_FEATURES: dict[str, Callable[[State, int], list[float]]] = {
    "dojo_v0": dojo_features,
    "wizard_arena_v0": wizard_arena_features,
}

#: The models a fit file may hold: ``win`` (conditional logit of the winner, scored by :func:`win_value`)
#: and ``rank`` (pairwise keys, scored by :func:`rank_value`).
FITTED_MODELS = {"win": win_value, "rank": rank_value}


@lru_cache(maxsize=None)
def feature_count(game_name: str) -> int:
    """How many features :data:`VALUE_FEATURES` reads of a seat of ``game_name`` (counted once a process)."""
    return len(VALUE_FEATURES[game_name](envs.make_game(game_name).new_initial_state(0), 0))


class FittedValue:
    """A value fitted by ``benchmarks.fit_value``: weights over the game's :data:`VALUE_FEATURES`, every
    seat's features weighed into a score, the scores turned into the seat's expected return by the
    model (``win`` or ``rank``).

    Built from the weights, or with :meth:`from_file` from the JSON the fit wrote (``PATH`` or
    ``PATH:MODEL``; the file is data, checked field by field)."""

    def __init__(self, game_name: str, weights: Any, model: str = "win", source: str = "") -> None:
        where = source or "fitted value"
        if game_name not in VALUE_FEATURES:
            raise ValueError(f"{where}: no fitted value features for {game_name!r} (games with them: "
                             f"{', '.join(sorted(VALUE_FEATURES))})")
        if model not in FITTED_MODELS:
            raise ValueError(f"{where}: model must be one of {', '.join(FITTED_MODELS)}, got {model!r}")
        if (not isinstance(weights, (list, tuple)) or not weights
                or not all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) for w in weights)):
            raise ValueError(f"{where}: weights must be a list of finite numbers, got {weights!r:.80}")
        self.game_name, self.model, self.source = game_name, model, source
        self.features = VALUE_FEATURES[game_name]
        count = feature_count(game_name)
        if len(weights) != count:
            raise ValueError(f"{where}: {len(weights)} weights, but {self.features.__name__} reads {count} features")
        self.weights = [float(w) for w in weights]
        self.score = FITTED_MODELS[model]

    @classmethod
    def from_file(cls, spec: str, game_name: str) -> FittedValue:
        """``PATH`` (the ``win`` fit) or ``PATH:MODEL`` of a file written by ``benchmarks.fit_value``; a
        missing, unreadable or malformed file, another game's fit or an unknown model raises ``ValueError``."""
        path, model = spec, "win"
        if ":" in spec and spec.rsplit(":", 1)[1] in FITTED_MODELS:
            path, model = spec.rsplit(":", 1)
        try:
            data = json.loads(pathlib.Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: cannot read a fitted value ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("fits"), dict):
            raise ValueError(f"{path}: not a fit written by benchmarks.fit_value (no 'fits' object)")
        if data.get("game") != game_name:
            raise ValueError(f"{path}: a fit for {data.get('game')!r}, not {game_name!r}")
        fit = data["fits"].get(model)
        if not isinstance(fit, dict):
            raise ValueError(f"{path}: no {model!r} fit in the file (it has: {', '.join(map(str, data['fits']))})")
        return cls(game_name, fit.get("weights"), model, source=f"{path}:{model}")

    def __call__(self, state: State, seat: int) -> float:
        return self.score(fitted_keys(self.weights, self.features, state), seat)


class NetworkValue:
    """A learned value function: a trained network's value head read from the seat's own observation of
    the (imagined) position, an estimate of the seat's return under the play it was trained on.

    ``policy`` is a checkpoint id (``"dojo_v0/ppo-v3"``), a policy folder or a run folder; the network is
    loaded on first use, once per process, and must have a value head (``logits_and_value``)."""

    def __init__(self, game_name: str, policy: str) -> None:
        self.game_name, self.policy = game_name, policy
        self.model: Any = None
        self.game: Game | None = None

    def load(self) -> None:
        """Load the network now (a missing folder, another game's policy or a network without a value
        head raises :class:`agents.policy_io.CheckpointError` here rather than in the middle of a game)."""
        from agents.checkpoint import policy_folder
        from agents.policy_agent import load_checkpoint
        from agents.policy_io import CheckpointError

        model, spec = load_checkpoint(policy_folder(self.policy), self.game_name)
        if not hasattr(model, "logits_and_value"):
            raise CheckpointError(f"{self.policy}: a network value needs a value head (logits_and_value); "
                                  f"{type(model).__name__} has none")
        self.model, self.game = model, envs.make_game(self.game_name, **spec["config"])

    def observation(self, state: State, seat: int) -> np.ndarray:
        """What the network reads: the seat's observation, re-encoded from its view when the table
        observes through other ``observation_keys`` than the network was trained on (as
        :class:`agents.policy_agent.PolicyAgent` does); other rules are refused."""
        if self.model is None:
            self.load()
        table = state.game
        if table.config == self.game.config:
            return self.game.observe(state, seat)
        return self.game.observe_view(state.player_view(seat), seat, table, table.observe(state, seat))

    def __call__(self, state: State, seat: int) -> float:
        import torch

        torch.set_num_threads(1)
        obs = torch.as_tensor(np.asarray(self.observation(state, seat), dtype=np.float32)[None])
        with torch.no_grad():
            return float(self.model.logits_and_value(obs)[1][0])

    def values(self, states: list[State], seat: int) -> list[float]:
        """The seat's value of every state from one forward pass (equal observations read once), as lockstep
        rollouts ask for their leaves. A batch runs through other kernels than one row: each value may differ
        from :meth:`__call__`'s in the last bits (about 1e-6)."""
        import torch

        torch.set_num_threads(1)
        if not states:
            return []
        slot: dict[bytes, int] = {}
        inverse, unique = [], []
        for state in states:
            row = np.asarray(self.observation(state, seat), dtype=np.float32)
            j = slot.setdefault(row.tobytes(), len(unique))
            if j == len(unique):
                unique.append(row)
            inverse.append(j)
        with torch.no_grad():
            out = self.model.logits_and_value(torch.as_tensor(np.stack(unique)))[1].numpy()
        return [float(out[j]) for j in inverse]


#: Game name -> its value function (games not listed use :func:`truncation_value`).
VALUE_FUNCTIONS: dict[str, ValueFunction] = {
    "pans_trial_v0": pans_trial_value,
    "dojo_v0": dojo_value,
    "wizard_arena_v0": wizard_arena_value,
}


def agent_factory(game_name: str, spec: str, what: str = "base") -> Callable[[int], Agent]:
    """``seed -> Agent`` for ``spec``: an agent kind or id of ``game_name`` (``"heuristic-v1"``,
    ``"dojo_v0/ppo-v3"``) or a policy folder (a folder holding ``policy.json``, or a training run folder:
    its ``policy/``), whose network is loaded once per process and shared by every agent made. Anything
    else raises a ``ValueError`` naming the ids of the game."""
    from agents.registry import available, parse_id

    agent_id = spec if "/" in spec else f"{game_name}/{spec}"
    if agent_id in available(game_name):
        return lambda seed: make(agent_id, seed=seed)
    try:
        other = parse_id(agent_id)[0]
    except ValueError:
        other = game_name
    if other != game_name and other in NAMES:
        raise ValueError(f"{what} agent {agent_id!r} plays another game than {game_name}")
    from agents.checkpoint import policy_folder
    from agents.policy_agent import PolicyAgent, load_checkpoint
    from agents.policy_io import CheckpointError

    try:
        folder = policy_folder(spec)
        load_checkpoint(folder, game_name)  # fails now if the folder holds another game's policy
    except CheckpointError as exc:
        kinds = sorted(a.split("/", 1)[1] for a in available(game_name))
        raise ValueError(f"no agent registered as {agent_id!r} (the kinds of {game_name}: {', '.join(kinds)}) and "
                         f"no usable policy folder at {spec!r}: {exc}") from exc
    return lambda seed: PolicyAgent(game_name, seed=seed, path=folder)


class RolloutSearchAgent(Agent):
    """Determinized rollouts over a base agent; see the module docstring.

    ``base`` is an agent id of this game (``"heuristic-v1"`` short for ``"<game>/heuristic-v1"``), a
    policy folder or run folder (:func:`agent_factory`), or a callable ``make(seed) -> Agent`` (for a
    network built in memory); ``rollout`` the same for the
    agent that plays every seat inside the rollouts (default: the base agent's id or callable);
    ``rollout`` may also be a list or tuple of them (policy switching, see the module docstring);
    ``value`` a value function (default: the game's entry in :data:`VALUE_FUNCTIONS`), a fit file written by
    ``benchmarks.fit_value`` (``PATH.json`` or ``PATH.json:rank``, :class:`FittedValue`), or a checkpoint id or
    policy folder whose network's value head scores the leaves (:class:`NetworkValue`); ``opponents`` the agent
    the other seats play in the rollouts (default: the rollout agent), a model of the table: with a network
    as the base and the table's heuristic as ``opponents``, the rollouts value each move under the network's
    own play against the opponents it meets.
    """

    def __init__(self, game_name: str, seed: int | None = None, base: str | Callable[[int], Agent] = "heuristic-v1",
                 rollout: str | Callable[[int], Agent] | list | tuple | None = None, value: ValueFunction | str | None = None,
                 search: dict[str, Any] | None = None, opponents: str | Callable[[int], Agent] | None = None) -> None:
        super().__init__(game_name, seed)
        self.search = check_settings(dict(search or {}))
        self.base_factory = self._factory(base, "base")
        specs = [base] if rollout is None else list(rollout) if isinstance(rollout, (list, tuple)) else [rollout]
        if not specs:
            raise ValueError("rollout must name at least one agent (an id, a policy folder or a callable)")
        #: The agents the seat may go on as inside a rollout (more than one: policy switching).
        self.rollout_factories = [self._factory(spec, "rollout") for spec in specs]
        self.rollout_factory = self.rollout_factories[0]
        self.opponent_factory = self.rollout_factory if opponents is None else self._factory(opponents, "opponents")
        if isinstance(value, str) and value.split(":")[0].endswith(".json"):
            value = FittedValue.from_file(value, game_name)
        elif isinstance(value, str):
            value = NetworkValue(game_name, value)
            value.load()  # a wrong folder or a network without a value head fails here, not mid-game
        self.value = value if value is not None else VALUE_FUNCTIONS.get(game_name, truncation_value)
        if not callable(self.value):
            raise ValueError(f"value must be a function (state, seat) -> float, got {type(self.value).__name__}")
        self.base_agent: Agent | None = None
        self.rollout_agents: list[Agent] = []
        #: Wall time (seconds) of every decision with a choice, across games.
        self.move_times: list[float] = []
        #: This process's CPU time (seconds) of the same decisions: the cost on one core, whatever
        #: else the machine runs.
        self.move_cpu_times: list[float] = []
        #: What the last search did: determinizations finished, candidates tried, rollouts played
        #: and the most actions one of them took.
        self.last_search: dict[str, int] = {}
        #: The last search's mean leaf value of each candidate (action -> value, before the margin):
        #: soft targets for a network that learns from the search.
        self.last_values: dict[int, float] = {}
        #: Lockstep rollouts' own copies of the agents that do not batch, by seat role, one per rollout.
        self._copies: dict[tuple[str, int], list[Agent]] = {}
        if self.search["lockstep"]:
            self._check_lockstep_memory()

    def lockstep_row_bytes(self) -> int:
        """About how many bytes one lockstep rollout holds at its peak: its position, its own copy of every
        rollout agent that does not batch, and a batching agent's share of one forward pass
        (``batch_row_bytes``), measured on the game's default configuration."""
        game = envs.make_game(self.game_name)
        state = game.new_initial_state(0)
        for p in range(game.num_players):
            game.observe(state, p)  # an observation cache, where the game keeps one, travels with clones
        shared: set[int] = set()
        approx_bytes(state, shared)  # what a clone shares with its original costs nothing more
        size = approx_bytes(state.clone(), shared)
        batch = 0
        seats = {self.opponent_factory: game.num_players - 1}
        for factory in self.rollout_factories:
            seats[factory] = seats.get(factory, 0) + 1
        for factory, count in seats.items():
            agent = factory(0)
            if _batches(agent):
                batch = max(batch, int(agent.batch_row_bytes()) if hasattr(agent, "batch_row_bytes") else 0)
            else:
                size += count * approx_bytes(agent)
        return size + batch

    def _check_lockstep_memory(self) -> None:
        """Refuse a ``lockstep`` whose rollouts would fill more than :data:`LOCKSTEP_MEMORY_SHARE` of this
        machine's memory, naming what fits."""
        s, memory = self.search, machine_memory()
        if not memory:
            return
        policies = len(self.rollout_factories)
        smallest = s["max_candidates"] * policies  # a group holds at least one determinization's rollouts
        rows = max(s["lockstep"], smallest)
        per_row = self.lockstep_row_bytes()
        budget = LOCKSTEP_MEMORY_SHARE * memory
        if rows * per_row <= budget:
            return
        fits = int(budget // per_row)
        need = f"{rows} rollouts at once, about {per_row / 1024:.0f} KiB each ({_size(rows * per_row)})"
        room = f"{LOCKSTEP_MEMORY_SHARE:.0%} of this machine's {_size(memory)} holds {fits}"
        if smallest > fits:
            raise ValueError(f"search settings: lockstep needs {need}, but {room}: lower max_candidates to at most "
                             f"{max(2, fits // policies)}, or play the rollouts one at a time (lockstep=0)")
        raise ValueError(f"search settings: lockstep={s['lockstep']} needs {need}, but {room}: "
                         f"lockstep must be in [1, {fits}] (or 0, one rollout at a time)")

    def _factory(self, spec: str | Callable[[int], Agent], what: str) -> Callable[[int], Agent]:
        if isinstance(spec, str):
            return agent_factory(self.game_name, spec, what)
        if callable(spec):
            return spec
        raise ValueError(f"{what} must be an agent id, a policy folder or a callable seed -> Agent, "
                         f"got {type(spec).__name__}")

    def reset(self, seat: int, game: Game) -> None:
        super().reset(seat, game)
        self.base_agent = self.base_factory(self.rng.getrandbits(32))
        self.base_agent.reset(seat, game)
        self.rollout_agents = [(self.rollout_factory if p == seat else self.opponent_factory)(self.rng.getrandbits(32))
                               for p in range(game.num_players)]
        #: The seat's own rollout agent under each rollout policy (the first is ``rollout_agents[seat]``).
        self.own_agents = [self.rollout_agents[seat]] + [f(self.rng.getrandbits(32)) for f in self.rollout_factories[1:]]

    def timing(self) -> dict[str, float]:
        """Mean and 95th percentile (seconds) of the wall and CPU time of the decisions with a choice
        so far, and their count."""
        out: dict[str, float] = {"moves": len(self.move_times)}
        for name, times in (("wall", self.move_times), ("cpu", self.move_cpu_times)):
            t = np.asarray(times) if times else np.zeros(1)
            out[f"{name}_mean_s"] = float(t.mean())
            out[f"{name}_p95_s"] = float(np.percentile(t, 95))
        return out

    # ------------------------------------------------------------------------------------------
    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        return self.search_values(observation, view)[0]

    def search_values(self, observation: dict[str, np.ndarray], view: dict[str, Any],
                      include: Any = ()) -> tuple[int, dict[int, float]]:
        """The search's choice and every candidate's mean value (:attr:`last_values`; empty for a forced
        move). ``include`` adds legal actions to the candidates beyond the usual ones (a learner's own
        choice, so that a network taught by the search hears what its move is worth); an illegal one
        raises ``ValueError``."""
        if self.game is None or self.base_agent is None:
            raise RuntimeError(f"{self.agent_id or type(self).__name__}: act() called before reset(seat, game)")
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if len(legal) == 0:
            raise ValueError(f"{self.agent_id or type(self).__name__}: asked to act with an empty action mask")
        extra = [int(a) for a in include]
        if any(a not in legal for a in extra):
            raise ValueError(f"{self.agent_id or type(self).__name__}: include={extra} names an illegal action; "
                             f"legal are {legal}")
        self.last_values = {}
        if len(legal) == 1:
            return int(legal[0]), {}
        start, cpu = time.perf_counter(), time.process_time()
        default = int(self.base_agent.act(observation, view))
        choice = self._search(default, legal, view, start, extra)
        self.move_times.append(time.perf_counter() - start)
        self.move_cpu_times.append(time.process_time() - cpu)
        return choice, dict(self.last_values)

    def _search(self, default: int, legal: list[int], view: dict[str, Any], start: float,
                include: list[int] | None = None) -> int:
        s, game = self.search, self.game
        rng = random.Random(self.rng.getrandbits(64))
        deadline = start + s["time_ms"] / 1000.0 if s["time_ms"] > 0 else None
        roots = [game.state_from_view(view, rng)]
        candidates = self._candidates(default, legal, roots[0])
        candidates += [a for a in dict.fromkeys(include or ()) if a not in candidates]
        policies = len(self.own_agents)
        # determinizations played together: one at a time, or as many as lockstep rollouts hold
        per_group = max(1, s["lockstep"] // (policies * len(candidates))) if s["lockstep"] else 1
        play = self._play_lockstep if s["lockstep"] else self._play_one_by_one
        totals = np.zeros((policies, len(candidates)))
        done = longest = 0
        while done < s["simulations"]:
            group = []
            for _ in range(min(per_group, s["simulations"] - done)):
                d = done + len(group)
                root = roots[d] if d < len(roots) else game.state_from_view(view, rng)
                group.append((root, rng.getrandbits(32)))
            values, lengths = play(group, candidates)
            for value in values:  # determinization after determinization, as one at a time sums them
                totals += value
            longest = max(longest, int(lengths.max()))
            done += len(group)
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_search = {"simulations": done, "candidates": len(candidates),
                            "rollouts": done * len(candidates) * policies, "longest_rollout": longest}
        means = (totals / done).max(axis=0)  # each candidate at its best continuation
        self.last_values = {int(a): float(v) for a, v in zip(candidates, means)}
        means[0] += s["margin"]  # candidates[0] is the base agent's choice
        return int(candidates[int(np.argmax(means))])  # argmax keeps the first of equals

    def _play_one_by_one(self, group: list[tuple[State, int]], candidates: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every rollout of the ``group``'s determinizations ``(root, seed)``, one after the other: their leaf
        values and lengths, shaped (determinization, rollout policy, candidate)."""
        shape = (len(group), len(self.own_agents), len(candidates))
        values, lengths = np.zeros(shape), np.zeros(shape, dtype=np.int64)
        for d, (root, seed) in enumerate(group):
            for k in range(shape[1]):
                for i, action in enumerate(candidates):
                    child = root.clone()
                    child.apply_unchecked(action)
                    values[d, k, i], lengths[d, k, i] = self._rollout(child, seed, k)
        return values, lengths

    def _candidates(self, default: int, legal: list[int], root: State) -> list[int]:
        """The base agent's choice first, then the other legal actions (the best-looking ones one
        ply ahead when there are more than ``max_candidates``)."""
        others = [a for a in legal if a != default]
        room = self.search["max_candidates"] - 1
        if len(others) > room:
            scores = []
            for a in others:
                child = root.clone()
                child.apply_unchecked(a)
                scores.append(self._leaf(child))
            order = sorted(range(len(others)), key=lambda i: -scores[i])  # stable: ties keep id order
            others = [others[i] for i in order[:room]]
        return [default, *others]

    def _leaf(self, state: State) -> float:
        if state.is_terminal():
            returns = state.returns()
            if not self.search["first_place"]:
                return float(returns[self.seat])
            return first_place_return(returns, self.seat)
        return float(self.value(state, self.seat))

    def _rollout(self, state: State, seed: int, policy: int = 0) -> tuple[float, int]:
        """Play ``state`` on with the rollout agents (the seat's own under rollout policy ``policy``) for at
        most ``horizon`` actions, or (with ``turns``) until the seat is to act for the ``turns``-th time after
        other seats have acted: the seat's leaf value, and the number of actions played."""
        game = self.game
        players = list(self.rollout_agents)
        players[self.seat] = self.own_agents[policy]
        for p, agent in enumerate(players):
            agent.rng.seed(seed + p)
            agent.reset(p, game)
        line = _Line(state)
        for _ in range(self.search["horizon"]):
            p = line.to_act(self.seat, self.search["turns"])
            if p is None:
                break
            action = _forced(state)
            if action is None:
                agent = players[p]
                view = state.player_view(p) if agent.reads_view else {}
                action = int(agent.act(state.seat_observation(p), view))
            state.apply_unchecked(action)
        return self._leaf(state), line.played

    # ------------------------------------------------------------------------------------------
    # Lockstep rollouts: the same rollouts as _rollout, every one of a group advanced one action a step.
    def _play_lockstep(self, group: list[tuple[State, int]], candidates: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_play_one_by_one`'s values and lengths, every rollout of the group advanced together: at each
        step the rollouts whose seat to act is played by a batching agent (``act_batch``) are decided at once,
        one call for all agents of one ``batch_group`` (the seats of one network), each rollout drawing from
        its own generator, seeded as :meth:`_rollout` seeds that seat's agent; any other agent plays rollout
        by rollout, each rollout with its own copy of it, seeded and reset as :meth:`_rollout` does."""
        game, seat, s = self.game, self.seat, self.search
        policies, n = len(self.own_agents), game.num_players
        lines: list[_Line] = []
        for root, seed in group:
            for k in range(policies):
                for action in candidates:
                    child = root.clone()
                    child.apply_unchecked(action)
                    lines.append(_Line(child, seed, k))
        # who plays seat p under rollout policy k: a batching agent shared by the rollouts (its batch group
        # said once), else each rollout's own copy
        shared = [[self.own_agents[k] if p == seat else self.rollout_agents[p] for p in range(n)] for k in range(policies)]
        groups: list[list[Any]] = [[None] * n for _ in range(policies)]
        for k in range(policies):
            for p, agent in enumerate(shared[k]):
                if _batches(agent):
                    agent.reset(p, game)
                    groups[k][p] = _batch_group(agent)
        copies: list[list[Agent | None]] = []
        for j, line in enumerate(lines):
            row: list[Agent | None] = [None] * n
            for p in range(n):
                if groups[line.policy][p] is None:
                    row[p] = agent = self._copy(j, p, line.policy)
                    agent.rng.seed(line.seed + p)
                    agent.reset(p, game)
            copies.append(row)
        active = list(range(len(lines)))
        for _ in range(s["horizon"]):
            batches: dict[Any, tuple[Agent, list[tuple[int, int]]]] = {}  # batch group -> (agent, [(rollout, seat)])
            going = []
            for j in active:
                line = lines[j]
                p = line.to_act(seat, s["turns"])
                if p is None:
                    continue
                going.append(j)
                state = line.state
                action = _forced(state)
                if action is None:
                    key = groups[line.policy][p]
                    if key is not None:
                        batches.setdefault(key, (shared[line.policy][p], []))[1].append((j, p))
                        continue
                    agent = copies[j][p]
                    view = state.player_view(p) if agent.reads_view else {}
                    action = int(agent.act(state.seat_observation(p), view))
                state.apply_unchecked(action)
            for agent, rows in batches.values():
                states = [lines[j].state for j, _ in rows]
                # the mask as seat_observation hands it, uncopied: act_batch only reads it
                observations = [{"observation": game.observe(st, p), "action_mask": st.legal_mask()}
                                for st, (_, p) in zip(states, rows)]
                views = [st.player_view(p) for st, (_, p) in zip(states, rows)] if agent.batch_reads_view else None
                actions = agent.act_batch(observations, views, _RowRandoms(lines, rows))
                for st, action in zip(states, actions):
                    st.apply_unchecked(int(action))
            active = going
            if not active:
                break
        shape = (len(group), policies, len(candidates))
        values = np.asarray(self._leaves([line.state for line in lines]), dtype=np.float64).reshape(shape)
        return values, np.asarray([line.played for line in lines], dtype=np.int64).reshape(shape)

    def _copy(self, row: int, p: int, policy: int) -> Agent:
        """The lockstep rollout ``row``'s own agent for seat ``p`` (under rollout policy ``policy`` at the seat),
        made once and kept for the agent's later searches."""
        key = ("own", policy) if p == self.seat else ("other", p)
        pool = self._copies.setdefault(key, [])
        factory = self.rollout_factories[policy] if p == self.seat else self.opponent_factory
        while len(pool) <= row:
            pool.append(factory(0))  # seeded again before every rollout
        return pool[row]

    def _leaves(self, states: list[State]) -> list[float]:
        """:meth:`_leaf` of every state; a value that scores many states at once (``values(states, seat)``) is
        asked once for all the unfinished ones."""
        many = getattr(self.value, "values", None)
        if many is None:
            return [self._leaf(state) for state in states]
        out = [self._leaf(state) if state.is_terminal() else 0.0 for state in states]
        open_ = [i for i, state in enumerate(states) if not state.is_terminal()]
        for i, value in zip(open_, many([states[i] for i in open_], self.seat)):
            out[i] = float(value)
        return out


class _Line:
    """One rollout under way: its position, the actions played, and the turn count that ``turns`` reads."""

    __slots__ = ("state", "seed", "policy", "played", "turns", "others_moved", "rngs")

    def __init__(self, state: State, seed: int = 0, policy: int = 0) -> None:
        self.state, self.seed, self.policy = state, seed, policy
        self.played = self.turns = 0
        self.others_moved = False
        self.rngs: dict[int, random.Random] = {}

    def rng(self, p: int) -> random.Random:
        """Seat ``p``'s generator in this rollout, seeded as :meth:`RolloutSearchAgent._rollout` seeds the
        seat's agent (made when first drawn from: a greedy network never draws)."""
        rng = self.rngs.get(p)
        if rng is None:
            rng = self.rngs[p] = random.Random(self.seed + p)
        return rng

    def to_act(self, seat: int, turns: int) -> int | None:
        """The seat to play the next action (counted as played), or None where the rollout ends: the game is
        over, or (``turns`` > 0) ``seat`` is to act for the ``turns``-th time after other seats have acted."""
        state = self.state
        if state.is_terminal():
            return None
        p = state.current_player()
        if p != seat:
            self.others_moved = True
        elif self.others_moved:  # the seat's own turn has come round again
            self.turns += 1
            self.others_moved = False
            if self.turns == turns:
                return None
        self.played += 1
        return p


def _forced(state: State) -> int | None:
    """The only legal action, or None where there is a choice (a rollout asks no agent about a forced move)."""
    mask = state.legal_mask()
    if np.count_nonzero(mask) == 1:
        return int(np.flatnonzero(mask)[0])
    return None


class _RowRandoms(Sequence):
    """The generators of a batch's rows, ``(rollout, seat)`` each, made only where the agent draws."""

    def __init__(self, lines: list[_Line], rows: list[tuple[int, int]]) -> None:
        self.lines, self.rows = lines, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> random.Random:  # type: ignore[override]
        j, p = self.rows[i]
        return self.lines[j].rng(p)


def _batch_group(agent: Agent) -> Any:
    """Agents of one batch group choose alike for the same observation and generator, so one of them may
    decide the others' rows (``batch_group()``, as the seats of one network have); else each is its own."""
    group = getattr(agent, "batch_group", None)
    return group() if callable(group) else ("agent", id(agent))


def _batches(agent: Agent) -> bool:
    """Whether ``agent`` decides for many positions at once (``act_batch``, as :class:`PolicyAgent` does)."""
    return callable(getattr(agent, "act_batch", None))


def _search_factory(settings: dict[str, Any]) -> Callable[..., RolloutSearchAgent]:
    def factory(game_name: str, seed: int | None = None, **kwargs: Any) -> RolloutSearchAgent:
        kwargs["search"] = {**settings, **dict(kwargs.get("search") or {})}
        return RolloutSearchAgent(game_name, seed=seed, **kwargs)
    return factory


#: The shipped search agents: search over ``heuristic-v1`` at a fixed number of determinizations
#: (so the play is a function of the seed), sized to stay under half a second a choice on one core.
SHIPPED: dict[str, dict[str, Any]] = {
    "pans_trial_v0": {"simulations": 1, "turns": 3, "horizon": 200, "max_candidates": 6},
    "dojo_v0": {"simulations": 6, "turns": 1, "horizon": 200, "max_candidates": 8},
    "wizard_arena_v0": {"simulations": 8, "turns": 2, "horizon": 200, "max_candidates": 8},
}

#: The search that replaces search-v1 in the default lists, where a game has a newer one.
SHIPPED_NEWEST = {"dojo_v0": "dojo_v0/search-v3", "wizard_arena_v0": "wizard_arena_v0/search-v3"}

for _game, _settings in SHIPPED.items():
    register(f"{_game}/search-v1", _search_factory(_settings),
             f"determinized rollouts over heuristic-v1 ({', '.join(f'{k}={v}' for k, v in _settings.items())})",
             searches=True, superseded_by=SHIPPED_NEWEST.get(_game))


def _search_factory_with(settings: dict[str, Any], **defaults: Any) -> Callable[..., RolloutSearchAgent]:
    """:func:`_search_factory` whose agents take ``defaults`` (``value=``, ``rollout=``, ``opponents=``) unless
    told otherwise."""
    make = _search_factory(settings)

    def factory(game_name: str, seed: int | None = None, **kwargs: Any) -> RolloutSearchAgent:
        return make(game_name, seed=seed, **{**defaults, **kwargs})
    return factory


register("dojo_v0/search-v2", _search_factory_with(SHIPPED["dojo_v0"], value=dojo_fitted_value),
         "search-v1's rollouts over heuristic-v1, their ends scored by a win probability fitted on heuristic-v1 "
         "games", searches=True, superseded_by="dojo_v0/search-v3")

#: ``dojo_v0/search-v3``: ``search-v2`` with four times the determinizations (24 a choice instead of 6):
#: the noise of the Nebbia deck and the other hands averages out further, at about 0.15 s a choice.
DOJO_SEARCH_V3 = {**SHIPPED["dojo_v0"], "simulations": 24}

register("dojo_v0/search-v3", _search_factory_with(DOJO_SEARCH_V3, value=dojo_fitted_value),
         "search-v2 (rollouts over heuristic-v1 scored by the fitted win probability) with 24 determinizations a "
         "choice", searches=True)

#: ``wizard_arena_v0/search-v2``: ``search-v1`` with rollouts to the bot's fourth turn (not its second),
#: their ends scored by :func:`wizard_arena_fitted_value`.
WIZARD_ARENA_SEARCH_V2 = {**SHIPPED["wizard_arena_v0"], "turns": 4}

register("wizard_arena_v0/search-v2", _search_factory_with(WIZARD_ARENA_SEARCH_V2, value=wizard_arena_fitted_value),
         "rollouts over heuristic-v1 to the bot's fourth turn, their ends scored by a ranking estimate fitted on "
         "heuristic-v1 games", searches=True,
         superseded_by="wizard_arena_v0/search-v3")

#: ``wizard_arena_v0/search-v3``: ``search-v2`` with policy switching: every candidate is rolled out with the bot
#: going on as ``heuristic-v1`` and as ``gary-hunter-v1`` (the other bots ``heuristic-v1``) and is worth the better.
register("wizard_arena_v0/search-v3",
         _search_factory_with(WIZARD_ARENA_SEARCH_V2, value=wizard_arena_fitted_value,
                              rollout=("heuristic-v1", "gary-hunter-v1"), opponents="heuristic-v1"),
         "search-v2 with policy switching: each move rolled out with the bot going on as heuristic-v1 and as "
         "gary-hunter-v1, the better counting", searches=True)
