"""Il Labirinto del Dojo: the board picture the front ends draw (squares by kind, walls, the Dojo, pawns).

Built from one seat's ``player_view`` only; :class:`envs.dojo.game.DojoGame` hands these to ``play/`` through
``Game.picture`` and ``Game.action_square``.
"""

from __future__ import annotations

from envs.core.picture import SEAT_COLOURS, Cell, Picture

_DOJO_FILL = {".": "#ebe1c8", "A": "#96dc96", "F": "#e68c78", "?": "#b4b4f0", "T": "#787878", "P": "#f0c878",
              "K": "#f078c8"}


def picture(game, view) -> Picture:
    from envs.dojo.board import KINDS, SIZE
    from envs.dojo.cards import CARD_NAMES
    from envs.dojo.game import BELT_NAMES
    from envs.dojo.rules import belt_of

    b = game.board
    n = game.num_players
    cells = []
    for r in range(SIZE):
        row = []
        for c in range(SIZE):
            s = r * SIZE + c
            if b.room[s] >= 0:
                cell = Cell("", "#ffffff", plain="S")
            elif b.dojo[s]:
                cell = Cell("", "#3c3c3c", plain="D")
            else:
                k = KINDS[b.kind[s]]
                cell = Cell("" if k == "." else k, _DOJO_FILL[k])
            here = [q for q in range(n) if view["pos"][q] == s]
            if here:
                cell.mark = "".join(str(q) for q in here)[:2]
                cell.mark_colour = SEAT_COLOURS[here[0]]
                cell.strong = view["seat"] in here
            row.append(cell)
        cells.append(row)
    def edges(pairs):
        return sorted((min(e) // SIZE, min(e) % SIZE, max(e) // SIZE, max(e) % SIZE) for e in pairs)

    walls, doors = edges(b.walls), edges(b.entrances)
    lines = []
    for q in range(n):
        t = view["track"][q]
        held = view["hands"][q]
        count = len(held) if isinstance(held, list) else held
        flags = [f"{count} Tecnica" if count else "", "meditating" if view["med_guard"][q] else ""]
        lines.append(f"player_{q}: track {t} ({BELT_NAMES[belt_of(t)]}) {' '.join(f for f in flags if f)}".rstrip())
    actor = view["pending"][0][1] if view["pending"] else view["actor"]
    if view["winner"] >= 0:
        turn = f"the game is over: player_{view['winner']} wears the Black Belt"
    else:
        turn = (f"turn of player_{view['turn_player']}, phase {view['main_phase']}, player_{actor} to act; "
                f"roll {view['roll']}, steps left {view['mv_steps']}")
    if view["k_att"] >= 0:
        lines.append(f"Kumite ({view['k_kind']}): player_{view['k_att']} attacks player_{view['k_def']}, "
                     f"dice {view['k_dice'][0]} v {view['k_dice'][1]}")
    face_up = [CARD_NAMES[c] for c in view["discard"] if c is not None]
    lines.append(f"deck {view['deck']} cards; discards face up: {', '.join(face_up[-4:]) or '-'}")
    if view["last_card"] >= 0:
        lines.append(f"last card drawn: {CARD_NAMES[view['last_card']]}")
    own = view["hands"][view["seat"]]
    private = [f"you are player_{view['seat']}",
               "your Tecnica: " + (", ".join(CARD_NAMES[c] for c in own) or "none")]
    return Picture(SIZE, SIZE, cells, walls=walls, doors=doors, lines=lines, turn=turn, private=private, cell_width=3,
                   legend="digits: pawns; A Allenamento, F Fatica, ? Nebbia, T Tunnel, P Passo Falso, "
                          "K Sfida; dark (D): the Dojo (green edges: its entrances); white (S): Safe Rooms",
                   strong_means="your pawn")


def action_square(game, view, action):
    from envs.dojo.board import DIRS, SIZE
    from envs.dojo.rules import A_ROOM, A_SEGRETO, A_STEP, SEAT_CORNERS

    actor = view["pending"][0][1] if view["pending"] else view["actor"]
    if A_STEP <= action < A_STEP + 4:
        s = view["pos"][actor]
        if s < 0:
            return None
        r, c = divmod(s, SIZE)
        dr, dc = DIRS[action - A_STEP]
        if 0 <= r + dr < SIZE and 0 <= c + dc < SIZE:
            return r + dr, c + dc
        return None
    if A_ROOM <= action < A_ROOM + 9:
        corner = SEAT_CORNERS[game.num_players][actor]
        return divmod(game.board.rooms[corner][action - A_ROOM], SIZE)
    if action >= A_SEGRETO:
        return divmod(game.board.tunnels[action - A_SEGRETO], SIZE)
    return None
