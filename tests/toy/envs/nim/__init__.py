"""Nim with a hidden die: the toy game laid out as docs/adding_a_game.md says (tests only)."""
