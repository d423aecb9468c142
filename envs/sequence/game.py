"""The Sequence ``Game``: configuration, dealing, observation encoder and renderers."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core import Game, StateError, rng_to_json
from envs.sequence.board import (
    CORNER_SQUARES,
    NON_JACK_KINDS,
    PRINTED_LAYOUT,
    SIZE,
    generated_layout,
    label,
)
from envs.sequence.rules import (
    CORNER,
    EMPTY,
    NUM_ACTIONS,
    NUM_SQUARES,
    PLACE,
    REMOVE,
    WILD,
    SequenceState,
    action_name,
    hand_size,
)

DEFAULTS = {
    "num_teams": 2,
    "players_per_team": 1,
    "sequences_to_win": None,
    "dead_cards": True,
    "layout": "printed",
    "layout_seed": 0,
}

# Observation layout (float32, all values in [0, 1]); see the module docstring of sequence_v0.
BOARD_PLANES = ("own team", "next team", "team after next", "free corners", "locked chips", "empty")
OBS_HAND = len(BOARD_PLANES) * NUM_SQUARES
OBS_DISCARDS = OBS_HAND + 52
OBS_SCALARS = OBS_DISCARDS + 52
SCALARS = (
    "own team's sequences / target",
    "next team's sequences / target",
    "team after next's sequences / target",
    "dead card already used this turn",
    "draw pile size / 104",
    "consecutive passes / players",
)

OBS_SIZE = OBS_SCALARS + len(SCALARS)


class SequenceGame(Game):
    name = "sequence_v0"
    state_class = SequenceState
    version = 0
    reward_range = (-1.0, 1.0)
    default_max_cycles = 500
    board_layout = {
        "channels": len(BOARD_PLANES), "height": SIZE, "width": SIZE, "layout": "planes", "circular": False,
        "square_heads": [[PLACE, NUM_SQUARES], [WILD, NUM_SQUARES], [REMOVE, NUM_SQUARES]],
    }
    config_families = {
        "2p": {},
        "2x2": {"players_per_team": 2},
        "3teams": {"num_teams": 3},
        "3x2-generated-nodead": {"num_teams": 3, "players_per_team": 2, "layout": "generated", "dead_cards": False},
    }
    benchmark_configs = {"2 players": {}, "2 teams of 2": {"players_per_team": 2}, "3 teams": {"num_teams": 3}}
    rule_variants = {
        "no dead cards": {"dead_cards": False},
        "generated layout": {"layout": "generated"},
        "one sequence wins": {"sequences_to_win": 1},
    }
    fuzz_games = 60
    # The game's type (envs.core.game.Game; python -m tools.properties)
    turn_structure = ("sequential",)
    chance = True  # two shuffled decks
    reward_structure = "terminal: +1 every seat of the winning team, -1 every other seat; 0 on a draw or truncation"
    zero_sum = True  # with two teams; __init__ sets False for three (+1/-1/-1)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        cfg = self.config
        self.num_teams = cfg["num_teams"]  # seat i plays for team i % num_teams (team_of)
        self.num_players = cfg["num_teams"] * cfg["players_per_team"]
        self.zero_sum = self.num_teams == 2
        self.num_actions = NUM_ACTIONS
        self.observation_shape = (OBS_SIZE,)
        self.sequences_to_win = cfg["sequences_to_win"] or (2 if self.num_teams == 2 else 1)
        self.hand_size = hand_size(self.num_players)
        self.layout = PRINTED_LAYOUT if cfg["layout"] == "printed" else generated_layout(cfg["layout_seed"])
        squares: dict[int, list[int]] = {}
        for sq, k in enumerate(self.layout):
            if k >= 0:
                squares.setdefault(k, []).append(sq)
        self.squares_of = {k: tuple(v) for k, v in squares.items()}
        self.square_kind = np.array(self.layout, dtype=np.int16)
        self._corner_plane = np.zeros(NUM_SQUARES, dtype=np.float32)
        self._corner_plane[list(CORNER_SQUARES)] = 1.0
        self._zero_plane = np.zeros(NUM_SQUARES, dtype=np.float32)


    def team_of(self, seat: int) -> int:
        return seat % self.num_teams
    def _validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        self.reject_unknown(config, DEFAULTS)
        cfg = dict(DEFAULTS)
        cfg["num_teams"] = self.int_option(config, "num_teams", 2, 2, 3, "2 or 3")
        cfg["players_per_team"] = self.int_option(config, "players_per_team", 1, 1, 4)
        if config.get("sequences_to_win") is not None:
            cfg["sequences_to_win"] = self.int_option(
                config, "sequences_to_win", None, 1, 4,
                "None (2 for two teams, 1 for three) or an integer from 1 to 4")
        cfg["dead_cards"] = self.bool_option(config, "dead_cards", True)
        layout = config.get("layout", "printed")
        if not isinstance(layout, str) or layout not in ("printed", "generated"):
            raise self.config_error("layout", layout, "'printed' or 'generated'")
        cfg["layout"] = layout
        cfg["layout_seed"] = self.int_option(config, "layout_seed", 0, 0, 2**63 - 1, "an integer >= 0 (below 2**63)")
        return cfg

    # ------------------------------------------------------------------------------------------
    def state_from_view(self, view: dict[str, Any], rng: random.Random) -> SequenceState:
        """A full state matching seat ``view['seat']``'s knowledge; other hands and deck resampled."""
        seat = view["seat"]
        pool = [k for k in range(52) for _ in range(2)]
        try:
            for k in list(view["hand"]) + list(view["discards"]):
                pool.remove(k)
        except ValueError:
            raise StateError("view lists more copies of a card than the two decks hold") from None
        rng.shuffle(pool)
        data = {
            "board": view["board"],
            "hands": [],
            "deck": [],
            "discards": view["discards"],
            "sequences": view["sequences"],
            "player": view["current_player"] if view["current_player"] >= 0 else 0,
            "dead_used": view["dead_used"],
            "passes_in_row": view["passes_in_row"],
            "winner": view["winner"],
            "drawn_game": view["drawn_game"],
            "placed": view["placed"],
            "removed": view["removed"],
        }
        for p, size in enumerate(view["hand_sizes"]):
            if p == seat:
                data["hands"].append(list(view["hand"]))
            else:
                data["hands"].append([pool.pop() for _ in range(size)])
        data["deck"] = pool
        data["rng"] = rng_to_json(random.Random(rng.getrandbits(64)))
        return self.load_state(data)

    # ------------------------------------------------------------------------------------------
    def observe(self, state: SequenceState, player: int) -> np.ndarray:
        planes = state.planes
        teams = self.num_teams
        team = player % teams
        target = state.target
        seqs = state.sequences
        scalars = np.array(
            (
                min(1.0, len(seqs[team]) / target),
                min(1.0, len(seqs[(team + 1) % teams]) / target),
                min(1.0, len(seqs[(team + 2) % teams]) / target) if teams == 3 else 0.0,
                state.dead_used,
                len(state.deck) / 104.0,
                min(1.0, state.passes_in_row / self.num_players),
            ),
            dtype=np.float32,
        )
        return np.concatenate(
            (
                planes[team],
                planes[(team + 1) % teams],
                planes[(team + 2) % 3] if teams == 3 else self._zero_plane,
                self._corner_plane,
                state.locked,
                planes[3],
                state.hand_counts[player],
                state.discard_counts,
                scalars,
            )
        )

    # ------------------------------------------------------------------------------------------
    # state(): the referee block of ``encode_state`` (layout in the sequence_v0 docstring)
    @property
    def referee_block_size(self) -> int:
        return (self.num_players + 1) * 52 + 104

    def encode_referee_block(self, state: SequenceState) -> np.ndarray:
        """Every seat's hand (copies of each card kind ÷ 2, seat after seat), the draw pile's contents
        the same way, then its order: slot k holds the k-th card from the top as (kind + 1) / 52, and 0
        once the pile is shorter than k + 1."""
        deck = np.asarray(state.deck, dtype=np.int64)
        contents = np.bincount(deck, minlength=52).astype(np.float32) * 0.5
        order = np.zeros(104, dtype=np.float32)
        order[:len(deck)] = (deck[::-1] + 1) / 52.0  # the top card is the list's last
        return np.concatenate((state.hand_counts.ravel(), contents, order))

    def action_to_string(self, action: int) -> str:
        return action_name(action, self.layout)

    # ------------------------------------------------------------------------------------------
    picture_module = "envs.sequence.picture"
    image_legend = ("chips: red team A, blue team B, green team C (darker: locked in a sequence); grey: free corners")
    end_texts = {"rules": "a team completed its sequences",
                 "blocked": "the table was blocked: no seat could ever place or remove a chip again, a draw"}

    def render_text(self, state: SequenceState) -> str:
        marks = {0: "A", 1: "B", 2: "C"}
        lines = ["    " + "  ".join(f" {c}" for c in range(SIZE))]
        for r in range(SIZE):
            cells = []
            for c in range(SIZE):
                sq = r * SIZE + c
                v = int(state.board[sq])
                if v == CORNER:
                    cells.append("[**]")
                elif v == EMPTY:
                    cells.append(f" {label(self.layout[sq])} ")
                else:
                    lock = "#" if state.locked[sq] else ":"
                    cells.append(f"{lock}{marks[v]}{marks[v]}{lock}")
            lines.append(f"{r:>2} " + "".join(cells))
        seqs = ", ".join(f"team {marks[t]}: {len(s)}" for t, s in enumerate(state.sequences))
        lines.append(f"sequences ({state.target} to win): {seqs}")
        lines.append(f"status: {state.phase}; to act: player_{state.current_player()}"
                     if not state.is_terminal() else f"status: {state.phase}")
        for p, hand in enumerate(state.hands):
            lines.append(f"player_{p} (team {marks[p % self.num_teams]}): {' '.join(label(k) for k in sorted(hand))}")
        lines.append(f"draw pile: {len(state.deck)}  discards: {len(state.discards)}")
        return "\n".join(lines)

    def render_rgb(self, state: SequenceState) -> np.ndarray:
        from envs.core.render import grid_image

        palette = {EMPTY: (235, 228, 210), CORNER: (90, 90, 90), 0: (200, 60, 60), 1: (60, 90, 200), 2: (60, 160, 80)}
        colors = np.zeros((SIZE, SIZE, 3), dtype=np.uint8)
        labels = []
        for r in range(SIZE):
            row = []
            for c in range(SIZE):
                sq = r * SIZE + c
                v = int(state.board[sq])
                col = palette[v]
                if v in (0, 1, 2) and state.locked[sq]:
                    col = tuple(max(0, x - 70) for x in col)
                colors[r, c] = col
                row.append("" if v == CORNER else label(self.layout[sq]))
            labels.append(row)
        return grid_image(colors, cell=28, labels=labels)


__all__ = ["SequenceGame", "NON_JACK_KINDS", "BOARD_PLANES", "SCALARS", "OBS_SIZE"]
