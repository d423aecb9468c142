"""The board network's focus: the features at the squares a game marks (Pan's Trial: the two seats' squares)
and at their four neighbours go to the trunk."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import envs
from agents.nets import BoardConvActorCritic, default_arch
from agents.policy_io import load_policy, save_policy

torch.set_num_threads(1)


def _net(circular: bool, focus=(0,), height=6, width=6) -> BoardConvActorCritic:
    torch.manual_seed(0)
    return BoardConvActorCritic(obs_dim=2 * height * width + 3, num_actions=5, channels=2, height=height, width=width,
                                layout="planes", circular=circular, conv_channels=3, hidden=8,
                                focus_channels=list(focus))


def _square_features(net: BoardConvActorCritic, n: int = 1) -> torch.Tensor:
    """Feature maps whose every channel holds the square's index + 1 (so 0 can only mean "off the board")."""
    squares = torch.arange(net.h * net.w, dtype=torch.float32).reshape(1, 1, net.h, net.w) + 1
    return squares.expand(n, net.convs[-2].out_channels, net.h, net.w)


def _board_marking(net: BoardConvActorCritic, row: int | None, col: int | None) -> torch.Tensor:
    board = torch.zeros(1, net.c, net.h, net.w)
    if row is not None:
        board[0, 0, row, col] = 1.0
    return board


def test_on_a_torus_the_focus_reads_the_square_and_its_wrapped_neighbours_in_move_order():
    net = _net(circular=True)
    got = net._focus(_board_marking(net, 0, 0), _square_features(net)).reshape(3, 5)
    # square (0, 0) is index 0; up wraps to (5, 0) = 30, right (0, 1) = 1, down (1, 0) = 6, left wraps to (0, 5) = 5
    assert got[0].tolist() == [1, 31, 2, 7, 6]
    assert torch.equal(got[0], got[2])  # every channel alike
    got = net._focus(_board_marking(net, 3, 4), _square_features(net)).reshape(3, 5)
    assert got[0].tolist() == [23, 17, 24, 29, 22]


def test_off_a_flat_board_the_neighbours_read_zero():
    net = _net(circular=False)
    got = net._focus(_board_marking(net, 0, 0), _square_features(net)).reshape(3, 5)
    assert got[0].tolist() == [1, 0, 2, 7, 0]
    got = net._focus(_board_marking(net, 5, 5), _square_features(net)).reshape(3, 5)
    assert got[0].tolist() == [36, 30, 0, 0, 35]


def test_a_plane_that_marks_no_square_gives_zeros():
    net = _net(circular=True)
    assert not net._focus(_board_marking(net, None, None), _square_features(net)).any()


def test_the_focus_moves_the_logits_with_the_marked_square():
    net = _net(circular=True)
    obs = torch.zeros(2, net.board + 3)
    obs[0, 0] = 1.0  # channel 0 (planes layout), square 0
    obs[1, 7] = 1.0  # channel 0, square 7
    logits = net(obs)
    assert logits.shape == (2, 5) and not torch.allclose(logits[0], logits[1])


@pytest.mark.parametrize("focus", [[2], [0, 0], [-1]])
def test_bad_focus_channels_are_refused_naming_the_allowed_range(focus):
    with pytest.raises(ValueError, match=r"focus_channels must be distinct board channels in \[0, 2\)"):
        _net(circular=True, focus=focus)


def test_default_arch_adds_the_declared_focus_only_when_asked():
    game = envs.make_game("pans_trial_v0")
    assert "focus_channels" not in default_arch(game)[1]  # the shipped networks' architecture is unchanged
    assert default_arch(game, focus=True)[1]["focus_channels"] == game.board_layout["focus_channels"] == [10, 11]
    with pytest.raises(ValueError, match="declares no focus_channels"):
        default_arch(envs.make_game("sequence_v0"), focus=True)
    with pytest.raises(ValueError, match="board_conv setting"):
        default_arch(game, "mlp_ac", focus=True)


def test_the_focus_channels_mark_the_seats_own_square_and_the_opponents():
    game = envs.make_game("pans_trial_v0")
    state = game.new_initial_state(5)
    layout = game.board_layout
    nb = layout["channels"]
    for _ in range(60):
        if state.is_terminal():
            break
        seat = state.current_player()
        planes = np.asarray(game.observe(state, seat), dtype=np.float32)[: nb * 36].reshape(36, nb)
        own, theirs = layout["focus_channels"]
        assert np.flatnonzero(planes[:, own]).tolist() == [state.pos[seat]]
        assert np.flatnonzero(planes[:, theirs]).tolist() == [state.pos[1 - seat]]
        state.apply_action(int(np.flatnonzero(state.legal_mask())[-1]))


def test_the_dojo_focus_channel_marks_the_observers_own_pawn():
    game = envs.make_game("dojo_v0", num_players=4)
    state = game.new_initial_state(3)
    (own,) = game.board_layout["focus_channels"]
    squares = game.board_layout["height"] * game.board_layout["width"]
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(300):
        if state.is_terminal():
            break
        for observer in range(4):
            plane = np.asarray(game.observe(state, observer), dtype=np.float32)[own * squares : (own + 1) * squares]
            expected = [state.pos[observer]] if state.pos[observer] >= 0 else []
            assert np.flatnonzero(plane).tolist() == expected
            seen += bool(expected)
        state.apply_action(int(rng.choice(np.flatnonzero(state.legal_mask()))))
    assert seen > 100  # pawns were on the board for most of the positions checked


def test_a_focused_network_saves_and_loads_to_the_same_logits(tmp_path):
    game = envs.make_game("pans_trial_v0")
    arch, kwargs = default_arch(game, focus=True, conv_channels=8, hidden=16)
    torch.manual_seed(1)
    net = BoardConvActorCritic(**kwargs)
    save_policy(tmp_path / "p", net, arch=arch, arch_kwargs=kwargs, game=game.name, config=game.config,
                observation_shape=game.observation_shape, num_actions=game.num_actions)
    loaded, spec = load_policy(tmp_path / "p", game=game.name)
    assert spec["arch_kwargs"]["focus_channels"] == [10, 11]
    state = game.new_initial_state(2)
    obs = torch.tensor(np.stack([game.observe(state, p) for p in (0, 1)]), dtype=torch.float32)
    with torch.no_grad():
        assert torch.equal(net(obs), loaded(obs))
