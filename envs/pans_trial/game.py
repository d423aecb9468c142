"""Pan's Trial: config, observation encoder, action names, renderers and (de)serialisation."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from envs.core import Game, rng_to_json
from envs.pans_trial import rules as R

DEFAULT_TRUMP_ORDER = ["walls", "traps", "ballista", "weapons"]
#: Highest damage_threshold allowed. Measured with seeded random play (30 games per value, at most
#: 3,000 actions): every game ended up to a threshold of 75 (median 192 actions at 75), only 21 of
#: 30 did at 100 and none at 200. 60 keeps every game finishing with a wide margin.
MAX_DAMAGE_THRESHOLD = 60
#: Every action's name, by id (the same for every config, so made once rather than per game).
ACTION_NAMES: tuple[str, ...] = tuple(R.action_name(a) for a in range(R.NUM_ACTIONS))

# ------------------------------------------------------------------------------------------------
# Observation layout (from the point of view of the observing seat: "my" = that seat)
BOARD_FEATURES = (
    "card_present", "suit_C", "suit_D", "suit_H", "suit_S",
    "role_walls", "role_traps", "role_ballista", "role_weapons",
    "value", "me_here", "opponent_here", "hole",
)
NB = len(BOARD_FEATURES)
OBS_BLOCKS = (
    ("board", R.NUM_SQUARES * NB),  # per square (row-major) the 13 features above
    ("suit_roles", 16),  # suit s has role r at 4*s + r (zeros until the Omens are revealed)
    ("omens_revealed", 1),
    ("my_hand", 52),
    ("opponent_hand", 52),
    ("my_damage", 52),
    ("opponent_damage", 52),
    ("damage_totals", 2),  # mine, opponent's: min(1, total / damage_threshold)
    ("draft_pool", 52),
    ("phase", len(R.OBS_PHASES)),
    ("flags", 8),  # see FLAG_NAMES
    ("my_appease_card", 52),
    ("appease_submitted", 2),  # me, opponent (whether, never which)
    ("appease_result", 2),  # I won, I lost (during requests and placement)
    ("first_request", 4),  # the Appeasing winner's request, once chosen
    ("steal_card", 52),  # the requester's own damage card chosen for Steal Life
    ("pending_loser_card", 52),  # played cards waiting to be placed: the loser's own
    ("pending_winner_card", 52),  # and the winner's
    ("strikers", 2),  # combat: I still strike, the opponent still strikes
)
FLAG_NAMES = (
    "my_turn_to_act", "my_traverse_turn", "turns_left", "my_forced_passes", "opponent_forced_passes",
    "only_passes_this_phase", "i_am_player_0", "i_took_last_turn",
)

OFFSET: dict[str, int] = {}
_o = 0
for _name, _size in OBS_BLOCKS:
    OFFSET[_name] = _o
    _o += _size
OBS_SIZE = _o

_BOARD_SIZE = R.NUM_SQUARES * NB
_O_SUIT_ROLES = OFFSET["suit_roles"]
_O_REVEALED = OFFSET["omens_revealed"]
_O_MY_HAND = OFFSET["my_hand"]
_O_OPP_HAND = OFFSET["opponent_hand"]
_O_MY_DMG = OFFSET["my_damage"]
_O_OPP_DMG = OFFSET["opponent_damage"]
_O_TOTALS = OFFSET["damage_totals"]
_O_POOL = OFFSET["draft_pool"]
_O_PHASE = OFFSET["phase"]
_O_FLAGS = OFFSET["flags"]
_O_MY_APPEASE = OFFSET["my_appease_card"]
_O_SUBMITTED = OFFSET["appease_submitted"]
_O_RESULT = OFFSET["appease_result"]
_O_FIRST_REQUEST = OFFSET["first_request"]
_O_STEAL = OFFSET["steal_card"]
_O_PENDING_LOSER = OFFSET["pending_loser_card"]
_O_PENDING_WINNER = OFFSET["pending_winner_card"]
_O_STRIKERS = OFFSET["strikers"]

_CARD_ROWS = np.zeros((R.NUM_CARDS + 1, NB), dtype=np.float32)  # row 52 (index -1) = hole
for _c in range(R.NUM_CARDS):
    _CARD_ROWS[_c, 0] = 1.0
    _CARD_ROWS[_c, 1 + R.SUIT_OF[_c]] = 1.0
    _CARD_ROWS[_c, 9] = R.VALUE[_c] / 12.0
_CARD_ROWS[R.NUM_CARDS, 12] = 1.0


_HOLE_ROW = _CARD_ROWS[R.NUM_CARDS].copy()


class _CardCache:
    """Both seats' card-dependent observation parts, updated in place by the rules' small changes.

    Only the observation encoder reads it; :class:`~envs.pans_trial.rules.PansTrialState` calls the
    methods below when a card moves in one of the frequent ways and drops the cache otherwise.
    """

    __slots__ = ("arrs", "thr", "table")

    def __init__(self, arr0: np.ndarray, arr1: np.ndarray, thr: int, table: np.ndarray) -> None:
        self.arrs = (arr0, arr1)
        self.thr = thr
        self.table = table  # per-card square features under the current roles

    def copy(self) -> _CardCache:
        return _CardCache(self.arrs[0].copy(), self.arrs[1].copy(), self.thr, self.table)

    def board_set(self, sq: int, c: int) -> None:
        row = self.table[c]
        for arr in self.arrs:
            arr[sq * NB: sq * NB + NB] = row

    def hole(self, sq: int) -> None:
        for arr in self.arrs:
            arr[sq * NB: sq * NB + NB] = _HOLE_ROW

    def hand_add(self, p: int, c: int) -> None:
        self.arrs[p][_O_MY_HAND + c] = 1.0
        self.arrs[1 - p][_O_OPP_HAND + c] = 1.0

    def hand_remove(self, p: int, c: int) -> None:
        self.arrs[p][_O_MY_HAND + c] = 0.0
        self.arrs[1 - p][_O_OPP_HAND + c] = 0.0

    def damage_add(self, p: int, c: int, total: int) -> None:
        mine, theirs = self.arrs[p], self.arrs[1 - p]
        mine[_O_MY_DMG + c] = 1.0
        theirs[_O_OPP_DMG + c] = 1.0
        x = min(1.0, total / self.thr)
        mine[_O_TOTALS] = x
        theirs[_O_TOTALS + 1] = x

    def pool_remove(self, c: int) -> None:
        self.arrs[0][_O_POOL + c] = 0.0
        self.arrs[1][_O_POOL + c] = 0.0


class PansTrialGame(Game):
    """Pan's Trial for two players (see ``envs/pans_trial_v0.py`` for the documentation)."""

    name = "pans_trial_v0"
    state_class = R.PansTrialState
    version = 0
    reward_range = (-1.0, 1.0)
    default_max_cycles = 500
    board_layout = {  # the ballista's landing square, then the two placement holes
        "channels": NB, "height": R.SIZE, "width": R.SIZE, "layout": "squares", "circular": True,
        "square_heads": [[R.A_TARGET, R.NUM_SQUARES], [R.A_PLACE, R.NUM_SQUARES],
                         [R.A_PLACE + R.NUM_SQUARES, R.NUM_SQUARES]],
        # the planes marking the seat's own square and the opponent's (a network's optional focus)
        "focus_channels": [10, 11],
    }
    config_families = {
        "default": {},
        "no-draft": {"draft": False},
        "variant": {
            "trump_order": ["weapons", "ballista", "traps", "walls"],
            "first_player": 0,
            "damage_threshold": 15,
        },
    }
    benchmark_configs = {"default": {}}
    rule_variants = {
        "no draft": {"draft": False},
        "weapons trump": {"trump_order": ["weapons", "ballista", "traps", "walls"]},
    }
    fuzz_games = 40
    fuzz_max_actions = 3000
    # The game's type (envs.core.game.Game; python -m tools.properties)
    turn_structure = ("sequential", "out-of-turn decisions", "simultaneous choices")  # Appeasing cards
    chance = True  # shuffled deal, secret Omen order
    reward_structure = "terminal: +1 win, -1 loss; 0 on a stalemate or truncation"
    zero_sum = True
    observation_low = 0.0
    observation_high = 1.0

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.num_players = 2
        self.num_actions = R.NUM_ACTIONS
        self.observation_shape = (OBS_SIZE,)
        order = self.config["trump_order"]
        #: strength of each role in Appeasing (higher beats lower)
        self.trump_strength = [3 - order.index(name) for name in R.ROLE_NAMES]
        self._tables: dict[Any, np.ndarray] = {}
        self._blocks: dict[tuple, np.ndarray] = {}

    def _validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        known = {"damage_threshold", "first_player", "draft", "trump_order"}
        self.reject_unknown(config, known)
        thr = self.int_option(config, "damage_threshold", 25, 1, MAX_DAMAGE_THRESHOLD)
        first = self.int_option(config, "first_player", 1, 0, 1, "0 or 1 (the seat that begins Traversing)")
        draft = self.bool_option(config, "draft", True)
        order = config.get("trump_order", DEFAULT_TRUMP_ORDER)
        if not isinstance(order, (list, tuple)) or sorted(map(str, order)) != sorted(R.ROLE_NAMES) \
                or len(order) != 4 or not all(isinstance(x, str) for x in order):
            raise self.config_error(
                "trump_order", order, f"a list of the four role names {list(R.ROLE_NAMES)}, strongest first"
            )
        return {"damage_threshold": thr, "first_player": first, "draft": draft,
                "trump_order": list(order)}

    # ------------------------------------------------------------------------------------------
    def state_from_view(self, view: dict[str, Any], rng: random.Random) -> R.PansTrialState:
        """A full state matching ``view``: unrevealed Omen order, the opponent's secret Appeasing
        card and the RNG are drawn from ``rng``."""
        me = int(view["seat"])
        d = dict(view)
        if view["omens"] is None:
            omens = list(R.JACKS)
            rng.shuffle(omens)
            d["omens"] = omens
            d["suit_role"] = R.suit_roles_from_omens(omens)
        cards = [-1, -1]
        cards[me] = int(view["my_appease_card"])
        opp = 1 - me
        if view["appease_submitted"][opp]:
            hand = view["hands"][opp]
            cards[opp] = hand[rng.randrange(len(hand))]
        d["appease_card"] = cards
        d["rng"] = rng_to_json(random.Random(rng.getrandbits(64)))
        for key in ("seat", "appease_submitted", "my_appease_card"):
            del d[key]
        return self.load_state(d)

    # ------------------------------------------------------------------------------------------
    def _role_table(self, state: R.PansTrialState) -> np.ndarray:
        """Per-card square features (row -1 = hole) under the state's current roles."""
        key = tuple(state.suit_role) if state.revealed else None
        table = self._tables.get(key)
        if table is None:
            table = _CARD_ROWS.copy()
            if key is not None:
                for c in range(R.NUM_CARDS):
                    table[c, 5 + key[R.SUIT_OF[c]]] = 1.0
            self._tables[key] = table
        return table

    def _board_block(self, state: R.PansTrialState) -> np.ndarray:
        """A full-size observation holding only the per-square card features (cached by board)."""
        key = (tuple(state.board), tuple(state.suit_role) if state.revealed else None)
        block = self._blocks.get(key)
        if block is None:
            table = self._role_table(state)
            block = np.zeros(OBS_SIZE, dtype=np.float32)
            block[:_BOARD_SIZE] = table[state.board].reshape(-1)
            if len(self._blocks) > 4096:
                self._blocks.clear()
            self._blocks[key] = block
        return block

    def _card_part(self, state: R.PansTrialState, me: int) -> np.ndarray:
        """Everything that changes only when a card moves or a role changes (cached on the state)."""
        op = 1 - me
        obs = self._board_block(state).copy()
        hands, damage = state.hands, state.damage
        ones = [_O_MY_HAND + c for c in hands[me]]
        ones.extend([_O_OPP_HAND + c for c in hands[op]])
        ones.extend([_O_MY_DMG + c for c in damage[me]])
        ones.extend([_O_OPP_DMG + c for c in damage[op]])
        if state.pool:
            ones.extend([_O_POOL + c for c in state.pool])
        if state.revealed:
            sr = state.suit_role
            ones.extend((_O_SUIT_ROLES + sr[0], _O_SUIT_ROLES + 4 + sr[1], _O_SUIT_ROLES + 8 + sr[2],
                         _O_SUIT_ROLES + 12 + sr[3], _O_REVEALED))
        if ones:
            obs[ones] = 1.0
        thr = self.config["damage_threshold"]
        obs[_O_TOTALS] = min(1.0, state.dmg_total[me] / thr)
        obs[_O_TOTALS + 1] = min(1.0, state.dmg_total[op] / thr)
        return obs

    def observe(self, state: R.PansTrialState, player: int) -> np.ndarray:
        me, op = player, 1 - player
        cache = state.obs_cache
        if cache is None:
            cache = state.obs_cache = _CardCache(self._card_part(state, 0), self._card_part(state, 1),
                                                 self.config["damage_threshold"], self._role_table(state))
        obs = cache.arrs[me].copy()
        ones = [state.pos[me] * NB + 10, state.pos[op] * NB + 11, _O_PHASE + state.obs_phase()]
        if state.winner is None and state.actor == me:
            ones.append(_O_FLAGS)
        if state.active == me:
            ones.append(_O_FLAGS + 1)
        if state.only_passes:
            ones.append(_O_FLAGS + 5)
        if me == 0:
            ones.append(_O_FLAGS + 6)
        if state.last_turn == me:
            ones.append(_O_FLAGS + 7)
        stage = state.stage
        if stage == R.APPEASE:
            card = state.appease_card[me]
            if card >= 0:
                ones.append(_O_MY_APPEASE + card)
                ones.append(_O_SUBMITTED)
            if state.appease_card[op] >= 0:
                ones.append(_O_SUBMITTED + 1)
        elif stage == R.COMBAT:
            if me in state.strikers:
                ones.append(_O_STRIKERS)
            if op in state.strikers:
                ones.append(_O_STRIKERS + 1)
        w = state.appease_winner
        if w >= 0:
            ones.append(_O_RESULT + (0 if w == me else 1))
            if state.first_request >= 0:
                ones.append(_O_FIRST_REQUEST + state.first_request)
            if state.steal_card >= 0:
                ones.append(_O_STEAL + state.steal_card)
            if state.pending[0] >= 0:
                ones.append(_O_PENDING_LOSER + state.pending[0])
            if state.pending[1] >= 0:
                ones.append(_O_PENDING_WINNER + state.pending[1])
        for i in ones:
            obs[i] = 1.0
        obs[_O_FLAGS + 2] = state.turns_left / R.TURNS_PER_PHASE
        if state.forced[me]:
            obs[_O_FLAGS + 3] = state.forced[me] / R.FORCED_PASSES
        if state.forced[op]:
            obs[_O_FLAGS + 4] = state.forced[op] / R.FORCED_PASSES
        return obs

    # ------------------------------------------------------------------------------------------
    # state(): the referee block of ``encode_state`` (layout in the pans_trial_v0 docstring)
    referee_block_size = 4 * 4 + 4 * 4 + 2 * R.NUM_CARDS + R.NUM_CARDS + 3

    def encode_referee_block(self, state: R.PansTrialState) -> np.ndarray:
        """The Omen order (suit of the k-th jack, one-hot per position), the suit roles (role of
        suit s, one-hot per suit), each seat's Appeasing card, the two undrafted kings, the winner
        (seat 0, seat 1, draw): the secrets before their reveal and the end, whatever the phase."""
        out = np.zeros(self.referee_block_size, dtype=np.float32)
        for k, jack in enumerate(state.omens):
            out[4 * k + R.SUIT_OF[jack]] = 1.0
        for suit, role in enumerate(state.suit_role):
            out[16 + 4 * suit + role] = 1.0
        for seat, card in enumerate(state.appease_card):
            if card >= 0:
                out[32 + R.NUM_CARDS * seat + card] = 1.0
        for card in state.identity:
            out[32 + 2 * R.NUM_CARDS + card] = 1.0
        if state.winner is not None:
            out[32 + 3 * R.NUM_CARDS + state.winner] = 1.0
        return out

    def action_to_string(self, action: int) -> str:
        return ACTION_NAMES[action]

    # ------------------------------------------------------------------------------------------
    def _square_token(self, state: R.PansTrialState, s: int) -> str:
        c = state.board[s]
        if c < 0:
            tok = " .  "
        else:
            role = "?WTBX"[1 + state.suit_role[R.SUIT_OF[c]]] if state.revealed else "?"
            tok = f"{R.card_name(c):>3}{role}"
        marks = "".join(str(q) for q in (0, 1) if state.pos[q] == s)
        return f"{tok}{marks:<2}"

    picture_module = "envs.pans_trial.picture"
    image_legend = ("grey walls, red traps, blue ballista, yellow weapons (light grey: roles not yet revealed), black: a hole; "
                    "white disc player_0, black disc player_1")
    end_texts = {"damage": "a player's damage reached {damage_threshold}; the other player wins",
                 "only-passes": "a whole phase of nothing but passes would repeat forever: a draw"}

    def render_text(self, state: R.PansTrialState) -> str:
        lines = [f"Pan's Trial  phase={state.phase}  "
                 f"{'to act: player_' + str(state.actor) if state.winner is None else 'game over'}"]
        if state.revealed:
            roles = ", ".join(f"{R.SUITS[s]}={R.ROLE_NAMES[r]}" for s, r in enumerate(state.suit_role))
            lines.append(f"roles: {roles}   (W wall, T trap, B ballista, X weapon; digits = players)")
        else:
            lines.append("roles: hidden until the Omens are revealed")
        lines.append("     " + "".join(f"  c{c}   " for c in range(R.SIZE)))
        for r in range(R.SIZE):
            lines.append(f"r{r}  " + " ".join(self._square_token(state, r * R.SIZE + c) for c in range(R.SIZE)))
        for p in (0, 1):
            hand = " ".join(R.card_name(c) for c in state.hands[p]) or "-"
            dmg = " ".join(R.card_name(c) for c in state.damage[p]) or "-"
            lines.append(f"player_{p}: hand [{hand}]  damage {state.dmg_total[p]} [{dmg}]  "
                         f"forced passes {state.forced[p]}")
        if state.pool:
            lines.append("draft pool: " + " ".join(R.card_name(c) for c in state.pool))
        if state.stage == R.TRAVERSE:
            lines.append(f"Traversing: player_{state.active} to move, {state.turns_left} turn(s) left")
        if state.winner is not None:
            lines.append("result: draw" if state.winner == R.DRAW else f"result: player_{state.winner} wins")
        return "\n".join(lines)

    def render_rgb(self, state: R.PansTrialState) -> np.ndarray:
        from PIL import Image, ImageDraw

        cell = 64
        w, h = cell * R.SIZE, cell * R.SIZE + 90
        img = Image.new("RGB", (w, h), (245, 240, 225))
        draw = ImageDraw.Draw(img)
        colours = [(90, 90, 90), (200, 60, 60), (70, 110, 200), (220, 170, 40)]
        for s in range(R.NUM_SQUARES):
            r, c = divmod(s, R.SIZE)
            x, y = c * cell, r * cell
            card = state.board[s]
            fill = (30, 30, 30) if card < 0 else (
                colours[state.suit_role[R.SUIT_OF[card]]] if state.revealed else (170, 170, 170))
            draw.rectangle([x + 2, y + 2, x + cell - 3, y + cell - 3], fill=fill)
            if card >= 0:
                draw.text((x + 6, y + 6), R.card_name(card), fill=(255, 255, 255))
            for q, col in ((0, (255, 255, 255)), (1, (0, 0, 0))):
                if state.pos[q] == s:
                    off = 18 * q
                    draw.ellipse([x + 22 + off, y + 30, x + 38 + off, y + 46], fill=col, outline=(255, 0, 255))
        y = cell * R.SIZE + 4
        for p in (0, 1):
            hand = " ".join(R.card_name(c) for c in state.hands[p])
            draw.text((4, y), f"P{p} dmg {state.dmg_total[p]} hand {hand}", fill=(0, 0, 0))
            y += 16
        draw.text((4, y), f"phase {state.phase}", fill=(0, 0, 0))
        return np.asarray(img, dtype=np.uint8)
