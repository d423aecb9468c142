"""Wizard Arena: bots ally into single-file parties, battle, challenge Gary the Wizard (see RULES.md)."""
