"""The improved targets a network clones from a search teacher (``--teacher-targets improved``)."""

from __future__ import annotations

import torch


def improved_targets(logp_prior: torch.Tensor, teacher: torch.Tensor, values: list[list[tuple[int, float]]],
                     temperature: float) -> torch.Tensor:
    """One target distribution per row: the prior ``exp(logp_prior)`` (the network's policy, illegal moves
    at zero) with the mass it gives the actions in ``values`` (a search's ``(action, mean value)`` pairs)
    shared among them in proportion to ``prior * exp(value / temperature)``; the mass on actions the search
    did not try stays where it is. A row without values (a forced move) is the teacher's action alone.
    ``temperature`` is in the game's return units: a move worth ``temperature`` more than another gets
    e times its share."""
    if not temperature > 0:
        raise ValueError(f"the improvement temperature must be positive, got {temperature!r}")
    prior = logp_prior.exp()
    target = prior.clone()
    for row, pairs in enumerate(values):
        if not pairs:
            target[row] = 0.0
            target[row, int(teacher[row])] = 1.0
            continue
        acts = torch.tensor([a for a, _ in pairs], dtype=torch.long)
        q = torch.tensor([v for _, v in pairs], dtype=prior.dtype)
        p = prior[row, acts]
        mass = float(p.sum())
        w = p * torch.exp((q - q.max()) / temperature)
        if mass <= 0.0 or float(w.sum()) <= 0.0:  # the network gave them nothing: the search's best alone
            target[row, acts] = 0.0
            target[row, acts[int(q.argmax())]] += max(mass, 1e-12)
        else:
            target[row, acts] = w / w.sum() * mass
    return target / target.sum(dim=1, keepdim=True)


def confident_choice(target: torch.Tensor, teacher: torch.Tensor, own: torch.Tensor,
                     confidence: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(choice, sure)`` per row: the search's choice ``teacher`` where the improved ``target`` gives it at
    least ``confidence`` of its mass (``sure``), the network's own greedy move ``own`` everywhere else."""
    if not 0.0 < confidence <= 1.0:
        raise ValueError(f"the confidence is a share of a target in (0, 1], got {confidence!r}")
    sure = target.float().gather(1, teacher[:, None].long())[:, 0] >= confidence
    return torch.where(sure, teacher.long(), own.long()), sure


def confident_targets(target: torch.Tensor, teacher: torch.Tensor, own: torch.Tensor, confidence: float) -> torch.Tensor:
    """One-hot targets from improved ones (``--teacher-confidence``): :func:`confident_choice`, so the
    network keeps its play where the search is unsure."""
    choice, _ = confident_choice(target, teacher, own, confidence)
    return torch.nn.functional.one_hot(choice, target.shape[1]).to(target.dtype)
