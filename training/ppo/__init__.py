"""Masked PPO for every game, many tables stepped in one process, with kickstarting and a league.

    python -m training.ppo --game sequence_v0 --name kick --total-timesteps 3000000
    python -m training.ppo --resume runs/ppo/sequence_v0-kick          # continue the same run
    python -m training.ppo --evaluate runs/ppo/sequence_v0-kick --eval-games 400
    python -m training.ppo --game pans_trial_v0 --name tune --init-policy pans_trial_v0/ppo-v3 \
        --conv-channels 32 --hidden 256                               # a new run from a shipped policy

Reads top to bottom (CleanRL's shape): the ``Args`` dataclass documents every option, seeding
happens in one place (``main``), the loop collects a rollout then updates.

* **Tables.** ``num_envs`` games are stepped on an ``envs.vector`` batch (``--backend``: the reference
  engines, or the game's faster engine where it has one, such as Sequence's numpy backend), through
  :class:`training.vector_env.Tables`, the layer every batch of learner-against-opponents games uses. The
  learner's team — one seat, or every seat of one team (Sequence with teams) — is drawn per game so
  every seat is learnt. All tables waiting for a learner decision get one batched forward; every
  other seat is played inside the step until the learner is to act again (conventions, point 11):
  heuristic and random opponents one decision at a time, frozen snapshots of the learner batched per
  snapshot. The learner receives only its own team's final return.
* **Kickstarting.** The first ``bc_steps`` learner decisions are played by the teacher
  (``--teacher``, a heuristic) and the network learns them by cross-entropy (behaviour cloning) while
  its value head learns the teacher's returns; the decisions go to a replay buffer (``bc_buffer``)
  and each rollout is followed by ``bc_batches`` minibatches drawn from it. With ``bc_learner_share``
  above 0 (DAgger) that share of the decisions is played by the network itself while the teacher
  still labels every one, so the network also learns the answer in positions its own play leads to.
  PPO then starts from that network, with a
  cross-entropy term toward the teacher's choice at each learner decision, weighted ``kl_coef`` and
  decaying linearly to zero over ``kl_decay_steps``.
* **League.** Each game draws its opponent kind from ``--opponents`` (agent kinds such as
  ``heuristic-v1``, ``random-v0``, or ``self`` for a frozen past snapshot of the learner; a snapshot
  is taken every ``snapshot_every`` steps and the newest ``snapshot_max`` are kept).
* **Runs outlive a sitting.** Everything goes to the run folder (default ``runs/ppo/<game>-<name>``):
  ``checkpoint/`` (network, optimizer, snapshots, RNG states and counters as safetensors + JSON —
  no pickle), ``tb/`` TensorBoard logs, ``curve.csv`` and ``curve.png``, and ``policy/``, the
  current policy in the safe policy format (:func:`agents.policy_io.save_policy`), loadable by
  ``agents.policy_io.load_policy``. ``--resume RUN_DIR`` continues from the last checkpoint
  (games in progress are not saved: the resumed run deals new games; the cloning buffer is, as
  ``bc_buffer.safetensors``, while cloning is still to run); it may
  change the settings in :data:`RESUME_CHANGEABLE` (budget, evaluation, league, update and learning rates,
  the teacher, its workers and the cloning buffer's size), nothing else. A new teacher's labels join
  the old one's in the buffer and replace them as it fills (expert iteration from a run that cloned a
  heuristic); what changed, and from which step, is kept in the run's history of resumes.
* **Starting from a saved policy.** ``--init-policy`` starts a new run (its own folder, step 0, a
  fresh optimizer) from the weights of a shipped checkpoint id, a policy folder or another run's
  policy, loaded through the same validating loader as any checkpoint. Its game, config and network
  must be this run's; a mismatch is refused with the flags its run used. The origin (and its own
  steps and CPU seconds) is kept in the run's state and in every policy it writes, so a report can
  add up the compute.
* **Critic.** ``--critic seat`` (the default): the values behind the advantages come from the network's
  own value head. ``--critic state``: from a second network over the seat's observation and the whole
  position (``Game.encode_state``, hidden information included; see ``critic``), while the actor, all
  that the policy exports, still reads only its seat's observation (centralised training, decentralised
  execution).
* **Evaluation.** Every ``eval_every`` steps the greedy policy (most likely legal action) plays
  ``eval_games`` seeded games against each of ``eval_opponents``, seats rotated; a win is first
  place for the learner's team (ties shared first place count, as in ``training.league``).

The package reads in this order: ``args`` (the options), ``algo`` (rollout, GAE, PPO loss),
``cloning`` (kickstarting), ``critic`` (the state critic), ``run_state`` (checkpoints and resume) and
``loop`` (the ``Trainer`` and the command); the tables the games are stepped on are ``training.vector_env``'s, the evaluation
``training.evaluation``'s.
"""

from training.lazy import lazy_exports

#: The public names, each from the module that holds it. They load on first use (PEP 562), so that
#: importing one part (``training.evaluation`` imports ``training.ppo.algo``) does not load them all.
_EXPORTS = {
    "training.ppo.algo": ("NEG", "collect_rollout", "gae", "masked_log_probs", "policy_log_probs", "ppo_update",
                          "sample"),
    "training.ppo.args": ("NET_ARGS", "RESUME_CHANGEABLE", "Args", "build_parser", "check_args", "load_init_policy",
                          "parse_args", "teacher_identity"),
    "training.ppo.cloning": ("ReplayBuffer", "clone_update"),
    "training.ppo.critic": ("CRITICS", "StateCritic", "build_state_critic"),
    "training.evaluation": ("evaluate_folder", "evaluate_module"),
    "training.ppo.loop": ("CpuAccount", "Trainer", "main"),
    "training.ppo.run_state": ("TrainerState", "flatten_optimizer", "recover_checkpoint", "unflatten_optimizer"),
    "training.vector_env": ("Outcome", "Tables"),
    "training.report": ("write_curve",),
}
__getattr__, __dir__, __all__ = lazy_exports("training.ppo", _EXPORTS)
