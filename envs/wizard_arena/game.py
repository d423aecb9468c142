"""Wizard Arena as an engine: configuration, initial states, observations and rendering."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from envs.core import Game, make_rng, rng_from_json
from envs.wizard_arena.map import FOREST, MOUNTAIN, ArenaMap, generate_terrain
from envs.wizard_arena.rules import (
    ACTION_NAMES,
    ALLY,
    GARY,
    MOVE,
    NUM_ACTIONS,
    REWARD,
    ArenaState,
)

LOCAL_RADIUS = 3  # the local window is (2R+1) x (2R+1) cells centred on the seat's bot
CHANNELS = ("terrain", "self", "own party", "other bots", "gravestones", "Gary")
OWN_FEATURES = (
    "alive", "hp", "max_hp", "strength", "score", "solo", "leader", "follower", "party size",
    "row", "col", "Gary row", "Gary col", "Gary within 1", "side strength",
    "phase move", "phase ally", "phase gary", "phase reward",
)
TABLE_FEATURES = (
    "alive", "hp", "max_hp", "strength", "score", "acts (solo or leader)", "in a party",
    "same side as me", "party size", "row", "col", "asks me to ally", "side strength",
)
STRENGTH_SCALE = 100.0  # tenths: 10.0 strength reads as 1
SIDE_STRENGTH_SCALE = 400.0
SCORE_LOW, SCORE_SPAN = -20.0, 40.0


def _number(game: Game, key: str, value: Any, default: float, lo: float, hi: float) -> float:
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise game.config_error(key, value, f"a number in [{lo}, {hi}]")
    if not lo <= value <= hi:
        raise game.config_error(key, value, f"a number in [{lo}, {hi}]")
    return float(value)


def _integer(game: Game, key: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise game.config_error(key, value, f"an integer in [{lo}, {hi}]")
    return int(value)


class WizardArenaGame(Game):
    """Wizard Arena: see ``envs/wizard_arena_v0.py`` and ``envs/wizard_arena/RULES.md``."""

    name = "wizard_arena_v0"
    version = 0
    reward_range = (-1.0, 1.0)
    default_max_cycles = 400
    observation_low = 0.0
    observation_high = 1.0

    KEYWORDS = ("num_bots", "health", "map_size", "terrain_density", "initial_strength", "gary_strength",
                "gary_roams")

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        cfg = self.config
        self.num_players = cfg["num_bots"]
        self.num_actions = NUM_ACTIONS
        self.size = cfg["map_size"]
        w = 2 * LOCAL_RADIUS + 1
        self.global_len = len(CHANNELS) * self.size * self.size
        self.local_len = len(CHANNELS) * w * w
        self.table_offset = self.global_len + self.local_len + len(OWN_FEATURES)
        self.observation_shape = (self.table_offset + self.num_players * len(TABLE_FEATURES),)
        self._maps: dict[tuple[str, ...], ArenaMap] = {}
        n = self.num_players
        self._orders = [[(p + k) % n for k in range(n)] for p in range(n)]
        self._rotations = [np.array(order) for order in self._orders]
        last = max(1, self.size - 1)
        self._row_list = [(c // self.size) / last for c in range(self.size * self.size)]
        self._row_int = [c // self.size for c in range(self.size * self.size)]
        own_start = self.global_len + self.local_len
        self._own_index = list(range(own_start, own_start + len(OWN_FEATURES)))
        k = len(TABLE_FEATURES)
        self._position_index = [self.table_offset + j * k + c for j in range(n) for c in (9, 10)]
        self._col_int = [c % self.size for c in range(self.size * self.size)]
        self._col_list = [(c % self.size) / last for c in range(self.size * self.size)]

    def _validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        self.reject_unknown(config, self.KEYWORDS)
        out: dict[str, Any] = {}
        out["num_bots"] = _integer(self, "num_bots", config.get("num_bots", 6), 2, 16)
        out["health"] = _integer(self, "health", config.get("health", 10), 0, 1000)
        out["map_size"] = _integer(self, "map_size", config.get("map_size", 16), 6, 64)
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
        free = out["map_size"] ** 2 * (1.0 - out["terrain_density"])
        if free < 4 * out["num_bots"] + 4:
            raise self.config_error(
                "map_size", out["map_size"],
                f"large enough that about {4 * out['num_bots'] + 4} cells stay free for {out['num_bots']} bots "
                f"at terrain_density {out['terrain_density']}",
            )
        return out

    # -----------------------------------------------------------------------------------------
    def new_initial_state(self, seed: int | None = None) -> ArenaState:
        rng = make_rng(seed)
        cfg = self.config
        need = 3 * cfg["num_bots"] + 2
        for _ in range(20):
            arena = generate_terrain(cfg["map_size"], cfg["terrain_density"], rng)
            if len(arena.free_cells) >= need:
                break
        else:  # pragma: no cover - the config check makes this practically impossible
            arena = ArenaMap(cfg["map_size"], [0] * cfg["map_size"] ** 2)
        arena = self._intern(arena)
        state = ArenaState(self, arena, rng)
        for i in range(state.n):
            cells = state._free_cells(avoid_crowd=True)
            cell = cells[rng.randrange(len(cells))]
            state.pos[i] = cell
            state.occ[cell] = i
        cells = state._free_cells(avoid_crowd=False)
        state.gary = cells[rng.randrange(len(cells))]
        return state

    def _intern(self, arena: ArenaMap) -> ArenaMap:
        key = tuple(arena.rows())
        known = self._maps.get(key)
        if known is not None:
            return known
        if len(self._maps) > 256:
            self._maps.clear()
        self._maps[key] = arena
        return arena

    def _map_from_rows(self, rows: Any) -> ArenaMap:
        if not isinstance(rows, list) or any(not isinstance(r, str) for r in rows):
            raise TypeError("terrain must be a list of strings")
        key = tuple(rows)
        known = self._maps.get(key)
        if known is not None:
            return known
        arena = ArenaMap.from_rows(list(rows))
        if arena.size != self.size:
            raise ValueError(f"terrain is {arena.size} square, but map_size is {self.size}")
        return self._intern(arena)

    def state_from_dict(self, data: dict[str, Any]) -> ArenaState:
        if not isinstance(data, dict):
            raise TypeError("state must be a dict")
        arena = self._map_from_rows(data["terrain"])
        state = ArenaState(self, arena, rng_from_json(data["rng"]))
        state.load_fields(data)
        return state

    def state_from_view(self, view: dict[str, Any], rng: random.Random) -> ArenaState:
        # Nothing is hidden but the random generator's future: draw a fresh one.
        arena = self._map_from_rows(view["terrain"])
        state = ArenaState(self, arena, random.Random(rng.getrandbits(64)))
        state.load_fields(view)
        return state

    def action_to_string(self, action: int) -> str:
        return ACTION_NAMES[action]

    # -----------------------------------------------------------------------------------------
    # Observation
    def _template(self, arena: ArenaMap) -> tuple[np.ndarray, list[np.ndarray]]:
        """(observation with only the global terrain plane filled, the local terrain window around
        every cell, beyond the edge reading as impassable); cached on the map, which clones share."""
        cached = arena.cache.get("obs")
        if cached is None:
            s, r = arena.size, LOCAL_RADIUS
            w = 2 * r + 1
            terrain = (np.array(arena.terrain).reshape(s, s) != 0).astype(np.float32)
            base = np.zeros(self.observation_shape, dtype=np.float32)
            base[: s * s] = terrain.reshape(-1)
            padded = np.ones((s + 2 * r, s + 2 * r), dtype=np.float32)
            padded[r:r + s, r:r + s] = terrain
            windows = [padded[c // s:c // s + w, c % s:c % s + w].reshape(-1).copy() for c in range(s * s)]
            cached = arena.cache["obs"] = (base, windows)
        return cached

    def observe(self, state: ArenaState, player: int) -> np.ndarray:
        base, windows = self._template(state.map)
        s, r = self.size, LOCAL_RADIUS
        w = 2 * r + 1
        ss, ww = s * s, w * w
        n = state.n
        pos, alive, lo, hp, max_hp, st, score = (
            state.pos, state.alive, state.leader_of, state.hp, state.max_hp, state.strength, state.score)
        parties = state.parties
        g, loc, offset = self.global_len, self.local_len, self.table_offset
        here = pos[player]
        out = base.copy()
        out[g:g + ww] = windows[here]  # terrain around the seat's bot (beyond the edge: impassable)
        out[offset:] = self._bots_table(state, player)
        # Everything else is written in one go: indices and values.
        idx: list[int] = []
        values: list[float] = []
        # Bots and Gary on the global planes, and on the local ones when inside the window.
        my_side = lo[player]
        rows, cols = self._row_int, self._col_int
        row, col = rows[here], cols[here]
        top, left = row - r, col - r
        marks = [(5, state.gary)]
        for i in range(n):
            if not alive[i]:
                marks.append((4, pos[i]))
                if i == player:
                    marks.append((1, pos[i]))
            elif i == player:
                marks.append((1, pos[i]))
            elif lo[i] == my_side:
                marks.append((2, pos[i]))
            else:
                marks.append((3, pos[i]))
        for ch, cell in marks:
            idx.append(ch * ss + cell)
            dr, dc = rows[cell] - top, cols[cell] - left
            if 0 <= dr < w and 0 <= dc < w:
                idx.append(g + ch * ww + dr * w + dc)
        values = [1.0] * len(idx)

        # Own stats.
        health = state.health
        inv_hp = 1.0 / (2.0 * health) if health > 0 else 1.0
        phase = state.phase
        gary = state.gary
        gr, gc = rows[gary], cols[gary]
        row_of, col_of = self._row_list, self._col_list
        own_line = parties.get(my_side)
        side = sum(st[m] for m in own_line) if own_line else st[player]
        score_v = (score[player] - SCORE_LOW) / SCORE_SPAN
        idx += self._own_index
        values += (
            float(alive[player]), min(1.0, hp[player] * inv_hp), min(1.0, max_hp[player] * inv_hp),
            min(1.0, st[player] / STRENGTH_SCALE), 0.0 if score_v < 0.0 else (1.0 if score_v > 1.0 else score_v),
            float(own_line is None), float(own_line is not None and my_side == player),
            float(own_line is not None and my_side != player),
            (len(own_line) if own_line else 1) / n,
            row_of[here], col_of[here], row_of[gary], col_of[gary],
            float(max(abs(gr - row), abs(gc - col)) <= 1),
            min(1.0, side / SIDE_STRENGTH_SCALE),
            float(phase == MOVE), float(phase == ALLY), float(phase == GARY), float(phase == REWARD),
        )
        # The bots table came from the cache (per stats and observer); add the positions.
        idx += self._position_index
        for i in self._orders[player]:
            cell = pos[i]
            values += (row_of[cell], col_of[cell])
        out.put(idx, values)
        return out

    def _bots_table(self, state: ArenaState, player: int) -> np.ndarray:
        """The observer's bots table without positions, rebuilt only when a stat changed."""
        hp, max_hp, st, score, alive, lo = (
            state.hp, state.max_hp, state.strength, state.score, state.alive, state.leader_of)
        ally = tuple(state.ally) if state.phase == ALLY else None
        cache = state.obs_cache
        if cache is not None:
            sig = cache[0]
            if not (sig[0] == hp and sig[1] == st and sig[2] == score and sig[3] == alive and sig[4] == lo
                    and sig[5] == max_hp and sig[6] == ally):
                cache = None
        if cache is None:
            cache = state.obs_cache = (
                (list(hp), list(st), list(score), list(alive), list(lo), list(max_hp), ally),
                self._seat_table(state), {})
        per_player = cache[2]
        table = per_player.get(player)
        if table is None:
            rot = self._rotations[player]
            rows = cache[1][rot]
            rows[:, 7] = np.array(lo)[rot] == lo[player]
            if ally is not None and player in ally:
                partner = ally[1] if ally[0] == player else ally[0]
                rows[(partner - player) % state.n, 11] = 1.0
            table = per_player[player] = rows.reshape(-1)
        return table

    def _seat_table(self, state: ArenaState) -> np.ndarray:
        n = state.n
        hp, max_hp, st, score, alive, lo = (
            state.hp, state.max_hp, state.strength, state.score, state.alive, state.leader_of)
        parties = state.parties
        health = state.health
        inv_hp = 1.0 / (2.0 * health) if health > 0 else 1.0
        table = np.zeros((n, len(TABLE_FEATURES)), dtype=np.float32)
        for i in range(n):
            lead = lo[i]
            line = parties.get(lead)
            side = sum(st[m] for m in line) if line else st[i]
            table[i] = (
                float(alive[i]), hp[i] * inv_hp, max_hp[i] * inv_hp, st[i] / STRENGTH_SCALE,
                (score[i] - SCORE_LOW) / SCORE_SPAN, float(alive[i] and lead == i), float(line is not None),
                0.0, (len(line) if line else 1) / n, 0.0, 0.0, 0.0, side / SIDE_STRENGTH_SCALE,
            )
        np.clip(table, 0.0, 1.0, out=table)
        return table

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

    def render_text(self, state: ArenaState) -> str:
        grid = self._cell_labels(state)
        lines = ["".join(row) for row in grid]
        lines.append(f"round {state.round}, phase {state.phase}, "
                     + ("game over" if state.is_terminal() else f"player_{state.current_player()} to act"))
        lines.append("legend: A-P bots (lower case = follower), + gravestone, @ Gary, ^ mountain, # forest")
        for row in self.scoreboard(state):
            i = row["seat"]
            party = "-".join(chr(ord("A") + m) for m in row["party"]) or "solo"
            status = "alive" if row["alive"] else "dead"
            lines.append(
                f"{chr(ord('A') + i)} player_{i}: rank {row['rank']:g} {status} score {row['score']} "
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
