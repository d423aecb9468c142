"""Search at play time on top of a trained actor-critic: determinized lookahead (PIMC).

A trained network gives two things per observation: logits over actions (the policy) and a value
(the return the seat to move expects). :class:`SearchPolicyAgent` uses both at every decision:

1. **Candidates.** The policy's ``top_k`` most likely legal actions (all of them when fewer).
2. **Determinizations.** ``determinizations`` full states consistent with what the seat knows,
   drawn with ``game.state_from_view(view, rng)``: hidden hands and decks sampled, the seat's own
   knowledge kept, and the random generator's future drawn afresh (so in a game with dice and no
   hidden cards, such as Wizard Arena, they are samples of the dice to come).
3. **Lookahead.** In every determinization each candidate is applied to a clone, then every seat
   plays on with the network's most likely legal action (the searching seat for ``rollout_turns``
   more moves of its own) until the searching seat is next to move, or the game ends. All these
   lines are stepped together, one batched forward per ply.
4. **Leaf values.** A finished line scores the searching seat's return; an unfinished one the
   network's value of the searching seat's observation (a seat that is not to move is valued
   through its own observation all the same, since the value head reads the board, not the turn).
5. **Choice.** The candidate with the best mean over the determinizations, plus
   ``prior_weight`` times its probability under the policy (a bounded nudge toward the network's
   own preference, so a line that wins outright is never outweighed); ties go to the more likely
   action.

The agent reads only its seat's observation and view (the determinizations are its own guesses),
so it can sit at any table the plain policy can. Its cost grows with ``determinizations × top_k ×
plies``: the game's ladder (``agents.ladder``) gives each shipped search's CPU time a move.

Settings are validated when the agent is made (:func:`check_search_settings`); an index entry's
``"search"`` block (see :mod:`agents.checkpoint`) is checked the same way.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.policy_agent import PolicyAgent
from agents.policy_io import CheckpointError

#: Every setting with its default and allowed range (inclusive).
SEARCH_SETTINGS: dict[str, tuple[Any, Any, Any]] = {
    "determinizations": (8, 1, 256),
    "top_k": (6, 1, 64),
    "rollout_turns": (0, 0, 16),
    "prior_weight": (0.1, 0.0, 1.0),
    "max_plies": (200, 1, 10_000),
}


def check_ranged_settings(table: dict[str, tuple[Any, Any, Any]], settings: Any, where: str,
                          error: type[Exception] = ValueError, container: str = "a dict") -> dict[str, Any]:
    """``settings`` completed with the defaults of ``table`` (name -> (default, low, high), bounds
    inclusive, the default's type the setting's), or ``error`` naming the setting that is wrong;
    ``container`` names what ``settings`` should be, as its reader knows it."""
    if not isinstance(settings, dict):
        raise error(f"{where} must be {container} of {sorted(table)}, got {type(settings).__name__}")
    unknown = sorted(set(settings) - set(table))
    if unknown:
        raise error(f"{where}: unknown setting(s) {unknown}; allowed: {sorted(table)}")
    out: dict[str, Any] = {}
    for name, (default, low, high) in table.items():
        value = settings.get(name, default)
        if isinstance(default, int):
            ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            kind = "an integer"
        else:
            ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            ok = ok and bool(np.isfinite(value))
            kind = "a number"
        if not ok or not low <= value <= high:
            raise error(f"{where}: {name} must be {kind} in [{low}, {high}], got {value!r}")
        out[name] = type(default)(value)
    return out


def check_search_settings(settings: Any, where: str = "search settings") -> dict[str, Any]:
    """The complete settings (defaults filled in), or a ``CheckpointError`` naming what is wrong."""
    return check_ranged_settings(SEARCH_SETTINGS, settings, where, CheckpointError, "an object")


class SearchPolicyAgent(PolicyAgent):
    """A trained policy that looks ahead before it moves; see the module docstring."""

    def __init__(self, game_name: str, seed: int | None = None, search: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(game_name, seed=seed, **kwargs)
        self.search = check_search_settings(dict(search or {}))

    def _forward(self, observations: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if not hasattr(self.model, "logits_and_value"):
            raise CheckpointError(
                f"{self.agent_id or 'policy'}: search needs a network with a value head "
                f"(logits_and_value); {type(self.model).__name__} has none"
            )
        with torch.no_grad():
            logits, values = self.model.logits_and_value(torch.as_tensor(np.stack(observations)))
        return logits.numpy().astype(np.float64), values.numpy().astype(np.float64)

    @property
    def batch_reads_view(self) -> bool:
        """Always: the determinizations are drawn from the view."""
        return True

    def batch_group(self) -> Any:
        """Its own: each decision searches from the agent's seat."""
        return ("agent", id(self))

    def act_batch(self, observations: Sequence[dict[str, np.ndarray]], views: Sequence[dict[str, Any]] | None = None,
                  rngs: Sequence[random.Random] | None = None) -> list[int]:
        """:meth:`act` row after row (each decision is its own search, batched within itself); row ``i``
        draws its determinizations from ``rngs[i]`` where given, else from :attr:`rng`."""
        if views is None or len(views) != len(observations):
            raise ValueError(f"{self.agent_id or 'policy'}: a search needs one view per observation")
        if rngs is not None and len(rngs) != len(observations):
            raise ValueError(f"act_batch: {len(observations)} observations but {len(rngs)} rngs")
        own, actions = self.rng, []
        try:
            for i, (observation, view) in enumerate(zip(observations, views)):
                self.rng = own if rngs is None else rngs[i]
                actions.append(self.act(observation, view))
        finally:
            self.rng = own
        return actions

    def act(self, observation: dict[str, np.ndarray], view: dict[str, Any]) -> int:
        import torch

        torch.set_num_threads(1)
        if self.model is None:
            self._load()
        mask = np.asarray(observation["action_mask"]).astype(bool)
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError(f"{self.agent_id or 'policy'}: asked to act with an empty action mask")
        if len(legal) == 1:
            return int(legal[0])
        s = self.search
        logits, _ = self._forward([np.asarray(self.observation_vector(observation, view), dtype=np.float32)])
        masked = np.where(mask, logits[0], -np.inf)
        log_prior = masked - masked.max()
        log_prior -= np.log(np.exp(log_prior).sum())
        order = legal[np.argsort(-log_prior[legal], kind="stable")]
        candidates = [int(a) for a in order[: s["top_k"]]]
        if len(candidates) == 1:
            return candidates[0]
        game = self.observer or self.game  # states of the game whose observations the network reads
        dets = s["determinizations"]
        rng = random.Random(self.rng.getrandbits(64))
        totals = np.zeros(len(candidates))
        lines = []  # [candidate index, state, own turns still to play]
        for _ in range(dets):
            root = game.state_from_view(view, rng)
            for ci, action in enumerate(candidates):
                child = root.clone()
                child.apply_unchecked(action)
                lines.append([ci, child, s["rollout_turns"]])
        values = self._lookahead(lines)
        for (ci, _, _), value in zip(lines, values):
            totals[ci] += value
        score = totals / dets + s["prior_weight"] * np.exp([log_prior[a] for a in candidates])
        return candidates[int(np.argmax(score))]  # argmax keeps the first (most likely) of equals

    def _lookahead(self, lines: list[list[Any]]) -> np.ndarray:
        """Play every line on with the network until the seat, after ``rollout_turns`` more moves of
        its own, is to move again (or the game ends, or ``max_plies`` pass); the seat's value of each leaf."""
        game, seat = self.observer or self.game, self.seat
        values = np.zeros(len(lines))
        active = []
        for i, (_, state, _) in enumerate(lines):
            if state.is_terminal():
                values[i] = state.returns()[seat]
            else:
                active.append(i)
        for _ in range(self.search["max_plies"]):
            movers = []
            for i in active:
                state = lines[i][1]
                if state.current_player() == seat:
                    if lines[i][2] == 0:
                        continue  # a leaf: valued below
                    lines[i][2] -= 1
                movers.append(i)
            if not movers:
                break
            logits, _ = self._forward([game.observe(lines[i][1], lines[i][1].current_player()) for i in movers])
            for row, i in enumerate(movers):
                state = lines[i][1]
                mask = state.legal_mask().astype(bool)
                state.apply_unchecked(int(np.argmax(np.where(mask, logits[row], -np.inf))))
                if state.is_terminal():
                    values[i] = state.returns()[seat]
            active = [i for i in active if not lines[i][1].is_terminal()]
        if active:
            _, leaf_values = self._forward([game.observe(lines[i][1], seat) for i in active])
            values[active] = leaf_values
        return values
