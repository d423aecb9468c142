"""benchmarks.buffer_clone: a run's saved labels cloned offline into a network."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from agents.policy_io import load_policy
from benchmarks import buffer_clone
from training.ppo.cloning import ReplayBuffer

torch.set_num_threads(1)
OBS, ACTIONS = 987, 408  # Pan's Trial's observation and action sizes


def write_buffer(run, n: int = 64, soft: bool = True) -> ReplayBuffer:
    """A run folder whose checkpoint holds ``n`` labels: moves 0-2 legal, the search choosing move 1, its
    target on move 1 at 0.95 in the even rows and 0.5 in the odd ones."""
    g = torch.Generator().manual_seed(0)
    mask = torch.zeros(n, ACTIONS, dtype=torch.bool)
    mask[:, :3] = True
    target = torch.zeros(n, ACTIONS)
    target[:, 1] = torch.tensor([0.95 if i % 2 == 0 else 0.5 for i in range(n)])
    target[:, 0] = 1.0 - target[:, 1]
    buffer = ReplayBuffer(n, (OBS,), ACTIONS, soft=soft)
    buffer.add(torch.rand(n, OBS, generator=g).half(), mask, torch.ones(n, dtype=torch.long), torch.zeros(n),
               target if soft else None)
    (run / "checkpoint").mkdir(parents=True)
    save_file(buffer.in_order(), str(run / "checkpoint" / "bc_buffer.safetensors"))
    return buffer


def test_confident_labels_keep_the_search_only_where_it_is_sure(tmp_path):
    buffer = write_buffer(tmp_path / "run", n=6)
    own = torch.tensor([2, 2, 1, 2, 0, 0])
    labels, sure = buffer_clone.confident_labels(buffer, own, 0.9)
    assert sure.tolist() == [True, False, True, False, True, False]
    assert labels.tolist() == [1, 2, 1, 2, 1, 0]


@pytest.mark.parametrize("labels", buffer_clone.LABELS)
def test_each_kind_of_label_writes_a_policy_that_loads_with_its_settings(tmp_path, labels):
    buffer = write_buffer(tmp_path / "run")
    out = tmp_path / "policy"
    summary = buffer_clone.main([str(tmp_path / "run"), "--init", "pans_trial_v0/ppo-v4", "--labels", labels,
                                 "--steps", "3", "--batch", "8", "--out", str(out)])
    net, spec = load_policy(out)
    meta = json.loads((out / "policy.json").read_text())["meta"]
    assert spec["game"] == "pans_trial_v0" and meta["trainer"] == "benchmarks.buffer_clone"
    assert meta["settings"]["labels"] == labels and meta["summary"]["labels_in_buffer"] == 64
    assert meta["provenance"]["environments"] == {"pans_trial_v0": 0} and summary["loss"] >= 0.0
    if labels == "confident":
        assert summary["search_sure"] == 0.5
    start, _ = load_policy("checkpoints/pans_trial_v0/ppo-v4")
    with torch.no_grad():  # the starting network's own moves among the three legal ones, against the search's 1
        logits, _ = start.logits_and_value(buffer.obs[:64].float())
    before = float((logits[:, :3].argmax(-1) == 1).float().mean())
    assert summary["search_choice_agreement_before"] == pytest.approx(before)
    changed = any(not torch.equal(a, b) for a, b in zip(net.state_dict().values(), start.state_dict().values()))
    assert changed, "three steps of cloning left the network unchanged"


def test_the_same_command_gives_the_same_network(tmp_path):
    write_buffer(tmp_path / "run")
    nets = []
    for name in ("a", "b"):
        buffer_clone.main([str(tmp_path / "run"), "--init", "pans_trial_v0/ppo-v4", "--steps", "2", "--batch", "8",
                           "--out", str(tmp_path / name)])
        nets.append(load_policy(tmp_path / name)[0].state_dict())
    assert all(torch.equal(nets[0][k], nets[1][k]) for k in nets[0])


@pytest.mark.parametrize("argv,needle", [
    (["--labels", "target"], "needs improved targets"),
    (["--confidence", "1.5"], "--confidence is a share of the target in (0, 1]"),
    (["--steps", "0"], "--steps and --batch must be at least 1"),
    (["--init", "pans_trial_v0/no-such"], "--init:"),
])
def test_bad_arguments_are_refused_in_one_line(tmp_path, capsys, argv, needle):
    write_buffer(tmp_path / "run", soft=False)
    base = [str(tmp_path / "run"), "--init", "pans_trial_v0/ppo-v4", "--out", str(tmp_path / "p")]
    with pytest.raises(SystemExit):
        buffer_clone.main(base + argv)
    assert needle in capsys.readouterr().err


def test_a_run_without_a_buffer_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        buffer_clone.main([str(tmp_path), "--init", "pans_trial_v0/ppo-v4", "--out", str(tmp_path / "p")])
    assert "bc_buffer.safetensors does not exist" in capsys.readouterr().err
