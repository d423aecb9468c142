"""Train one policy for any game on Ray RLlib (PPO, new API stack), then export it as a safe policy file.

    python -m training.rllib --game sequence_v0 --config '{"players_per_team": 2}' \\
        --opponents random-v0 heuristic-v1 self --iterations 200 --out runs/seq-2x2-rllib

For the day one machine is not enough: the same game on many cores or many machines. Without
``--address`` a local Ray starts with as many env runners as this machine has cores; with
``--address`` the run joins an existing Ray cluster (``ray start --head`` on one machine, ``ray start
--address=HEAD:6379`` on the others; see ``docs/rllib.md``).

Reads top to bottom (CleanRL style): the options (every one in ``--help`` with its default; the
settings all trainers share come from :mod:`training.settings`), seeding in one place, the RLlib
config, the training loop, the export. The environment is our AEC game through RLlib's PettingZoo
wrapper (``training.rllib.env``): one learning team per episode whose seats all share the module
``"learner"``; rule-based opponents play inside the environment; the kind ``self`` puts frozen copies
of the learner (refreshed every ``--snapshot-every`` iterations) in the other seats through the policy
mapping. Action masks are applied by the module. A loss that turns NaN or infinite stops the run,
naming the iteration's learner step and the loss, before anything is exported.

The output folder gets ``policy.json`` + ``policy.safetensors`` (agents/policy_io.py's format: the
policy network is the ``"mlp"`` architecture, loadable without Ray), ``args.json``, ``eval.json``
(the shared evaluation, :mod:`training.evaluation`, of the exported policy against each rule-based
opponent, in the one report schema of :mod:`training.report`) and the curve (``curve.csv``,
``curve.png`` and TensorBoard scalars in ``tb/``). ``--register ID`` adds it to the checkpoint index so every
tool loads it by id.

The package reads in this order: ``trainer`` (the ``Args``, the RLlib config, the loop, the export and
the command) and ``env`` (the seat-roles adapter RLlib steps and the masked module). Only a run needs Ray
(the ``rllib`` extra): the package imports, and the options are parsed and checked, without it.
"""

from training.lazy import lazy_exports

#: The public names, each from the module that holds it. They load on first use (PEP 562), so that the
#: Ray workers that import ``training.rllib.env`` do not load the trainer.
_EXPORTS = {
    "training.rllib.trainer": ("EVAL_SEED", "LOSSES", "REMOVED", "Args", "build_config", "build_parser",
                               "evaluate_export", "export_policy", "main", "parse_args", "policy_module", "register",
                               "rule_based", "set_modules", "start_ray", "train"),
    "training.rllib.env": ("SeatRolesEnv",),
}
__getattr__, __dir__, __all__ = lazy_exports("training.rllib", _EXPORTS)
