"""Wizard Arena as an engine: configuration, initial states, observations and rendering."""

from __future__ import annotations

import array
import math
import random
from itertools import compress
from operator import ne
from typing import Any

import numpy as np

from envs.core import Game, rng_to_json
from envs.wizard_arena.map import FOREST, MOUNTAIN, ArenaMap
from envs.wizard_arena.rules import (
    ACTION_NAMES,
    ALLY,
    DEFAULT_TIE_BREAK,
    GARY,
    MOVE,
    NUM_ACTIONS,
    REWARD,
    TIE_BREAKS,
    ArenaState,
)

LOCAL_RADIUS = 3  # the local window is (2R+1) x (2R+1) cells centred on the seat's bot
OUTSIDE_WINDOW = 255  # a cell's place in a window (see ``_places_in_window``) when it lies outside
WINDOW_CENTRE = LOCAL_RADIUS * (2 * LOCAL_RADIUS + 1) + LOCAL_RADIUS  # the bot's own place in its window
#: The places in the window at distance at most 1 from its centre.
NEAR_CENTRE = frozenset(WINDOW_CENTRE + dr * (2 * LOCAL_RADIUS + 1) + dc for dr in (-1, 0, 1) for dc in (-1, 0, 1))
CHANNELS = ("terrain", "self", "own party", "other bots", "gravestones", "Gary")
OWN_FEATURES = (
    "alive", "hp", "max_hp", "strength", "score", "solo", "leader", "follower", "party size",
    "row", "col", "Gary row", "Gary col", "Gary within 1", "side strength",
    "phase move", "phase ally", "phase gary", "phase reward", "time left", "quiet time left",
)
#: Per bot in the table; each row then ends with ``n`` more values: a one-hot of the table row of
#: the bot's leader (a living solo or leader points at its own row; the dead at none).
TABLE_FEATURES = (
    "alive", "hp", "max_hp", "strength", "score", "acts (solo or leader)", "in a party",
    "same side as me", "party size", "row", "col", "asks me to ally", "side strength", "place in line",
)

#: Named features that ``observation_version`` 2 (the default) adds after ``TABLE_FEATURES`` in every
#: row: 1 when the bot's seat comes before the observer's (the rules break ties by the lower seat: who
#: leads a new party, which side acts first), and 1 when the bot and the observer are a declined pair
#: (two solos side by side that are not asked to ally again until they have stood apart). Version 1,
#: the original observation, had neither, so a seat could not tell either rule's outcome.
EXTRA_TABLE_FEATURES = ("seat before mine", "declined me")
#: What each of the 9 move-phase choices (the 8 steps in action order, then stay) does to a walking
#: distance, in the "walking" blocks of ``observation_version`` 3: 1 one step nearer, 0.5 as near, 0
#: farther (or the step is onto an obstacle or off the map, or the goal cannot be reached).
MOVE_CHOICES = tuple(ACTION_NAMES[:9])
#: Version 3 adds to every bots-table row (after the version 2 features) the walking distance from the
#: observer's bot to that bot round the terrain, over twice the map size and capped at 1 (1: cannot be
#: reached; 0 on the observer's own row and for the dead), then what each move choice does to it; and
#: after the table one more block, the same for Gary. Walking distances are what every plan to meet a
#: bot or Gary is measured in; a few convolutions cannot work them out round long obstacles.
WALK_FEATURES = ("walking distance",) + tuple(f"nearer by {name}" for name in MOVE_CHOICES)
OBSERVATION_VERSIONS = (1, 2, 3)
DEFAULT_OBSERVATION_VERSION = 2
STRENGTH_SCALE = 100.0  # tenths: 10.0 strength reads as 1
SIDE_STRENGTH_SCALE = 400.0
#: Score s reads as ``0.5 + s / (2·(abs(s) + SCORE_HALF))``: 0 → 0.5, ±20 → 0.75/0.25, 60 → 0.875; never
#: capped, always inside (0, 1).
SCORE_HALF = 20.0
#: Where strength, alive and leader_of sit in the key of a state's observation cache (``_stats_cache``):
#: the stats a bot's line-mates' rows depend on (side strength, party size, place in line).
_LINE_STATS = (1, 3, 4)


def score_feature(score: int) -> float:
    """The observation's value for a score (monotone, strictly inside (0, 1))."""
    return 0.5 + score / (2.0 * (abs(score) + SCORE_HALF))


def _number(game: Game, key: str, value: Any, default: float, lo: float, hi: float) -> float:
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise game.config_error(key, value, f"a number in [{lo}, {hi}]")
    if not lo <= value <= hi:
        raise game.config_error(key, value, f"a number in [{lo}, {hi}]")
    return float(value)


class WizardArenaGame(Game):
    """Wizard Arena: see ``envs/wizard_arena_v0.py`` and ``envs/wizard_arena/RULES.md``."""

    name = "wizard_arena_v0"
    state_class = ArenaState
    version = 0
    reward_range = (-1.0, 1.0)
    default_max_cycles = 400
    config_families = {
        "6bots": {},
        "2bots": {"num_bots": 2, "map_size": 8},
        "16bots": {"num_bots": 16},
        "no-health": {"health": 0, "gary_roams": True},
    }
    # Perfect information: only the random generator's future is unknown to the seats.
    hidden_information = False
    # observation_version changes only the encoding: a policy trained on version 3 plays at a version 2 table.
    observation_keys = ("observation_version",)
    benchmark_configs = {"6 bots": {}, "16 bots": {"num_bots": 16}, "6 bots, observation 3": {"observation_version": 3}}
    rule_variants = {
        "no health": {"health": 0},
        "Gary roams": {"gary_roams": True},
        **{f"ties: {rule}": {"alliance_tie_break": rule} for rule in TIE_BREAKS if rule != DEFAULT_TIE_BREAK},
    }
    fuzz_games = 12
    fuzz_max_actions = 1500
    # The game's type (envs.core.game.Game; python -m tools.properties)
    turn_structure = ("sequential", "out-of-turn decisions")  # a solo asked to ally answers out of turn
    chance = True  # generated map, D20 bouts
    reward_structure = "terminal, every seat: 1 - 2(rank-1)/(n-1) by score then strength (ties share); also on truncation"
    zero_sum = True
    observation_low = 0.0
    observation_high = 1.0

    KEYWORDS = ("num_bots", "health", "map_size", "terrain_density", "initial_strength", "gary_strength",
                "gary_roams", "observation_version", "alliance_tie_break")

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        cfg = self.config
        self.num_players = cfg["num_bots"]
        self.num_actions = NUM_ACTIONS
        self.size = cfg["map_size"]
        w = 2 * LOCAL_RADIUS + 1
        self.global_len = len(CHANNELS) * self.size * self.size
        # The global planes open the observation; the local window and the tables follow.
        self.board_layout = {
            "channels": len(CHANNELS), "height": self.size, "width": self.size, "layout": "planes",
            "circular": False, "square_heads": [],
        }
        self.local_len = len(CHANNELS) * w * w
        self.table_offset = self.global_len + self.local_len + len(OWN_FEATURES)
        #: values per bot in the table: the named features (``EXTRA_TABLE_FEATURES`` last from observation
        #: version 2), then the one-hot of its leader's row
        version = cfg["observation_version"]
        self.table_features = (TABLE_FEATURES + (EXTRA_TABLE_FEATURES if version >= 2 else ())
                               + (WALK_FEATURES if version >= 3 else ()))
        self.row_len = len(self.table_features) + self.num_players
        #: where the Gary walking block starts (after the table; version 3), or -1
        self.gary_walk_offset = self.table_offset + self.num_players * self.row_len if version >= 3 else -1
        self.observation_shape = (self.table_offset + self.num_players * self.row_len
                                  + (len(WALK_FEATURES) if version >= 3 else 0),)
        #: The default cap in actions that the observation's "time left" counts down to; an
        #: environment tells each state its own (``ArenaState.set_step_limit``, from ``max_cycles``).
        self.step_limit = self.default_max_cycles * self.num_players
        self._maps: dict[tuple[str, ...], ArenaMap] = {}
        n = self.num_players
        ss = self.size * self.size
        self._orders = [[(p + k) % n for k in range(n)] for p in range(n)]
        last = max(1, self.size - 1)
        self._row_int = [c // self.size for c in range(ss)]
        self._col_int = [c % self.size for c in range(ss)]
        self._row_list = [r / last for r in self._row_int]  # normalised row/col features by cell
        self._col_list = [c / last for c in self._col_int]
        #: per cell, its (row, col) features as one array (written into a bots-table row in one slice)
        self._row_col = [array.array("f", rc) for rc in zip(self._row_list, self._col_list)]
        #: per centre cell (filled on demand): every cell's index in the window, or OUTSIDE_WINDOW
        self._window_places: list[bytes | None] = [None] * ss
        self.own_offset = self.global_len + self.local_len
        self.window_cells = w * w
        #: where channel ch starts, on the global planes and in the local window
        self._plane_offsets = [ch * ss for ch in range(len(CHANNELS))]
        self._local_offsets = [self.global_len + ch * w * w for ch in range(len(CHANNELS))]
        #: the own-stats feature set to 1 in each phase (none once the game is over)
        own = self.own_offset
        self._phase_feature = {MOVE: own + 15, ALLY: own + 16, GARY: own + 17, REWARD: own + 18}
        self._time_left_at = own + OWN_FEATURES.index("time left")
        #: where "seat before mine" and "declined me" sit in a table row (-1: not in this observation version)
        self._seat_at, self._declined_at = (
            self.table_features.index(name) if name in self.table_features else -1 for name in EXTRA_TABLE_FEATURES
        )
        #: where the walking block sits in a table row (-1: not in this observation version)
        self._walk_at = self.table_features.index(WALK_FEATURES[0]) if version >= 3 else -1
        self._walk_scale = 1.0 / (2 * self.size)
        #: a bots-table row's features after observation version 1's (``TABLE_FEATURES``), as ``_write_seat``
        #: leaves them for ``observe``: zeros
        self._row_extra = (0.0,) * (len(self.table_features) - len(TABLE_FEATURES))
        # The bots table, for networks that read every row alike; from version 3 each row (and the
        # Gary block after the table) says what each move choice does to its walking distance.
        self.table_layout = {
            "offset": self.table_offset, "rows": self.num_players, "row_len": self.row_len,
            "row_actions": [[self._walk_at + 1, 0, len(MOVE_CHOICES)]] if version >= 3 else [],
            "action_blocks": [[self.gary_walk_offset + 1, 0, len(MOVE_CHOICES)]] if version >= 3 else [],
        }
        self._template_key = "observation terrain"
        #: what follows the terrain plane at the start of every observation: zeros, one array for every
        #: map (a whole template per map made each observation read kilobytes more from memory when many
        #: tables share a process)
        self._zeros_after_plane = array.array("f", bytes(4 * (self.observation_shape[0] - ss)))
        # Every mark an observer's table can hold, (bot, its row/col feature, its channel's start on the
        # global planes and in the window) by observer, table row and channel: the states' caches
        # list these shared tuples instead of building their own. With many tables in one process
        # (envs.vector) the per-state tuples, and the int objects in them, were scattered over
        # megabytes that every observation read again.
        self._marks = [[[(i, self.table_offset + j * self.row_len + 9, self._plane_offsets[ch], self._local_offsets[ch])
                         for ch in range(len(CHANNELS))] for j, i in enumerate(self._orders[p])] for p in range(n)]

    def _validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        self.reject_unknown(config, self.KEYWORDS)
        out: dict[str, Any] = {}
        out["num_bots"] = self.int_option(config, "num_bots", 6, 2, 16)
        out["health"] = self.int_option(config, "health", 10, 0, 1000)
        out["map_size"] = self.int_option(config, "map_size", 16, 6, 64)
        out["terrain_density"] = _number(self, "terrain_density", config.get("terrain_density"), 0.15, 0.0, 0.5)
        for key, default in (("initial_strength", 1.0), ("gary_strength", 3.0)):
            value = _number(self, key, config.get(key), default, 0.1, 100.0)
            if abs(value * 10 - round(value * 10)) > 1e-6:
                raise self.config_error(key, value, "a multiple of 0.1 in [0.1, 100]")
            out[key] = round(value, 1)
        roams = config.get("gary_roams", False)
        if not isinstance(roams, bool):
            raise self.config_error("gary_roams", roams, "True or False")
        out["gary_roams"] = roams
        tie = config.get("alliance_tie_break", DEFAULT_TIE_BREAK)
        if tie not in TIE_BREAKS:
            raise self.config_error("alliance_tie_break", tie, f"one of {list(TIE_BREAKS)}")
        out["alliance_tie_break"] = tie
        version = config.get("observation_version", DEFAULT_OBSERVATION_VERSION)
        if isinstance(version, bool) or version not in OBSERVATION_VERSIONS:
            raise self.config_error("observation_version", version, f"one of {list(OBSERVATION_VERSIONS)}")
        out["observation_version"] = int(version)
        free = out["map_size"] ** 2 * (1.0 - out["terrain_density"])
        if free < 4 * out["num_bots"] + 4:
            raise self.config_error(
                "map_size", out["map_size"],
                f"large enough that about {4 * out['num_bots'] + 4} cells stay free for {out['num_bots']} bots "
                f"at terrain_density {out['terrain_density']}",
            )
        return out

    # -----------------------------------------------------------------------------------------
    def intern_map(self, arena: ArenaMap) -> ArenaMap:
        """The one shared map object for this terrain (states on the same terrain share its tables)."""
        key = tuple(arena.rows())
        known = self._maps.get(key)
        if known is not None:
            return known
        if len(self._maps) > 256:
            self._maps.clear()
        self._maps[key] = arena
        return arena

    def map_for_rows(self, rows: list[str]) -> ArenaMap:
        """The map drawn by ``rows`` (already checked: ``map_size`` strings of ``map_size``
        characters ``.MF``), shared with every state on the same terrain."""
        known = self._maps.get(tuple(rows))
        return known if known is not None else self.intern_map(ArenaMap.from_rows(list(rows)))

    def state_from_view(self, view: dict[str, Any], rng: random.Random) -> ArenaState:
        # Nothing is hidden but the random generator's future: draw a fresh one.
        data = {k: v for k, v in view.items() if k != "seat"}
        data["rng"] = rng_to_json(random.Random(rng.getrandbits(64)))
        return self.load_state(data)

    def observe_view(self, view: dict[str, Any], seat: int, table_game: Game,
                     table_observation: np.ndarray) -> np.ndarray:
        # The view has no step limit (the table's max_cycles): "time left" comes from the table's own.
        obs = np.array(super().observe_view(view, seat, table_game, table_observation))
        obs[self._time_left_at] = table_observation[table_game._time_left_at]
        return obs

    # ------------------------------------------------------------------------------------------
    # state(): the referee block of ``encode_state`` (layout in the wizard_arena_v0 docstring)
    @property
    def referee_block_size(self) -> int:
        return self.num_players * self.num_players + 3 * self.num_players + 1

    def encode_referee_block(self, state: ArenaState) -> np.ndarray:
        """What seat 0's observation shows only from its own side: the declined pairs among all bots
        (an n x n symmetric matrix), the alliance question under way (the moving bot one-hot, the
        solo it met one-hot; who answers now is the seat to act), the bots already met on this
        step, and whether a respawn happened this step. Nothing here is secret."""
        n = self.num_players
        declined = np.zeros((n, n), dtype=np.float32)
        for a, b in state.declined:
            declined[a, b] = declined[b, a] = 1.0
        mover, met_solo, met = (np.zeros(n, dtype=np.float32) for _ in range(3))
        if state.ally is not None:
            mover[state.ally[0]] = 1.0
            met_solo[state.ally[1]] = 1.0
        met[list(state.met)] = 1.0
        respawned = np.array([float(state.respawned)], dtype=np.float32)
        return np.concatenate((declined.ravel(), mover, met_solo, met, respawned))

    def action_to_string(self, action: int) -> str:
        return ACTION_NAMES[action]

    # -----------------------------------------------------------------------------------------
    # Observation
    #
    # Speed matters here (one call per env step). The vector is assembled in a Python
    # ``array.array("f")``: copying a template and writing single elements into it costs far less
    # than numpy scalar or fancy-index writes, and numpy wraps the buffer at the end without a copy.
    # Three caches leave each call little more than the marks that move every step:
    #
    # * per game: the zeros that follow the terrain plane, and every mark an observer's table can
    #   hold;
    # * per map (``ArenaMap.cache``, shared by every clone; the terrain never changes): the
    #   global terrain plane, and the 7x7 terrain window around each cell (all built the first
    #   time the map is observed);
    # * per state (``ArenaState.obs_cache``, see ``_stats_cache``): every seat's bots-table row and
    #   own-stats block without positions, and for each observer asked so far its own-stats block
    #   and rotated table (one array, as they lie in the observation) and which channel and table
    #   row each bot is written to. It is keyed by copies of the lists
    #   those values come from (HP, strength, score, alive, leader_of, max HP; party sizes and side
    #   strengths follow from leader_of and strength); any difference, including edits made
    #   directly to the state's lists, replaces it by a new one that rewrites only the rows of the
    #   lines whose stats changed (and keeps the observers' channels unless leader_of or alive
    #   changed). Entries depend on nothing else, and nothing in a cache is changed once written
    #   but the per-observer entries filled on demand, so clones may share it.
    #
    # Bot positions are written on every call. The observation is not kept per observer to rewrite
    # what moved since: in play each seat is observed once per round, and by then most bots have
    # moved (random play with 16 bots: 15 in the median case), so erasing and rewriting costs more.
    # Nor is a board shared by all observers kept up to date: a line moves all its members, and
    # moving the seat's own party to its own channels costs as much as the writes it saves.
    def _terrain(self, arena: ArenaMap) -> tuple[array.array, array.array]:
        """(the global terrain plane; the terrain channel of the 7x7 window centred on each cell, cell
        by cell, beyond the edge impassable), kept in the map's cache."""
        cached = arena.cache.get(self._template_key)
        if cached is None:
            s, r, w = arena.size, LOCAL_RADIUS, 2 * LOCAL_RADIUS + 1
            terrain = (np.array(arena.terrain).reshape(s, s) != 0).astype(np.float32)
            padded = np.ones((s + 2 * r, s + 2 * r), dtype=np.float32)
            padded[r:r + s, r:r + s] = terrain
            # All windows at once, in one array operation: over a game that costs less than building
            # each the first time a bot stands on its centre. The window of cell c is values
            # [c·49, (c+1)·49).
            windows = np.lib.stride_tricks.sliding_window_view(padded, (w, w))
            cached = arena.cache[self._template_key] = (array.array("f", terrain.tobytes()),
                                                        array.array("f", windows.tobytes()))
        return cached

    def _places_in_window(self, centre: int) -> bytes:
        """Every cell's index in the window centred on ``centre`` (row-major), ``OUTSIDE_WINDOW``
        outside it. Bytes, not a tuple of ints: an eighth of the memory, and all centres are in use
        when many tables share a process."""
        places = self._window_places[centre]
        if places is None:
            w = 2 * LOCAL_RADIUS + 1
            top, left = self._row_int[centre] - LOCAL_RADIUS, self._col_int[centre] - LOCAL_RADIUS
            places = self._window_places[centre] = bytes(
                (r - top) * w + (c - left) if 0 <= r - top < w and 0 <= c - left < w else OUTSIDE_WINDOW
                for r, c in zip(self._row_int, self._col_int)
            )
        return places

    def observe(self, state: ArenaState, player: int) -> np.ndarray:
        arena = state.map
        plane, windows = arena.cache.get(self._template_key) or self._terrain(arena)
        # The stats part: rebuilt when any stat differs from what the state's cache was built for.
        cache = state.obs_cache
        if cache is None or cache[0] != (state.hp, state.strength, state.score, state.alive, state.leader_of,
                                         state.max_hp):
            cache = state.obs_cache = self._stats_cache(state, cache)
        blocks = cache[3].get(player)
        if blocks is None:
            blocks = cache[3][player] = self._observer_blocks(state, player, cache)
        stats, marks = blocks
        pos, alive = state.pos, state.alive
        here = pos[player]
        a = plane + self._zeros_after_plane  # the global terrain plane, then zeros
        g, w2 = self.global_len, self.window_cells
        a[g:g + w2] = windows[here * w2:here * w2 + w2]  # local terrain channel
        own = self.own_offset
        a[own:own + len(stats)] = stats

        # Every bot on its plane (global, and local when inside the window) and its row and
        # column in the bots table; which plane and which table row came with ``marks``.
        row_col = self._row_col
        in_window = self._window_places[here]
        if in_window is None:
            in_window = self._places_in_window(here)
        for i, at, on_plane, on_local in marks:
            cell = pos[i]
            a[at:at + 2] = row_col[cell]
            a[on_plane + cell] = 1.0
            j = in_window[cell]
            if j != OUTSIDE_WINDOW:
                a[on_local + j] = 1.0
        if not alive[player]:
            a[self._plane_offsets[1] + here] = 1.0
            a[self._local_offsets[1] + WINDOW_CENTRE] = 1.0
        phase = state.phase
        if phase == ALLY and player in state.ally:
            ally = state.ally
            partner = ally[1] if ally[0] == player else ally[0]
            a[self.table_offset + (partner - player) % state.n * self.row_len + 11] = 1.0  # asks me to ally
        if state.declined and self._declined_at >= 0:
            for pair in state.declined:
                if player in pair:
                    other = pair[1] if pair[0] == player else pair[0]
                    a[self.table_offset + (other - player) % state.n * self.row_len + self._declined_at] = 1.0
        gary = state.gary
        if self._walk_at >= 0 and alive[player]:
            choices = (*arena.step[here], here)
            k = self.row_len
            at = self.table_offset + self._walk_at
            for j, i in enumerate(self._orders[player]):
                if j and alive[i]:
                    self._write_walk(a, at + j * k, arena.walking_distances(pos[i]), here, choices)
            self._write_walk(a, self.gary_walk_offset, arena.walking_distances(gary), here, choices)
        # Gary on his plane and in the own stats, with the seat's own place and the phase.
        a[self._plane_offsets[5] + gary] = 1.0
        j = in_window[gary]
        if j != OUTSIDE_WINDOW:
            a[self._local_offsets[5] + j] = 1.0
            if j in NEAR_CENTRE:
                a[own + 13] = 1.0  # Gary within 1
        a[own + 9:own + 11] = row_col[here]
        a[own + 11:own + 13] = row_col[gary]
        phase_at = self._phase_feature.get(phase)
        if phase_at is not None:
            a[phase_at] = 1.0
        left = 1.0 - state.actions_taken / state.step_limit
        a[self._time_left_at] = left if left > 0.0 else 0.0
        a[self._time_left_at + 1] = 1.0 - state.quiet_rounds / state.no_progress_limit
        return np.frombuffer(a, "f")  # float32

    def _write_walk(self, a: array.array, at: int, dist: list[int], here: int, choices: tuple[int, ...]) -> None:
        """One walking block at ``at``: the distance from ``here`` by the table ``dist``, then what
        each move choice (a target cell, -1 for a blocked step) does to it."""
        d0 = dist[here]
        far = 4 * self.size * self.size
        if d0 >= far:
            a[at] = 1.0
            return
        a[at] = min(1.0, d0 * self._walk_scale)
        for c, cell in enumerate(choices, at + 1):
            if cell >= 0:
                d = dist[cell]
                if d < d0:
                    a[c] = 1.0
                elif d == d0:
                    a[c] = 0.5

    def _stats_cache(self, state: ArenaState, old: tuple | None) -> tuple:
        """The state's cache for its current stats: (the stats it was built for; every seat's bots-table
        row in seat order, written out twice so that a rotation is one slice; every seat's own-stats
        block; per observer asked so far, its blocks (``_observer_blocks``); per observer, its
        ``_observer_side``). ``observe`` replaces it when any stat differs from the first entry.

        Built from ``old`` (the cache of earlier stats, if any) by writing again only what depends on
        what changed. A bot's row and own block depend on its own stats and on its line (members and
        their strengths): they are written again for every bot whose stats changed and, where its
        strength, life or leader changed, for the members of its line before and after. (The order
        inside a line only changes when a line is formed, joined, absorbed or loses a member, which
        always changes ``leader_of`` or ``alive`` of one of its members too.) The sides depend only
        on who is alive and who leads whom: they are kept when those did not change."""
        hp, max_hp, st, score, alive, lo = (
            state.hp, state.max_hp, state.strength, state.score, state.alive, state.leader_of)
        key = (list(hp), list(st), list(score), list(alive), list(lo), list(max_hp))
        n = state.n
        if old is None:
            rows = array.array("f", bytes(4 * 2 * n * self.row_len))
            own_blocks: list = [None] * n
            redo = set(range(n))
        else:
            rows, own_blocks = old[1][:], old[2][:]
            old_key = old[0]
            redo = set()
            for what, (now, then) in enumerate(zip(key, old_key)):
                if now != then:
                    changed = list(compress(range(n), map(ne, now, then)))
                    redo.update(changed)
                    if what in _LINE_STATS:
                        old_lo = old_key[4]
                        for i in changed:
                            redo.update(m for m in range(n) if old_lo[m] == old_lo[i] or lo[m] == lo[i])
        sides = old[4] if old is not None and old[0][3] == alive and old[0][4] == lo else {}
        for i in redo:
            self._write_seat(state, i, rows, own_blocks)
        return key, rows, own_blocks, {}, sides

    def _write_seat(self, state: ArenaState, i: int, rows: array.array, own_blocks: list) -> None:
        """Bot ``i``'s bots-table row (both copies in ``rows``) and own-stats block, without
        positions, the observer-dependent features and the phase (values capped to [0, 1] as
        documented). In the second copy "seat before mine" is 1: a rotation starting at the
        observer's seat reaches the second copy exactly for the seats before the observer's."""
        n = state.n
        strength = state.strength
        health = state.health
        inv_hp = 1.0 / (2.0 * health) if health > 0 else 1.0
        # Party size, side strength and place in line (the line of its leader, if any).
        lead = state.leader_of[i]
        line = state.parties.get(lead)
        if line is not None and i in line:
            size, side, place = len(line) / n, sum([strength[m] for m in line]), line.index(i) / (n - 1)
        else:
            line, size, side, place = None, 1.0 / n, strength[i], 0.0
        side = min(1.0, side / SIDE_STRENGTH_SCALE)
        hp_v, max_v = min(1.0, state.hp[i] * inv_hp), min(1.0, state.max_hp[i] * inv_hp)
        st_v = min(1.0, strength[i] / STRENGTH_SCALE)
        score_v = score_feature(state.score[i])
        alive_v = float(state.alive[i])
        # "declined me" and the walking block depend on the observer and are written by ``observe``
        row = array.array("f", (
            alive_v, hp_v, max_v, st_v, score_v, float(alive_v and lead == i), float(line is not None),
            0.0, size, 0.0, 0.0, 0.0, side, place, *self._row_extra,
        ))
        k = self.row_len
        rows[i * k:i * k + len(row)] = row
        if self._seat_at >= 0:
            row[self._seat_at] = 1.0
        rows[(i + n) * k:(i + n) * k + len(row)] = row
        # Row, col, Gary's place and the phase are written by ``observe``.
        own_blocks[i] = array.array("f", (
            alive_v, hp_v, max_v, st_v, score_v,
            float(line is None), float(line is not None and lead == i), float(line is not None and lead != i),
            size, 0.0, 0.0, 0.0, 0.0, 0.0, side, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ))

    def _observer_blocks(self, state: ArenaState, player: int, cache: tuple) -> tuple[array.array, list]:
        """(the own-stats block without positions and phase, then the bots table with the
        observer's features but without positions, "asks me to ally" and "declined me": one array,
        as they follow each other in the observation; marks: see ``_observer_side``)."""
        sides = cache[4]
        side = sides.get(player)
        if side is None:
            side = sides[player] = self._observer_side(state, player)
        ones, marks = side
        k = self.row_len
        table = cache[1][player * k:(player + state.n) * k]  # seat order rotated: the observer first
        for at in ones:
            table[at] = 1.0
        return cache[2][player] + table, marks

    def _observer_side(self, state: ArenaState, player: int) -> tuple[list[int], list]:
        """(where the rotated bots table has a 1 for this observer: the one-hot of each living bot's
        leader, "same side as me"; marks): for every bot in table order, (bot, index of its row
        feature in the observation, start of its channel on the global planes, start of its
        channel in the window). The channel: gravestones for the dead (a dead observer's self mark
        is added by ``observe``), else self, own party or other bots."""
        n = state.n
        k = self.row_len
        alive, lo = state.alive, state.leader_of
        my_side = lo[player]
        ones = []
        marks = []
        lead_at = len(self.table_features)
        mark_of = self._marks[player]
        for j, i in enumerate(self._orders[player]):
            if alive[i]:
                ones.append(j * k + lead_at + (lo[i] - player) % n)
            if lo[i] == my_side:
                ones.append(j * k + 7)
                ch = (1 if i == player else 2) if alive[i] else 4
            else:
                ch = 3 if alive[i] else 4
            marks.append(mark_of[j][ch])
        return ones, marks

    # -----------------------------------------------------------------------------------------
    # Rendering
    def _cell_labels(self, state: ArenaState) -> list[list[str]]:
        s = self.size
        grid = [[" "] * s for _ in range(s)]
        for cell in range(s * s):
            t = state.map.terrain[cell]
            grid[cell // s][cell % s] = "^" if t == MOUNTAIN else ("#" if t == FOREST else ".")
        for i in range(state.n):
            if not state.alive[i]:
                rr, cc = divmod(state.pos[i], s)
                grid[rr][cc] = "+"
        gr, gc = divmod(state.gary, s)
        grid[gr][gc] = "@"
        for i in range(state.n):
            if state.alive[i]:
                rr, cc = divmod(state.pos[i], s)
                letter = chr(ord("A") + i)
                grid[rr][cc] = letter if state.leader_of[i] == i else letter.lower()
        return grid

    def scoreboard(self, state: ArenaState) -> list[dict[str, Any]]:
        """One row per bot, best first: rank (shared ranks averaged), stats and party."""
        from envs.wizard_arena.rules import final_ranks

        ranks = final_ranks(state.score, state.strength)
        rows = []
        for i in range(state.n):
            lead = state.leader_of[i]
            rows.append({
                "seat": i, "rank": ranks[i], "alive": state.alive[i], "score": state.score[i],
                "strength": state.strength[i] / 10, "hp": state.hp[i], "max_hp": state.max_hp[i],
                "party": state.parties.get(lead, [])[:] if lead in state.parties else [],
                "leader": lead,
            })
        rows.sort(key=lambda row: (row["rank"], row["seat"]))
        return rows

    picture_module = "envs.wizard_arena.picture"
    image_legend = ("A, B, ...: party leaders and solo bots, a, b, ...: followers (one colour per party); @ Gary; "
                    "+A: the gravestone of bot A; brown mountain, green forest")
    end_texts = {"rules": "all living bots stand in one party, or at most one bot is alive",
                 "no-progress": "the no-progress rule: 8 x {map_size} rounds passed with no alliance, join, "
                                "battle or death, so the ranking stands as it was"}

    def render_text(self, state: ArenaState) -> str:
        grid = self._cell_labels(state)
        lines = ["".join(row) for row in grid]
        lines.append(f"round {state.round}, phase {state.phase}, "
                     + ("game over" if state.is_terminal() else f"player_{state.current_player()} to act"))
        lines.append("legend: A-P bots (lower case = follower), + gravestone, @ Gary, ^ mountain, # forest")
        board = self.scoreboard(state)
        for row in board:
            i = row["seat"]
            party = "-".join(chr(ord("A") + m) for m in row["party"]) or "solo"
            status = "alive" if row["alive"] else "dead"
            lines.append(
                f"{chr(ord('A') + i)} player_{i}: {place_words(row['rank'], [r['rank'] for r in board])} {status} "
                f"score {row['score']} "
                f"strength {row['strength']:.1f} hp {row['hp']}/{row['max_hp']} party {party}"
            )
        return "\n".join(lines)

    def render_rgb(self, state: ArenaState) -> np.ndarray:
        from envs.core.render import grid_image

        s = self.size
        colors = np.zeros((s, s, 3), dtype=np.uint8)
        colors[:] = (225, 235, 205)
        terrain = np.array(state.map.terrain).reshape(s, s)
        colors[terrain == MOUNTAIN] = (140, 125, 110)
        colors[terrain == FOREST] = (45, 115, 55)
        labels = [["" for _ in range(s)] for _ in range(s)]
        for i in range(state.n):
            if not state.alive[i]:
                rr, cc = divmod(state.pos[i], s)
                colors[rr, cc] = (170, 170, 170)
                labels[rr][cc] = "+" + chr(ord("A") + i)
        gr, gc = divmod(state.gary, s)
        colors[gr, gc] = (160, 90, 210)
        labels[gr][gc] = "@"
        for i in range(state.n):
            if state.alive[i]:
                rr, cc = divmod(state.pos[i], s)
                lead = state.leader_of[i]
                hue = (lead * 0.618) % 1.0
                colors[rr, cc] = tuple(int(255 * (0.45 + 0.5 * v)) for v in _hue(hue))
                letter = chr(ord("A") + i)
                labels[rr][cc] = letter if lead == i else letter.lower()
        return grid_image(colors, cell=24, labels=labels)


def _hue(h: float) -> tuple[float, float, float]:
    """A simple colour wheel (no colorsys import needed)."""
    r = abs(h * 6 - 3) - 1
    g = 2 - abs(h * 6 - 2)
    b = 2 - abs(h * 6 - 4)
    return tuple(min(1.0, max(0.0, v)) for v in (r, g, b))


def place_words(rank: float, ranks: list[float]) -> str:
    """A scoreboard place in words: ``"1st"``, or ``"shared 3rd"`` for bots that tie (they share the
    mean of the places they span, which ``rank`` holds; the words name the first of those places)."""
    place = 1 + sum(1 for r in ranks if r < rank)
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return ("shared " if ranks.count(rank) > 1 else "") + f"{place}{suffix}"
