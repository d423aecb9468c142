"""Actor-critic networks of the PPO trainer (the ``training.ppo`` package), loadable with ``agents.policy_io``.

Every network maps a float32 batch of observations ``(B, *obs_shape)`` to action logits
``(B, num_actions)`` when called, which is the contract of :func:`agents.policy_io.load_policy`.
The value head lives in the same module and is used only while training
(``module.logits_and_value(obs)``); a loaded policy ignores it at play.

Three architectures, listed in ``BUILDERS`` (which :mod:`agents.architectures` serves):

* ``"board_conv"`` — a small 3×3 convolution stack over the board slice of the observation
  (circular padding for boards on a torus, as in Pan's Trial) plus an MLP over the rest of the
  vector. The two meet in a trunk vector that gives the non-square logits and the value; actions
  that are squares (Sequence ``place/wild/remove s``, Pan's Trial ballista and placement holes) get
  per-square logits from a 1×1 convolution over the board features, conditioned on the trunk.
  With ``focus_channels`` (``training.ppo --focus``; the game's ``board_layout`` names them) the trunk
  also reads the board features at the square each of those planes marks and at its four neighbours,
  for moves that are steps relative to a piece (Pan's Trial's "move up/right/down/left").
* ``"mlp_ac"`` — a plain MLP (fallback for games whose board is not worth a convolution).
* ``"table_entity"`` — one shared encoder over every row of a table of like entities (Wizard
  Arena's bots table, ``Game.table_layout``), pooled, plus an MLP over the rest; rows whose values
  are about actions add to those actions' logits with a weight each row's encoding chooses.

Each game declares where its board is in the flat observation and which action ranges are
squares (``Game.board_layout``); :func:`default_arch` picks the architecture and its keyword
arguments for a configured game from it, so the trainer and the tests agree.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator

import torch
from torch import nn

_SKIPPING = [0]  # > 0 while a network is built whose every weight is about to be overwritten


def weights_will_be_loaded() -> bool:
    """True inside :func:`skipping_initialisation`: every parameter of a network built now is about to be
    overwritten by a checkpoint's, so the builders here skip their random initialisation (orthogonal
    initialisation of a large layer is a QR decomposition, seconds of CPU for nothing)."""
    return _SKIPPING[0] > 0


@contextlib.contextmanager
def skipping_initialisation() -> Iterator[None]:
    """The window in which :func:`weights_will_be_loaded` holds (``agents.policy_io.load_policy`` opens it)."""
    _SKIPPING[0] += 1
    try:
        yield
    finally:
        _SKIPPING[0] -= 1


def _init(layer: nn.Module, gain: float = 2**0.5) -> nn.Module:
    """Orthogonal weights and zero biases (the CleanRL PPO initialisation); skipped while a checkpoint's
    weights are about to be loaded into the network."""
    if isinstance(layer, (nn.Linear, nn.Conv2d)) and not weights_will_be_loaded():
        nn.init.orthogonal_(layer.weight, gain)
        nn.init.zeros_(layer.bias)
    return layer


class MlpActorCritic(nn.Module):
    """Shared MLP trunk, a linear policy head and a linear value head."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: list[int]) -> None:
        super().__init__()
        if obs_dim <= 0 or num_actions <= 0 or not hidden or any(h <= 0 for h in hidden):
            raise ValueError(
                f"mlp_ac needs positive obs_dim, num_actions and hidden widths; got "
                f"obs_dim={obs_dim}, num_actions={num_actions}, hidden={hidden}"
            )
        layers: list[nn.Module] = []
        last = obs_dim
        for width in hidden:
            layers += [_init(nn.Linear(last, width)), nn.ReLU()]
            last = width
        self.trunk = nn.Sequential(*layers)
        self.policy = _init(nn.Linear(last, num_actions), 0.01)
        self.value = _init(nn.Linear(last, 1), 1.0)

    def logits_and_value(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.trunk(obs.reshape(obs.shape[0], -1))
        return self.policy(z), self.value(z).squeeze(-1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.policy(self.trunk(obs.reshape(obs.shape[0], -1)))


class BoardConvActorCritic(nn.Module):
    """3×3 convolutions over the board, an MLP over the rest, per-square policy heads."""

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        channels: int,
        height: int,
        width: int,
        layout: str = "planes",
        circular: bool = False,
        square_heads: list[list[int]] | None = None,
        conv_channels: int = 32,
        conv_layers: int = 2,
        hidden: int = 256,
        summary_channels: int = 4,
        first_kernel: int = 3,
        focus_channels: list[int] | None = None,
    ) -> None:
        super().__init__()
        square_heads = [list(h) for h in (square_heads or [])]
        board = channels * height * width
        if layout not in ("planes", "squares"):
            raise ValueError(f"board layout must be 'planes' or 'squares', got {layout!r}")
        if not 0 < board < obs_dim:
            raise ValueError(f"a {channels}x{height}x{width} board does not fit in {obs_dim} observation values")
        if min(conv_layers, conv_channels, hidden, summary_channels) < 1:
            raise ValueError("conv_layers, conv_channels, hidden and summary_channels must be positive")
        if first_kernel not in (3, 5, 7) or first_kernel > min(height, width):
            raise ValueError(f"first_kernel must be 3, 5 or 7 and fit the {height}x{width} board, got {first_kernel}")
        focus = [int(c) for c in (focus_channels or [])]
        if any(not 0 <= c < channels for c in focus) or len(set(focus)) != len(focus):
            raise ValueError(f"focus_channels must be distinct board channels in [0, {channels}), got {focus_channels}")
        for first, count in square_heads:
            if count != height * width or not 0 <= first <= num_actions - count:
                raise ValueError(
                    f"square head ({first}, {count}) must cover {height * width} actions inside [0, {num_actions})"
                )
        self.c, self.h, self.w, self.layout = channels, height, width, layout
        self.board = board
        self.num_actions = num_actions
        pad = "circular" if circular else "zeros"
        convs: list[nn.Module] = []
        last = channels
        for layer in range(conv_layers):
            # The first layer may see further (5x5 covers a Sequence line of five from its middle).
            k = first_kernel if layer == 0 else 3
            convs += [_init(nn.Conv2d(last, conv_channels, k, padding=k // 2, padding_mode=pad)), nn.ReLU()]
            last = conv_channels
        self.convs = nn.Sequential(*convs)
        # The trunk sees the board through a 1x1 convolution to a few channels, flattened (keeps
        # where things are at a fraction of the cost of flattening every feature map).
        self.summary = nn.Sequential(_init(nn.Conv2d(conv_channels, summary_channels, 1)), nn.ReLU())
        self.board_fc = _init(nn.Linear(summary_channels * height * width, hidden))
        self.rest_fc = _init(nn.Linear(obs_dim - board, hidden))
        # Focus: the board features at the square a focus channel marks (a seat's own position) and at its
        # four neighbours (up, right, down, left; off the board reads zero), straight into the trunk. The
        # summary above says where things are in absolute terms; a move is chosen relative to the mover,
        # and reading "what is next to me" out of an absolute map is a hard function for an MLP.
        self.focus = focus
        if focus:
            r, c = torch.arange(height * width) // width, torch.arange(height * width) % width
            cells = [(r, c), (r - 1, c), (r, c + 1), (r + 1, c), (r, c - 1)]
            table = []
            for rr, cc in cells:
                if circular:
                    table.append((rr % height) * width + cc % width)
                else:
                    off = (rr < 0) | (rr >= height) | (cc < 0) | (cc >= width)
                    table.append(torch.where(off, height * width, rr * width + cc))
            self.register_buffer("focus_cells", torch.stack(table, dim=1), persistent=False)  # (squares, 5)
            self.focus_fc = _init(nn.Linear(len(focus) * 5 * conv_channels, hidden))
        self.trunk = nn.Sequential(nn.ReLU(), _init(nn.Linear((3 if focus else 2) * hidden, hidden)), nn.ReLU())
        self.value = _init(nn.Linear(hidden, 1), 1.0)
        # Square actions: board features plus a per-channel bias from the trunk, then a 1x1 conv.
        self.square_index = [(int(f), int(n)) for f, n in square_heads]
        covered = torch.zeros(num_actions, dtype=torch.bool)
        for first, count in self.square_index:
            covered[first : first + count] = True
        others = torch.nonzero(~covered).flatten()
        # logits = cat([other-action logits, square logits head-major])[:, source]
        source = torch.empty(num_actions, dtype=torch.long)
        source[others] = torch.arange(len(others))
        for k, (first, count) in enumerate(self.square_index):
            source[first : first + count] = len(others) + k * count + torch.arange(count)
        self.register_buffer("source", source, persistent=False)
        self.other_head = _init(nn.Linear(hidden, len(others)), 0.01) if len(others) else None
        if self.square_index:
            self.square_film = _init(nn.Linear(hidden, conv_channels))
            self.square_head = _init(nn.Conv2d(conv_channels, len(self.square_index), 1), 0.01)

    def _board(self, obs: torch.Tensor) -> torch.Tensor:
        b = obs[:, : self.board]
        if self.layout == "planes":
            return b.reshape(-1, self.c, self.h, self.w)
        return b.reshape(-1, self.h, self.w, self.c).permute(0, 3, 1, 2)

    def _focus(self, board: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """``(B, len(focus) * 5 * conv_channels)``: for each focus channel, the features at its marked square
        (the plane's largest entry; all zero when the plane marks none) and at the four neighbours."""
        n, ch = board.shape[0], feats.shape[1]
        flat = torch.cat([feats.flatten(2), feats.new_zeros(n, ch, 1)], dim=2)  # a zero column for "off the board"
        out = []
        for c in self.focus:
            plane = board[:, c].flatten(1)
            present, where = plane.max(dim=1)
            cells = self.focus_cells[where]  # (B, 5)
            got = flat.gather(2, cells[:, None, :].expand(n, ch, 5))
            out.append(got.flatten(1) * (present > 0).to(got.dtype)[:, None])
        return torch.cat(out, dim=1)

    def logits_and_value(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        obs = obs.reshape(obs.shape[0], -1)
        board = self._board(obs)
        feats = self.convs(board)
        parts_in = [self.board_fc(self.summary(feats).flatten(1)), self.rest_fc(obs[:, self.board :])]
        if self.focus:
            parts_in.append(self.focus_fc(self._focus(board, feats)))
        z = self.trunk(torch.cat(parts_in, dim=1))
        parts = [self.other_head(z)] if self.other_head is not None else []
        if self.square_index:
            film = self.square_film(z)[:, :, None, None]
            parts.append(self.square_head(torch.relu(feats + film)).flatten(1))  # head-major squares
        logits = torch.cat(parts, dim=1)[:, self.source] if len(parts) > 1 or self.square_index else parts[0]
        return logits, self.value(z).squeeze(-1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.logits_and_value(obs)[0]


class TableActorCritic(nn.Module):
    """Every row of the observation's table read by one shared encoder; an MLP over the rest.

    The rest of the observation (everything outside the table) gives a context vector; each row,
    with a projection of that context, goes through the same two-layer encoder. The trunk reads the
    context and the mean and maximum of the row encodings (so a row counts the same wherever it
    sits) and gives the logits and the value. Where rows carry values about actions
    (``row_actions``, e.g. "this step leaves that bot nearer"), each row's encoding also gives a
    weight per range, and the logits of those actions gain the weighted sum of the rows' values:
    how much to be drawn to each entity is learned from the entity itself. ``action_blocks``
    outside the table get a weight from the trunk the same way.
    """

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        offset: int,
        rows: int,
        row_len: int,
        row_actions: list[list[int]] | None = None,
        action_blocks: list[list[int]] | None = None,
        hidden: int = 256,
        entity: int = 64,
    ) -> None:
        super().__init__()
        row_actions = [[int(v) for v in r] for r in (row_actions or [])]
        action_blocks = [[int(v) for v in b] for b in (action_blocks or [])]
        end = offset + rows * row_len
        if min(rows, row_len, hidden, entity) < 1 or offset < 0 or end > obs_dim or end - offset == obs_dim:
            raise ValueError(
                f"a table of {rows} rows of {row_len} at {offset} must fit inside {obs_dim} observation values "
                f"with something outside it; hidden and entity must be positive"
            )
        for start, first, count in row_actions:
            if count < 1 or not 0 <= start <= row_len - count or not 0 <= first <= num_actions - count:
                raise ValueError(f"row_actions ({start}, {first}, {count}) must lie inside a row of {row_len} "
                                 f"and the {num_actions} actions")
        for at, first, count in action_blocks:
            if count < 1 or not 0 <= at <= obs_dim - count or not 0 <= first <= num_actions - count:
                raise ValueError(f"action_blocks ({at}, {first}, {count}) must lie inside the {obs_dim} "
                                 f"observation values and the {num_actions} actions")
        self.offset, self.rows, self.row_len, self.end = offset, rows, row_len, end
        self.row_actions, self.action_blocks = row_actions, action_blocks
        self.context = nn.Sequential(_init(nn.Linear(obs_dim - rows * row_len, hidden)), nn.ReLU())
        self.context_to_rows = _init(nn.Linear(hidden, entity))
        self.encoder = nn.Sequential(
            _init(nn.Linear(row_len + entity, entity)), nn.ReLU(), _init(nn.Linear(entity, entity)), nn.ReLU()
        )
        self.trunk = nn.Sequential(_init(nn.Linear(hidden + 2 * entity, hidden)), nn.ReLU())
        self.policy = _init(nn.Linear(hidden, num_actions), 0.01)
        self.value = _init(nn.Linear(hidden, 1), 1.0)
        self.row_weights = _init(nn.Linear(entity, len(row_actions)), 0.01) if row_actions else None
        self.block_weights = _init(nn.Linear(hidden, len(action_blocks)), 0.01) if action_blocks else None

    def logits_and_value(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        obs = obs.reshape(obs.shape[0], -1)
        table = obs[:, self.offset : self.end].reshape(obs.shape[0], self.rows, self.row_len)
        context = self.context(torch.cat([obs[:, : self.offset], obs[:, self.end :]], dim=1))
        per_row = self.context_to_rows(context)[:, None, :].expand(-1, self.rows, -1)
        enc = self.encoder(torch.cat([table, per_row], dim=2))  # (B, rows, entity)
        z = self.trunk(torch.cat([context, enc.mean(dim=1), enc.amax(dim=1)], dim=1))
        logits = self.policy(z)
        extra = torch.zeros_like(logits)
        if self.row_weights is not None:
            weights = self.row_weights(enc)  # (B, rows, ranges)
            for k, (start, first, count) in enumerate(self.row_actions):
                pull = (weights[:, :, k : k + 1] * table[:, :, start : start + count]).sum(dim=1)
                extra[:, first : first + count] += pull
        if self.block_weights is not None:
            weights = self.block_weights(z)
            for k, (at, first, count) in enumerate(self.action_blocks):
                extra[:, first : first + count] += weights[:, k : k + 1] * obs[:, at : at + count]
        return logits + extra, self.value(z).squeeze(-1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.logits_and_value(obs)[0]


def build_mlp_ac(obs_dim: int, num_actions: int, hidden: list[int]) -> MlpActorCritic:
    return MlpActorCritic(int(obs_dim), int(num_actions), [int(h) for h in hidden])


def build_board_conv(**kwargs: Any) -> BoardConvActorCritic:
    return BoardConvActorCritic(**kwargs)


def build_table_entity(**kwargs: Any) -> TableActorCritic:
    return TableActorCritic(**kwargs)


#: The architectures of this module by name; :mod:`agents.architectures` adds them to its table.
BUILDERS = {"mlp_ac": build_mlp_ac, "board_conv": build_board_conv, "table_entity": build_table_entity}


def default_arch(game: Any, kind: str = "auto", **overrides: Any) -> tuple[str, dict[str, Any]]:
    """``(arch, arch_kwargs)`` for a configured game (an ``envs.core.Game``): ``board_conv`` where
    the game declares a ``board_layout``, else ``mlp_ac``.

    ``kind`` is "auto", "board_conv", "mlp_ac" or "table_entity" (never chosen by "auto"); ``overrides``
    replace keyword arguments (``conv_channels``, ``conv_layers``, ``hidden``, ``summary_channels``,
    ``first_kernel`` for the conv net; ``hidden`` list for the MLP; ``hidden`` for the table net, whose
    row encoder is a quarter as wide). ``focus=True`` gives the conv net the board channels the game's
    layout declares as ``focus_channels`` (squares a seat's moves are relative to); a game that declares
    none raises ``ValueError``.
    """
    if kind not in ("auto", "board_conv", "mlp_ac", "table_entity"):
        raise ValueError(f"network kind must be 'auto', 'board_conv', 'mlp_ac' or 'table_entity', got {kind!r}")
    layout = game.board_layout
    obs_dim = int(math.prod(game.observation_shape))
    num_actions = int(game.num_actions)
    if overrides.get("focus") and kind not in ("auto", "board_conv"):
        raise ValueError(f"focus is a board_conv setting; the {kind} network has none")
    if kind == "table_entity":
        table = getattr(game, "table_layout", None)
        if table is None:
            raise ValueError(f"{game.name} declares no table layout, so it has no table_entity network; use mlp_ac")
        kwargs = {"obs_dim": obs_dim, "num_actions": num_actions, "offset": int(table["offset"]),
                  "rows": int(table["rows"]), "row_len": int(table["row_len"]),
                  "row_actions": [list(r) for r in table.get("row_actions", [])],
                  "action_blocks": [list(b) for b in table.get("action_blocks", [])], "hidden": 256, "entity": 64}
        hidden = overrides.get("hidden")
        if hidden is not None:
            kwargs["hidden"] = int(hidden[0] if isinstance(hidden, list) else hidden)
            kwargs["entity"] = max(16, kwargs["hidden"] // 4)
        return "table_entity", kwargs
    if kind == "board_conv" and layout is None:
        raise ValueError(f"{game.name} declares no board layout, so it has no board_conv network; use mlp_ac")
    if kind == "mlp_ac" or (kind == "auto" and layout is None):
        if overrides.get("focus"):
            raise ValueError(f"focus is a board_conv setting, and {game.name} gets an mlp_ac network (no board_layout)")
        hidden = overrides.get("hidden", [256, 256])
        if isinstance(hidden, int):
            hidden = [hidden, hidden]
        return "mlp_ac", {"obs_dim": obs_dim, "num_actions": num_actions, "hidden": list(hidden)}
    kwargs = {"obs_dim": obs_dim, "num_actions": num_actions, **layout}
    declared = kwargs.pop("focus_channels", None)
    if overrides.get("focus"):
        if not declared:
            raise ValueError(f"{game.name} declares no focus_channels in its board_layout, so a focus has no square "
                             "to read; leave focus off")
        kwargs["focus_channels"] = [int(c) for c in declared]
    kwargs["square_heads"] = [list(h) for h in kwargs["square_heads"]]
    kwargs.update({"conv_channels": 32, "conv_layers": 2, "hidden": 256, "summary_channels": 4})
    if overrides.get("first_kernel") not in (None, 3):
        kwargs["first_kernel"] = int(overrides["first_kernel"])
    for key in ("conv_channels", "conv_layers", "hidden", "summary_channels"):
        if key in overrides and overrides[key] is not None:
            value = overrides[key]
            kwargs[key] = int(value[0] if isinstance(value, list) else value)
    return "board_conv", kwargs
