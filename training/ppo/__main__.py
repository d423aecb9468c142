"""``python -m training.ppo``: train, resume or evaluate (see ``training.ppo``)."""

from training.ppo.loop import main

main()
