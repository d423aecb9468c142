"""Train a MaskablePPO policy (Stable-Baselines3) for any game by self-play, then save it as a loadable policy.

    python -m training.sb3 --game sequence_v0 --total-timesteps 200000
    python -m training.sb3 --game sequence_v0 --total-timesteps 200000 --opponents random-v0 self --register sequence_v0/ppo-v2

Reads top to bottom (CleanRL style): the ``Args`` dataclass documents every option (the settings all
trainers share come from :mod:`training.settings`); seeding happens in one place; the learner plays one
seat while opponents — random, heuristic or frozen copies of the learner itself (the kind ``self``) — move
inside ``step()`` (see ``training.sb3.selfplay``). Every ``eval_every`` steps the policy is evaluated against
fixed opponents on seeded games by the shared team-level evaluation (:mod:`training.evaluation`); the curve
goes to ``curve.csv``, ``curve.png`` and ``tb/``, and the final evaluation to ``eval.json`` in the one report
schema (:mod:`training.report`). A loss that turns NaN or infinite stops the run, naming the step and the
loss, before anything is saved. Everything goes into the run's own folder (``runs/sb3/<game>-<time>``
unless ``--out`` says otherwise): the policy as ``policy.json`` + ``policy.safetensors`` (data only, see
``agents.policy_io``), ``args.json``, ``eval.json`` and the curve, plus SB3's own ``sb3_model.zip`` for
resuming training with Stable-Baselines3 (the library never loads it). With ``--register ID`` the policy is
copied into the checkpoint folder under that id and listed in its ``index.json``, so ``agents.make(id)``
loads it; an id that exists already is refused before training starts.

The package reads in this order: ``trainer`` (the ``Args`` and the command), ``selfplay``
(:class:`~training.sb3.selfplay.SelfPlayEnv`, the single-agent view of a game the trainer steps, also
``training.SelfPlayEnv``) and ``convert`` (``python -m training.sb3.convert``: a MaskablePPO zip you
trained yourself, into the safe policy format).
"""

from training.lazy import lazy_exports

#: The public names, each from the module that holds it. They load on first use (PEP 562), so that
#: ``training.SelfPlayEnv`` does not load the trainer, nor Stable-Baselines3.
_EXPORTS = {
    "training.sb3.trainer": ("REMOVED", "Args", "build_parser", "describe_run", "evaluate_policy", "main",
                             "parse_args"),
    "training.sb3.selfplay": ("SelfPlayEnv",),
}
__getattr__, __dir__, __all__ = lazy_exports("training.sb3", _EXPORTS)
