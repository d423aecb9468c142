"""``python -m play``: play against the agents, watch them, replay records, serve the browser page.

  python -m play terminal sequence_v0 --opponents sequence_v0/heuristic-v1
  python -m play terminal dojo_v0 --config 4p --humans 0 1 --opponents dojo_v0/heuristic-v1   (hot seat)
  python -m play terminal --resume sequence_v0-session.json
  python -m play watch pans_trial_v0 --agents pans_trial_v0/heuristic-v1 pans_trial_v0/experienced-v1
  python -m play replay game.json --gif game.gif --transcript game.txt
  python -m play serve --port 8000
  python -m play agents pans_trial_v0      (the opponents, strongest first, with Elo and time a move)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import envs
from agents.errors import InputError
from envs.core.config import parse_key_values


def _config(args) -> dict[str, Any] | str | None:
    settings = parse_key_values(args.set or [], "--set")
    if args.config and settings:
        from play.session import resolve_config

        return {**resolve_config(args.game, args.config), **settings}
    return settings or args.config


def _add_game_options(p: argparse.ArgumentParser, game_required: bool = True) -> None:
    p.add_argument("game", nargs=None if game_required else "?", choices=envs.NAMES,
                   help="the game, by module name" + ("" if game_required else " (with --resume: not needed)"))
    p.add_argument("--config", default=None,
                   help="a named config of the game (its config_families, e.g. sequence_v0 '2x2', dojo_v0 '2p'); "
                        "default: the game's default config")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a config keyword (VALUE in JSON), repeatable; applied over --config (default: none)")
    p.add_argument("--seed", type=int, default=None, help="game seed (default: a random one, printed)")
    p.add_argument("--max-cycles", type=int, default=None,
                   help="truncate after this many cycles of one action per seat (default: the game's own)")
    p.add_argument("--no-color", action="store_true",
                   help="plain text, no ANSI colours (default: colours unless NO_COLOR is set)")
    p.add_argument("--pace", type=float, default=0.5,
                   help="seconds to pause after each agent's turn, so it can be followed; a fifth of it between "
                        "the moves of one turn (default 0.5)")


def _seats(num: int, humans: list[int], opponents: list[str]) -> list[str]:
    others = [i for i in range(num) if i not in humans]
    if any(not 0 <= h < num for h in humans):
        raise SystemExit(f"--humans: seats are 0 to {num - 1}, got {humans}")
    if others and not opponents:
        raise SystemExit("give --opponents: an agent id for every other seat, or one id for all of them (python -m "
                         "play agents GAME lists them, strongest first)")
    if len(opponents) == 1 and others:
        opponents = opponents * len(others)
    if len(opponents) != len(others):
        raise SystemExit(f"{len(others)} seats need agents ({[f'player_{i}' for i in others]}); "
                         f"--opponents gave {len(opponents)}")
    seats = ["human"] * num
    for i, agent_id in zip(others, opponents):
        seats[i] = agent_id
    return seats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m play", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("terminal", help="play in this terminal against agents (or hot seat)")
    _add_game_options(t, game_required=False)
    t.add_argument("--opponents", nargs="*", default=[],
                   help="agent id (or policy folder) for each non-human seat in seat order, or one id for all; "
                        "required unless --resume (list them, strongest first: python -m play agents GAME)")
    t.add_argument("--humans", nargs="+", type=int, default=[0],
                   help="the human seats (several = hot seat, the keyboard passed between players; default: 0)")
    t.add_argument("--hint-agent", default=None, help="agent asked by 'hint' (default: the game's best heuristic)")
    t.add_argument("--save", default=None, help="where 'save' writes (default: <game>-session.json)")
    t.add_argument("--resume", default=None, help="continue a game saved with 'save'; game, config and seats come from the file "
                   "(default: a new game)")
    t.add_argument("--record", default=None, help="write the game record (JSON) here when the game ends or on quit "
                   "(default: not written)")

    w = sub.add_parser("watch", help="watch agents play live")
    _add_game_options(w)
    w.add_argument("--agents", nargs="+", required=True,
                   help="agent id for each seat in seat order (a shorter list is repeated)")
    w.add_argument("--max-moves", type=int, default=None, help="stop after this many moves (default: play the whole game)")
    w.add_argument("--record", default=None, help="write the game record (JSON) here at the end (default: not written)")

    r = sub.add_parser("replay", help="replay a record into a GIF, a PNG of the end and a transcript")
    r.add_argument("record", help="a record JSON file (from a session, watch --record, evaluation or a tournament)")
    r.add_argument("--gif", default=None, help="write an animated GIF of the game here (default: none)")
    r.add_argument("--png", default=None, help="write a PNG of the final position here (default: none)")
    r.add_argument("--transcript", default=None, help="write the move list here (default: print it)")
    r.add_argument("--max-frames", type=int, default=200, help="most frames in the GIF; a long game is thinned evenly "
                   "(default: 200)")
    r.add_argument("--fps", type=float, default=4.0, help="GIF frames per second (default: 4)")
    r.add_argument("--scale", type=float, default=1.0, help="scale factor for the pictures (default: 1)")

    s = sub.add_parser("serve", help="serve the browser page on this machine")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on; keep it local (default: 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    s.add_argument("--max-games", type=_positive_int, default=64,
                   help="games held at once; a new game beyond that is refused until one expires (default: 64)")
    s.add_argument("--idle", type=_positive_int, default=1800, metavar="SECONDS",
                   help="a game unused for this long is dropped (default: 1800)")

    a = sub.add_parser("agents", help="the agents that can sit at a table, strongest first (the ladder's order), "
                       "with Elo and time a move")
    a.add_argument("game", choices=envs.NAMES, help="the game, by module name")
    a.add_argument("--config", default=None, help="a named config of the game (e.g. sequence_v0 '2x2'); default: the "
                   "game's default config")
    a.set_defaults(set=None)

    args = parser.parse_args(argv)
    color = not getattr(args, "no_color", False) and not os.environ.get("NO_COLOR")

    if args.command == "agents":
        from play.opponents import listing

        print(listing(args.game, _config(args)))
        return 0

    if args.command == "terminal":
        from play.session import Session
        from play.terminal import TerminalGame

        if args.resume:
            with open(args.resume, "rb") as handle:
                raw = handle.read(64 * 1024 * 1024 + 1)
            if len(raw) > 64 * 1024 * 1024:
                raise InputError(f"{args.resume}: larger than 64 MiB; not a saved session")
            try:
                data = json.loads(raw)
            except ValueError as exc:
                raise InputError(f"{args.resume}: not a saved session: not JSON ({exc})") from None
            session = Session.load(data)
        else:
            if not args.game:
                raise SystemExit("give a game (e.g. sequence_v0) or --resume FILE")
            seats = _seats(_num_seats(args), args.humans, args.opponents)
            session = Session(args.game, seats, config=_config(args), seed=args.seed, max_cycles=args.max_cycles)
        verdict = TerminalGame(session, color=color, pace=args.pace, hint_agent=args.hint_agent,
                               save_path=args.save, record_path=args.record).run()
        return 130 if verdict == "interrupted" else 0

    if args.command == "watch":
        from play.session import Session
        from play.terminal import watch

        n = _num_seats(args)
        seats = [args.agents[i % len(args.agents)] for i in range(n)]
        session = Session(args.game, seats, config=_config(args), seed=args.seed, max_cycles=args.max_cycles,
                          meta={"source": "watch"})
        try:
            watch(session, pace=args.pace, color=color, max_moves=args.max_moves)
        except KeyboardInterrupt:
            print("\nInterrupted.")
        if args.record:
            print(f"Record written to {session.record.save(args.record)}")
        return 0

    if args.command == "replay":
        from agents.records import load_record
        from play.replay import transcript, write_gif, write_png

        try:
            record = load_record(args.record)
            if args.gif:
                print(f"GIF written to {write_gif(record, args.gif, args.max_frames, args.fps, args.scale)}")
            if args.png:
                print(f"PNG written to {write_png(record, args.png, args.scale)}")
            text = transcript(record)
            if not args.gif and not args.png:
                from agents.records import replay

                replay(record)  # refuse a record that does not replay, even for the transcript alone
        except OSError as exc:
            raise InputError(f"{args.record}: {exc.strerror or exc}") from None
        if args.transcript:
            with open(args.transcript, "w") as handle:
                handle.write(text)
            print(f"Transcript written to {args.transcript}")
        else:
            sys.stdout.write(text)
        return 0

    if args.command == "serve":
        from play.web import serve

        serve(host=args.host, port=args.port, max_games=args.max_games, idle_seconds=args.idle)
        return 0
    return 2


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _num_seats(args) -> int:
    from play.session import resolve_config, seat_count

    config = _config(args)
    if isinstance(config, str):
        config = resolve_config(args.game, config)
    return seat_count(args.game, config)


if __name__ == "__main__":
    import sys

    from agents.errors import run_command

    from play.session import SessionError

    sys.exit(run_command(main, "python -m play", also=(SessionError,)))
