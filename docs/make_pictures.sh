#!/bin/sh
# Redraw the committed pictures of played games (the game pages and the front page) from their
# committed records, after a change to the pictures' drawing. Run from the repository root.
# tests/test_play_records.py runs every line below and checks it draws the committed picture, and that
# every picture under docs/play/ and docs/games/media/ has its line here.
# To record a game again, run the two commands its game page gives (seed 7) and copy the record
# into docs/play/records/.
set -e

python -m play replay docs/play/records/sequence.json --png docs/play/sequence.png --transcript /dev/null
python -m play replay docs/play/records/pans_trial.json --png docs/play/pans_trial.png --transcript /dev/null
python -m play replay docs/play/records/dojo.json --png docs/play/dojo.png --transcript /dev/null
python -m play replay docs/play/records/wizard_arena.json --png docs/play/wizard_arena.png --transcript /dev/null

python -m play replay docs/play/records/sequence.json --gif docs/games/media/sequence.gif --max-frames 60 --fps 6 --transcript /dev/null
python -m play replay docs/play/records/pans_trial.json --gif docs/games/media/pans_trial.gif --max-frames 60 --fps 6 --transcript /dev/null
python -m play replay docs/play/records/dojo.json --gif docs/games/media/dojo.gif --max-frames 60 --fps 6 --transcript /dev/null
python -m play replay docs/play/records/wizard_arena.json --gif docs/games/media/wizard_arena.gif --max-frames 60 --fps 6 --transcript /dev/null
