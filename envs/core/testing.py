"""Checks that every engine must pass, shipped with the package (as Pgx ships its invariant checker).

The generic tests in ``tests/test_contract.py`` run these for every game and configuration family;
a game's own tests may call them too, and a user adding a rule variant can run them on it.
"""

from __future__ import annotations

import json
import random

import numpy as np

from envs.core.errors import IllegalActionError
from envs.core.game import TERMINAL, Game, State


class ContractViolation(AssertionError):
    """An engine broke the contract or one of its own invariants."""


def check_state(state: State) -> None:
    """Invariants that hold for every state of every game, plus the game's own ``check_invariants``."""
    game = state.game
    mask = state.legal_mask()
    if not isinstance(mask, np.ndarray) or mask.dtype != np.int8 or mask.shape != (game.num_actions,):
        raise ContractViolation(
            f"{game.name}: legal mask must be an int8 array of shape ({game.num_actions},), "
            f"got {type(mask).__name__} {getattr(mask, 'dtype', None)} {getattr(mask, 'shape', None)}"
        )
    if state.is_terminal():
        if mask.any():
            raise ContractViolation(f"{game.name}: terminal state has legal actions")
        if state.current_player() != TERMINAL:
            raise ContractViolation(f"{game.name}: terminal state reports player {state.current_player()}")
        rets = state.returns()
        lo, hi = game.reward_range
        if len(rets) != game.num_players or any(not lo - 1e-9 <= r <= hi + 1e-9 for r in rets):
            raise ContractViolation(f"{game.name}: returns {rets} outside {game.reward_range}")
    else:
        if not mask.any():
            raise ContractViolation(f"{game.name}: non-terminal state in phase {state.phase!r} has no legal action")
        p = state.current_player()
        if not 0 <= p < game.num_players:
            raise ContractViolation(f"{game.name}: current player {p} out of range")
    generated = state.legal_actions()
    if sorted(generated) != np.flatnonzero(mask).tolist():
        raise ContractViolation(
            f"{game.name}: legal_actions() {generated} differs from the mask's {np.flatnonzero(mask).tolist()} "
            f"in phase {state.phase!r}"
        )
    reason = state.end_reason()
    if state.is_terminal() != (reason is not None) or not (reason is None or isinstance(reason, str) and reason):
        raise ContractViolation(
            f"{game.name}: end_reason() is {reason!r} in a {'terminal' if state.is_terminal() else 'live'} state; "
            "it must be None before the end and a short string once terminal"
        )
    problems = state.check_invariants()
    if problems:
        raise ContractViolation(f"{game.name}: invariants broken in phase {state.phase!r}: {problems}")


def random_playout(
    game: Game, seed: int, max_actions: int = 10_000, check_every: int = 1, rng: random.Random | None = None
) -> tuple[State, int]:
    """Play uniformly random legal actions from a fresh seeded state, checking invariants.

    Returns the final state and the number of actions played (stops at ``max_actions``).
    """
    rng = rng or random.Random(seed)
    state = game.new_initial_state(seed)
    n = 0
    check_state(state)
    while not state.is_terminal() and n < max_actions:
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        n += 1
        if n % check_every == 0:
            check_state(state)
    check_state(state)
    return state, n


def check_illegal_actions_raise(state: State) -> None:
    """Every masked-out action (and out-of-range ids) raises IllegalActionError; state unchanged."""
    game = state.game
    before = json.dumps(state.to_dict(), sort_keys=True)
    mask = state.legal_mask()
    candidates = [a for a in np.flatnonzero(mask == 0).tolist()][:50] + [-1, game.num_actions]
    for a in candidates:
        try:
            state.apply_action(a)
        except IllegalActionError as exc:
            if str(a) not in str(exc):
                raise ContractViolation(f"{game.name}: illegal-action error does not name action {a}: {exc}") from exc
        else:
            raise ContractViolation(f"{game.name}: illegal action {a} in phase {state.phase!r} did not raise")
    if json.dumps(state.to_dict(), sort_keys=True) != before:
        raise ContractViolation(f"{game.name}: a rejected action changed the state")


def check_save_restore(state: State, continuation_seed: int = 0, steps: int = 200) -> None:
    """Save → JSON text → load gives a state that continues identically to the original and a clone."""
    game = state.game
    text = json.dumps(game.save(state))
    restored = game.load(json.loads(text))
    twin = state.clone()
    originals = [state.clone(), restored, twin]
    rng_actions = random.Random(continuation_seed)
    for _ in range(steps):
        dumps = [json.dumps(s.to_dict(), sort_keys=True) for s in originals]
        if len(set(dumps)) != 1:
            raise ContractViolation(f"{game.name}: restored/cloned state diverged from the original")
        masks = [s.legal_mask() for s in originals]
        if any(not np.array_equal(masks[0], m) for m in masks[1:]):
            raise ContractViolation(f"{game.name}: restored/cloned state has a different legal mask")
        for p in range(game.num_players):
            obs = [game.observe(s, p) for s in originals]
            if any(not np.array_equal(obs[0], o) for o in obs[1:]):
                raise ContractViolation(f"{game.name}: restored/cloned state observes differently")
        if originals[0].is_terminal():
            break
        legal = originals[0].legal_actions()
        a = legal[rng_actions.randrange(len(legal))]
        for s in originals:
            s.apply_action(a)


def check_hidden_information(state: State, rng: random.Random, samples: int = 3) -> bool:
    """For every seat: resampling what it cannot see leaves its observation and view unchanged.

    Returns True if at least one resample changed the full state beyond its RNG (so the check had
    something hidden to vary); games whose only secret is the RNG return False.
    """
    game = state.game
    varied = False

    def without_rng(s: State) -> str:
        return json.dumps({k: v for k, v in s.to_dict().items() if "rng" not in k}, sort_keys=True)

    full = without_rng(state)
    for p in range(game.num_players):
        view = state.player_view(p)
        json.dumps(view)  # must be JSON-compatible
        obs = game.observe(state, p)
        for _ in range(samples):
            other = game.state_from_view(view, rng)
            if other.player_view(p) != view:
                raise ContractViolation(
                    f"{game.name}: seat {p}'s view changed after resampling hidden information "
                    f"(phase {state.phase!r})"
                )
            if not np.array_equal(game.observe(other, p), obs):
                raise ContractViolation(
                    f"{game.name}: seat {p}'s observation depends on information it cannot see "
                    f"(phase {state.phase!r})"
                )
            if not state.is_terminal() and state.current_player() == p:
                if not np.array_equal(other.legal_mask(), state.legal_mask()):
                    raise ContractViolation(
                        f"{game.name}: seat {p}'s legal actions depend on information it cannot see"
                    )
            if without_rng(other) != full:
                varied = True
    return varied

