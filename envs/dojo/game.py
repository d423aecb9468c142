"""The Dojo engine's :class:`Game`: config, board, observation encoder, action names, renderers."""

from __future__ import annotations

import array
import random
from typing import Any

import numpy as np

from envs.core import Game, StateError, rng_to_json
from envs.dojo.board import (
    DIR_NAMES, KINDS, NUM_SQUARES, SIZE, BoardError, load_board, rc,
)
from envs.dojo.cards import CARD_COUNTS, CARD_NAMES, DECK_SIZE, IS_TECNICA, NUM_KINDS, TECNICA
from envs.dojo.rules import (
    A_KEEP, A_PASS, A_PLAY, A_ROOM, A_SEGRETO, A_STEP, A_TARGET, A_TUNNEL, KUMITE_KINDS,
    NUM_FIXED_ACTIONS, PHASE_INDEX, PHASES, SEAT_CORNERS, TARGET_PURPOSES, TRACK_MAX, DojoState, WalkOracle, belt_of,
)

#: Fill colours of joined Tunnel pairs in the image (pair i gets colour i, cycling).
TUNNEL_COLOURS = ((90, 150, 255), (255, 170, 40), (40, 190, 190), (190, 90, 230), (150, 110, 60), (110, 200, 60))
BELT_NAMES = ("White", "Yellow", "Orange", "Green", "Blue", "Brown", "Black")
MAX_SEATS = 8

#: Boolean switches of the original rules' "tested alternatives" (all False by default) and the shorter game.
BOOL_SWITCHES = (
    "exam_ties_to_defender", "exam_best_of_three", "exam_defender_own_belt", "fatica_on_stop_only",
    "kumite_first_round", "first_player_extra_stripe", "short_game",
)

DEFAULTS: dict[str, Any] = {
    "num_players": 4, "board_file": None, **{k: False for k in BOOL_SWITCHES},
    "kiai_bonus": 2, "failed_exam_cost": 3,
}

_BOARD_CACHE: dict[Any, tuple] = {}

# ---- observation layout -------------------------------------------------------------------------
STATIC_PLANES = 7 + 2 + 4 + 1 + 1  # kinds, safe room, dojo, open N/E/S/W, entrance square, my room
PAWN_PLANES = MAX_SEATS
MOVE_PLANES = 2  # visited this move, start square of this move
PLANES = STATIC_PLANES + PAWN_PLANES + MOVE_PLANES
SEAT_FEATURES = 16
GLOBAL_FEATURES = (3 + len(PHASES) + len(TARGET_PURPOSES) + 7 + 3 + 3 + len(KUMITE_KINDS) + 2
                   + NUM_KINDS + 1 + NUM_KINDS + 1)
OBS_SIZE = PLANES * NUM_SQUARES + MAX_SEATS * SEAT_FEATURES + GLOBAL_FEATURES
_PAWN_BASE = STATIC_PLANES * NUM_SQUARES
_MOVE_BASE = _PAWN_BASE + PAWN_PLANES * NUM_SQUARES
_SEAT_BASE = PLANES * NUM_SQUARES
_GLOBAL_BASE = _SEAT_BASE + MAX_SEATS * SEAT_FEATURES
# offsets inside the global block: hand (3), phase, purpose, misc (7), played (3+3), kumite kind,
# exam bout wins (2), discards seen by kind (13) + hidden discards (1), last card drawn (13 + "a Tecnica")
_PURPOSE_OFF = 3 + len(PHASES)
_MISC_OFF = _PURPOSE_OFF + len(TARGET_PURPOSES)
_PLAYED_OFF = _MISC_OFF + 7
_KIND_OFF = _PLAYED_OFF + 6
_WINS_OFF = _KIND_OFF + len(KUMITE_KINDS)
_DISCARD_OFF = _WINS_OFF + 2
_LAST_OFF = _DISCARD_OFF + NUM_KINDS + 1


def _board_for(path):
    key = path
    if key not in _BOARD_CACHE:
        board = load_board(path)
        _BOARD_CACHE[key] = (board, WalkOracle(board))
    return _BOARD_CACHE[key]


class DojoGame(Game):
    """Il Labirinto del Dojo, 2-8 players (see ``envs/dojo_v0.py`` for the documentation)."""

    name = "dojo_v0"
    state_class = DojoState
    version = 0
    reward_range = (-1.0, 1.0)
    default_max_cycles = 1000
    board_layout = {"channels": PLANES, "height": SIZE, "width": SIZE, "layout": "planes", "circular": False, "square_heads": [],
                    # the seat's own pawn plane (the pawn planes come in the observer's seat order): a network's
                    # optional focus, since every step is taken from that square
                    "focus_channels": [STATIC_PLANES]}
    config_families = {
        "2p": {"num_players": 2},
        "4p": {"num_players": 4},
        "8p": {"num_players": 8},
        "4p-alternatives": {
            "num_players": 4, "exam_ties_to_defender": True, "exam_best_of_three": True,
            "exam_defender_own_belt": True, "kiai_bonus": 1, "failed_exam_cost": 1,
            "fatica_on_stop_only": True, "kumite_first_round": True, "first_player_extra_stripe": True,
            "short_game": True,
        },
    }
    benchmark_configs = {"2p": {"num_players": 2}, "4p": {"num_players": 4}, "8p": {"num_players": 8}}
    # Random players almost never reach Brown, so random games rarely end; the generic fuzz test
    # plays budgeted games, and tests/dojo/test_dojo_env.py adds a step-budgeted fuzz plus
    # heuristic-agent games that do reach the Final Exam.
    rule_variants = {
        "short_game": {"short_game": True},
        "exam_ties_to_defender": {"exam_ties_to_defender": True},
        "exam_best_of_three": {"exam_best_of_three": True},
        "exam_defender_own_belt": {"exam_defender_own_belt": True},
        "kiai_bonus=1": {"kiai_bonus": 1},
        "failed_exam_cost=0": {"failed_exam_cost": 0},
        "failed_exam_cost=1": {"failed_exam_cost": 1},
        "fatica_on_stop_only": {"fatica_on_stop_only": True},
        "kumite_first_round": {"kumite_first_round": True},
        "first_player_extra_stripe": {"first_player_extra_stripe": True},
    }
    fuzz_games = 12
    fuzz_max_actions = 2500
    fuzz_may_not_finish = True
    # The game's type (envs.core.game.Game; python -m tools.properties)
    turn_structure = ("sequential", "out-of-turn decisions")  # Kumite defence, Tecnica windows
    chance = True  # dice, the Nebbia deck
    reward_structure = "terminal: +1 the Black Belt winner, -1/(n-1) every other seat; 0 all on truncation"
    zero_sum = True
    observation_low = 0.0
    observation_high = 1.0

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.num_players = self.config["num_players"]
        self.board, self.oracle = _board_for(self.config["board_file"])
        self.num_tunnels = len(self.board.tunnels)
        self.num_actions = NUM_FIXED_ACTIONS + self.num_tunnels
        self.observation_shape = (OBS_SIZE,)
        n = self.num_players
        self._order = [[(p + i) % n for i in range(n)] for p in range(n)]
        self._rel = [[(q - p) % n for q in range(n)] for p in range(n)]
        #: per observer: (seat, start of its pawn plane), in the observer's seat order
        self._pawn_planes = [[(q, _PAWN_BASE + i * NUM_SQUARES) for i, q in enumerate(order)] for order in self._order]
        self._template = []
        for p in range(n):
            t = np.zeros(OBS_SIZE, dtype=np.float32)
            t[:_PAWN_BASE] = self._static_planes(p)
            for i in range(n):
                t[_SEAT_BASE + i * SEAT_FEATURES] = 1.0  # seat present
            self._template.append(array.array("f", t.tolist()))
        self._discard_cache: dict[tuple, array.array] = {}
        #: legal masks of the movement phase, by the bit set of legal directions
        self.step_masks = []
        for code in range(16):
            m = np.zeros(self.num_actions, dtype=np.int8)
            for d in range(4):
                if code >> d & 1:
                    m[A_STEP + d] = 1
            self.step_masks.append(m)
        self._names = [self._action_name(a) for a in range(self.num_actions)]

    # ------------------------------------------------------------------------------------------
    def _validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        self.reject_unknown(config, set(DEFAULTS))
        out = dict(DEFAULTS)
        out["num_players"] = self.int_option(config, "num_players", 4, 2, MAX_SEATS)
        for key in BOOL_SWITCHES:
            out[key] = self.bool_option(config, key, False)
        out["kiai_bonus"] = self.int_option(config, "kiai_bonus", 2, 1, 2, "1 or 2")
        cost = self.int_option(config, "failed_exam_cost", 3, 0, 3, "0, 1 or 3")
        if cost not in (0, 1, 3):
            raise self.config_error("failed_exam_cost", cost, "0, 1 or 3")
        out["failed_exam_cost"] = cost
        bf = config.get("board_file")
        if bf is not None:
            if not isinstance(bf, str):
                raise self.config_error("board_file", bf, "None (the standard board) or a path string")
            try:
                _board_for(bf)
            except BoardError as exc:
                raise self.config_error("board_file", bf, f"a valid board file ({exc})") from None
        out["board_file"] = bf
        return out

    def state_from_view(self, view: dict[str, Any], rng: random.Random) -> DojoState:
        seat = view["seat"]
        pool = list(CARD_COUNTS)
        for c in view["hands"][seat]:
            pool[c] -= 1
        for c in view["discard"]:
            if c is not None:
                pool[c] -= 1
        tec = [k for k in TECNICA for _ in range(pool[k])]
        rng.shuffle(tec)
        hands = []
        for q, h in enumerate(view["hands"]):
            if q == seat:
                hands.append(list(h))
            else:
                hands.append([tec.pop() for _ in range(h)])
        discard = []
        for c in view["discard"]:
            discard.append(tec.pop() if c is None else c)
        for k in TECNICA:
            pool[k] = 0
        deck = tec + [k for k in range(NUM_KINDS) if not IS_TECNICA[k] for _ in range(pool[k])]
        if len(deck) != view["deck"]:
            raise StateError(f"view is inconsistent: {len(deck)} unknown cards for a deck of {view['deck']}")
        rng.shuffle(deck)
        data = dict(view)
        del data["seat"]
        data["deck"] = deck
        data["hands"] = hands
        data["discard"] = discard
        data["dice_script"] = []
        data["rng"] = rng_to_json(random.Random(rng.getrandbits(64)))
        return self.load_state(data)

    # ------------------------------------------------------------------------------------------
    # observation
    def _static_planes(self, seat: int) -> np.ndarray:
        b = self.board
        planes = np.zeros((STATIC_PLANES, NUM_SQUARES), dtype=np.float32)
        corner = SEAT_CORNERS[self.num_players][seat]
        for s in range(NUM_SQUARES):
            if b.room[s] >= 0:
                planes[7, s] = 1
                if b.room[s] == corner:
                    planes[14, s] = 1
            elif b.dojo[s]:
                planes[8, s] = 1
            else:
                planes[b.kind[s], s] = 1
            for d in range(4):
                if b.step[s][d] >= 0:
                    planes[9 + d, s] = 1
            if b.entry[s] >= 0:
                planes[13, s] = 1
        return planes.reshape(-1)

    def observe(self, state: DojoState, player: int) -> np.ndarray:
        # Speed matters here (one call per env step). The vector is built in a Python
        # ``array.array`` copied from a per-seat template (static planes, "seat present" flags):
        # single-element writes to it are several times cheaper than numpy scalar or fancy-index
        # writes; numpy then wraps the buffer without copying.
        a = self._template[player][:]
        pos = state.pos
        hands = state.hands
        for q, at in self._pawn_planes[player]:
            s = pos[q]
            if s >= 0:
                a[at + s] = 1.0
        # The seats block in seat order comes from the state's cache; the observer's comes first.
        seats = self._seat_block(state)
        split = _SEAT_BASE + (self.num_players - player) * SEAT_FEATURES
        a[_SEAT_BASE:split] = seats[player * SEAT_FEATURES:]
        a[split:split + player * SEAT_FEATURES] = seats[:player * SEAT_FEATURES]
        if state.main_phase != "setup" and state.mv_start >= 0:
            for x in state.mv_squares:
                a[_MOVE_BASE + x] = 1.0
            a[_MOVE_BASE + NUM_SQUARES + state.mv_start] = 1.0
        rel = self._rel[player]
        actor = state.current_player()
        for j, who in enumerate((state.turn_player, actor, state.k_att, state.k_def, state.first_player)):
            if who >= 0:
                a[_SEAT_BASE + rel[who] * SEAT_FEATURES + 11 + j] = 1.0
        g = _GLOBAL_BASE
        mine = hands[player]
        if mine:
            for c in mine:
                a[g + TECNICA.index(c)] += 0.5
        a[g + 3 + PHASE_INDEX[state.phase]] = 1.0
        if state.purpose:
            a[g + _PURPOSE_OFF + TARGET_PURPOSES.index(state.purpose)] = 1.0
        o = g + _MISC_OFF
        steps = state.mv_steps
        a[o] = (steps if steps < 12 else 12) / 12
        a[o + 1] = state.roll / 12
        if state.mv_extra:
            a[o + 2] = 1.0
        if state.turn_index < self.num_players and not self.config["kumite_first_round"]:
            a[o + 3] = 1.0
        a[o + 4] = len(state.deck) / 22
        if state.k_kind:
            a[o + 5] = state.k_dice[0] / 6
            a[o + 6] = state.k_dice[1] / 6
            for role in (0, 1):
                c = state.k_played[role]
                if c >= 0:
                    a[g + _PLAYED_OFF + 3 * role + TECNICA.index(c)] = 1.0
            a[g + _KIND_OFF + KUMITE_KINDS.index(state.k_kind)] = 1.0
            a[g + _WINS_OFF] = state.k_wins[0] / 2
            a[g + _WINS_OFF + 1] = state.k_wins[1] / 2
        if state.last_card >= 0:
            a[g + _LAST_OFF + state.last_card] = 1.0
        elif state.last_card == -2:
            a[g + _LAST_OFF + NUM_KINDS] = 1.0
        if state.discard:
            key = (player, tuple(state.discard), tuple(state.discard_owner))
            block = self._discard_cache.get(key)
            if block is None:
                block = self._discard_block(state, player)
                if len(self._discard_cache) > 50_000:
                    self._discard_cache.clear()
                self._discard_cache[key] = block
            base = g + _DISCARD_OFF
            a[base:base + NUM_KINDS + 1] = block
        return np.frombuffer(a, "f")  # float32, sharing the buffer

    def _seat_block(self, state: DojoState) -> array.array:
        """Every seat's features 0-10 (present, track, belt, holds a Tecnica, meditating guard
        and skip), in seat order. Cached on the state (``obs_cache``), keyed by copies of the
        lists they come from; any change, including direct edits of those lists, rebuilds it."""
        track, hands, guard, skip = state.track, state.hands, state.med_guard, state.med_skip
        cache = state.obs_cache
        if cache is None or not (cache[0] == track and cache[1] == hands and cache[2] == guard
                                 and cache[3] == skip):
            block = array.array("f", bytes(4 * SEAT_FEATURES * self.num_players))
            for q in range(self.num_players):
                o = q * SEAT_FEATURES
                t = track[q]
                block[o] = 1.0
                block[o + 1] = t / TRACK_MAX
                block[o + 2 + t // 3] = 1.0
                if hands[q]:
                    block[o + 8] = 1.0
                if guard[q]:
                    block[o + 9] = 1.0
                if skip[q]:
                    block[o + 10] = 1.0
            cache = state.obs_cache = (list(track), [list(h) for h in hands], list(guard), list(skip), block)
        return cache[4]

    @staticmethod
    def _discard_block(state: DojoState, player: int) -> array.array:
        """Face-up discards by kind (/copies) and the number of hidden face-down ones (/7)."""
        hidden = 0
        seen = [0] * NUM_KINDS
        for c, owner in zip(state.discard, state.discard_owner):
            if owner == -1 or owner == player:
                seen[c] += 1
            else:
                hidden += 1
        return array.array("f", [a / b for a, b in zip(seen, CARD_COUNTS)] + [hidden / 7])

    # ------------------------------------------------------------------------------------------
    def _action_name(self, a: int) -> str:
        if a < A_ROOM:
            return f"step {DIR_NAMES[a - A_STEP]}"
        if a < A_PASS:
            i = a - A_ROOM
            return f"room square {i // 3},{i % 3}"
        if a == A_PASS:
            return "pass"
        if a == A_PLAY:
            return "play Tecnica"
        if a == A_TUNNEL:
            return "take Tunnel"
        if a < A_TARGET:
            return f"keep {CARD_NAMES[TECNICA[a - A_KEEP]]}"
        if a < A_SEGRETO:
            return f"target seat+{a - A_TARGET + 1}"
        r, c = rc(self.board.tunnels[a - A_SEGRETO])
        return f"Tunnel Segreto to {r},{c}"

    # ------------------------------------------------------------------------------------------
    # state(): the referee block of ``encode_state`` (layout in the dojo_v0 docstring)
    @property
    def referee_block_size(self) -> int:
        return self.num_players * len(TECNICA) + 2 * NUM_KINDS + DECK_SIZE + self.num_players

    def encode_referee_block(self, state: DojoState) -> np.ndarray:
        """Every seat's Tecnica (Kiai, Uke, Kaeshi held ÷ 2, seat after seat), every discard by kind
        (face down too, ÷ copies), the deck's contents by kind (÷ copies), the deck's order (slot k:
        the k-th card from the top as (kind + 1) / 13, 0 once the deck is shorter), the winner's
        seat one-hot."""
        n = self.num_players
        copies = np.asarray(CARD_COUNTS, dtype=np.float32)
        hands = np.zeros((n, len(TECNICA)), dtype=np.float32)
        for seat, hand in enumerate(state.hands):
            for card in hand:
                hands[seat, TECNICA.index(card)] += 0.5
        deck = np.asarray(state.deck, dtype=np.int64)
        discard = np.bincount(np.asarray(state.discard, dtype=np.int64), minlength=NUM_KINDS) / copies
        contents = np.bincount(deck, minlength=NUM_KINDS) / copies
        order = np.zeros(DECK_SIZE, dtype=np.float32)
        order[:len(deck)] = (deck[::-1] + 1) / NUM_KINDS  # the top card is the list's last
        winner = np.zeros(n, dtype=np.float32)
        if state.winner >= 0:
            winner[state.winner] = 1.0
        return np.concatenate((hands.ravel(), discard, contents, order, winner)).astype(np.float32)

    def action_to_string(self, action: int) -> str:
        return self._names[action]

    # ------------------------------------------------------------------------------------------
    def play_statistics(self, state: DojoState) -> dict[str, float]:
        stats = state.stats
        return {
            "turns": stats["turns"], "rounds": stats["turns"] / state.n, "exam_attempts": stats["exam_attempts"],
            "kumite": stats["kumite"], "cards": stats["cards"],
        }

    picture_module = "envs.dojo.picture"
    image_legend = ("digits: pawns; A Allenamento, F Fatica, ? Nebbia, P Passo Falso, K Sfida; T1..Tn joined Tunnels; "
                    "dark: the Dojo (green edges: its entrances); white: Safe Rooms; black edges: walls")
    end_texts = {"rules": "a player passed the Final Exam and wears the Black Belt"}

    def render_text(self, state: DojoState) -> str:
        """The board as drawn in a board file (walls ``|``/``-``, Dojo entrances ``:``/``=``) with
        row and column numbers, pawns as seat digits (``*`` for several on one square), the
        Tunnel pairs, then one line per seat and the turn."""
        b = self.board
        marks = {}
        for q in range(self.num_players):
            s = state.pos[q]
            if s >= 0:
                marks[s] = "*" if s in marks else str(q)
        lines = ["    " + " ".join(str(c % 10) for c in range(SIZE))]
        for y, row in enumerate(b.drawing(marks)):
            lines.append((f"{y // 2:2d} " if y % 2 else "   ") + row)
        pairs = ", ".join(f"{rc(a)}-{rc(t)}" for a, t in b.tunnel_pairs())
        lines.append(f"walls | -, Dojo entrances : =, Tunnels joined: {pairs}")
        lines.append("")
        for q in range(self.num_players):
            t = state.track[q]
            s = state.pos[q]
            where = f"{rc(s)}" if s >= 0 else "off board"
            flags = []
            if state.hands[q]:
                flags.append(f"{len(state.hands[q])} Tecnica")
            if state.med_guard[q]:
                flags.append("meditating")
            lines.append(f"player_{q}: track {t:2d} ({BELT_NAMES[belt_of(t)]}) at {where} {' '.join(flags)}")
        if state.is_terminal():
            lines.append(f"player_{state.winner} wears the Black Belt")
        else:
            lines.append(
                f"turn of player_{state.turn_player}, phase {state.phase}, player_{state.current_player()} "
                f"to act; roll {state.roll}, steps left {state.mv_steps}; deck {len(state.deck)}"
            )
        return "\n".join(lines)

    def render_rgb(self, state: DojoState) -> np.ndarray:
        """The board as an image: square kinds by colour and letter, walls black, Dojo entrances
        green, each pair of joined Tunnels in its own colour and numbered alike (``T1`` and
        ``T1``), pawns as seat digits."""
        from envs.core.render import grid_image

        b = self.board
        palette = {".": (235, 225, 200), "A": (150, 220, 150), "F": (230, 140, 120), "?": (180, 180, 240),
                   "T": (120, 120, 120), "P": (240, 200, 120), "K": (240, 120, 200)}
        colors = np.zeros((SIZE, SIZE, 3), dtype=np.uint8)
        labels = [["" for _ in range(SIZE)] for _ in range(SIZE)]
        for s in range(NUM_SQUARES):
            r, c = rc(s)
            if b.room[s] >= 0:
                colors[r, c] = (255, 255, 255)
            elif b.dojo[s]:
                colors[r, c] = (60, 60, 60)
            else:
                colors[r, c] = palette[KINDS[b.kind[s]]]
                if b.kind[s]:
                    labels[r][c] = KINDS[b.kind[s]]
        for i, pair in enumerate(b.tunnel_pairs()):
            for t in pair:
                r, c = rc(t)
                colors[r, c] = TUNNEL_COLOURS[i % len(TUNNEL_COLOURS)]
                labels[r][c] = f"T{i + 1}"
        for q in range(self.num_players):
            s = state.pos[q]
            if s >= 0:
                r, c = rc(s)
                labels[r][c] = (labels[r][c] + str(q))[-2:]
        edges = [(rc(a), rc(c), (20, 20, 20)) for a, c in (sorted(e) for e in b.walls)]
        edges += [(rc(a), rc(c), (40, 200, 60)) for a, c in (sorted(e) for e in b.entrances)]
        return grid_image(colors, labels=labels, edges=edges)

