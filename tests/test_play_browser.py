"""The browser front end in real headless Chromium (Debian's package, driven by Playwright).

A whole game against the heuristic in each game, an illegal click refused, and every response the
server sends checked: built from the human seat's view alone, no other seat's private information,
no seed before the end.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (Debian's chromium package: apt-get install -y chromium)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from agents.records import Record, replay  # noqa: E402  (after the skip checks)
from play.views import picture  # noqa: E402  (after the skip checks)
from play.web import create_app  # noqa: E402  (after the skip checks)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
STATE_KEYS = {"id", "game", "config", "seat", "seats", "to_act", "your_turn", "phase", "picture", "moves", "events",
              "num_moves", "over", "waiting", "result", "end", "end_text", "seed"}
GAMES = [
    ("sequence_v0", "2p", None),
    ("pans_trial_v0", "default", None),
    ("dojo_v0", "2p", 40),
    ("wizard_arena_v0", "2bots", 15),
]


class Checker:
    """Sees every state the server sends, at the moment it is sent."""

    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []

    def __call__(self, session, seat, body) -> None:
        self.checked += 1
        text = json.dumps(body)
        if set(body) != STATE_KEYS:
            self.problems.append(f"unexpected keys {sorted(set(body) ^ STATE_KEYS)}")
        view = session.view(seat)
        ended = session.end_text() if body["over"] else None
        if body["picture"] != picture(session.game, view, ended=ended).to_dict():
            self.problems.append("picture not built from the seat's view")
        if not body["over"] and body["seed"] is not None:
            self.problems.append("seed sent before the end")
        if body["over"] and body["end_text"] != session.end_text():
            self.problems.append(f"end_text {body['end_text']!r} is not the session's {session.end_text()!r}")
        if body["moves"] and not body["your_turn"]:
            self.problems.append("moves sent while another seat is to act")
        own = set(picture(session.game, view).private)
        for other in range(len(session.seats)):
            if other == seat:
                continue
            for line in picture(session.game, session.view(other)).private:
                if line.startswith("you are") or line in own:
                    continue
                if line in text:
                    self.problems.append(f"player_{other}'s private line {line!r} sent to player_{seat}")
        for event in body["events"]:
            if event["name"] is None and event["action"] is not None:
                self.problems.append("hidden move's action id sent")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    import uvicorn

    checker = Checker()
    port = _free_port()
    config = uvicorn.Config(create_app(on_response=checker), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if time.monotonic() > deadline:
            pytest.fail("the play server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", checker
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def _start(page, url, game, config, max_cycles):
    page.goto(url + "/?pace=0")
    page.wait_for_selector("body[data-ready='1']")
    page.select_option("#game", game)
    page.select_option("#config", config)
    page.select_option("#seat", "0")
    page.select_option("#opponent", f"{game}/heuristic-v1")
    if max_cycles:
        page.fill("#max_cycles", str(max_cycles))
    page.fill("#seed", "11")
    page.click("#start")


def _wait_turn(page, errors):
    try:
        page.wait_for_function("document.body.dataset.turn === '1' || document.body.dataset.over === '1'")
    except sync_api.TimeoutError:
        pytest.fail(f"the page never offered a move; its errors: {errors or 'none'}; "
                    f"message: {page.text_content('#message')!r}")
    return page.evaluate("document.body.dataset.over") == "1"


@pytest.mark.parametrize("game, config, max_cycles", GAMES)
def test_whole_game_against_the_heuristic(server, browser, game, config, max_cycles):
    url, checker = server
    page = browser.new_page()
    bodies: list[tuple[str, str]] = []

    def keep(response):
        if "/api/" in response.url:
            try:
                bodies.append((response.url, response.text()))
            except sync_api.Error:  # a response the page navigated away from has no body
                bodies.append((response.url, "{}"))

    page.on("response", keep)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _start(page, url, game, config, max_cycles)
    clicks = squares = 0
    illegal_tried = False
    while not _wait_turn(page, errors):
        before = page.evaluate("document.body.dataset.moves")
        if not illegal_tried:
            # a square no legal move is about: refused, nothing changes
            target = page.evaluate("""() => {
                const r = [...document.querySelectorAll('#board rect.cell')].find(e => !e.classList.contains('target'));
                return r ? r.id : null; }""")
            page.click(f"#{target}")
            page.wait_for_function("document.getElementById('message').textContent.startsWith('Refused')")
            assert "no legal move on row" in page.text_content("#message")
            assert page.evaluate("document.body.dataset.moves") == before
            illegal_tried = True
            page.click("#hint")
            page.wait_for_function("document.getElementById('hint-text').textContent.includes('would play: ')")
        targets = page.query_selector_all("#board rect.target")
        if targets and clicks % 2 == 0:
            targets[0].click()
            squares += 1
            page.wait_for_function(
                f"document.body.dataset.moves !== '{before}' || document.querySelectorAll('#choices button').length > 0")
            if page.evaluate("document.body.dataset.moves") == before:
                page.click("#choices button")
        else:
            page.click("#moves button.move")
        page.wait_for_function(f"document.body.dataset.moves !== '{before}'")
        clicks += 1
    assert clicks >= 3
    assert not errors, errors
    assert page.text_content("#result").startswith("Result: ")
    # the status line says how the game ended, in the game's own words (never "player_N to act")
    status = page.text_content("#status")
    assert status.startswith("Game over: ") and len(status) > len("Game over: "), status
    assert "to act" not in page.text_content("#public")
    href = page.get_attribute("#download", "href")
    record = Record.from_dict(json.loads(page.request.get(url + href).text()))
    assert record.game == game and record.seats[0] == "human" and record.result["over"]
    assert sum(1 for m in record.moves if m.seat == 0) == clicks
    replay(record)
    if game in ("sequence_v0", "pans_trial_v0", "dojo_v0", "wizard_arena_v0"):
        assert squares >= 1, "no move was made by clicking a square"
    page.close()
    assert checker.checked > clicks
    assert not checker.problems, checker.problems[:5]
    # What reached the browser: never the seed before the end, never a hand or deck field.
    for address, text in bodies:
        if address.endswith("/record"):
            continue
        data = json.loads(text)
        if isinstance(data, dict) and "over" in data and not data["over"]:
            assert data["seed"] is None
        assert '"hands"' not in text and '"deck"' not in text and '"omens"' not in text


def test_api_refuses_bad_requests(server, browser):
    url, _ = server
    page = browser.new_page()
    request = page.request
    bad = request.post(url + "/api/sessions", data=json.dumps({"game": "chess_v0"}),
                       headers={"Content-Type": "application/json"})
    assert bad.status == 400 and "unknown game" in bad.json()["error"]
    bad = request.post(url + "/api/sessions", data=json.dumps({"game": "sequence_v0", "seat": 5}),
                       headers={"Content-Type": "application/json"})
    assert bad.status == 400 and "seat must be" in bad.json()["error"]
    bad = request.post(url + "/api/sessions", data=json.dumps({"game": "dojo_v0", "config": {"board_file": "/etc/passwd"}}),
                       headers={"Content-Type": "application/json"})
    assert bad.status == 400 and "config must be the name" in bad.json()["error"]
    bad = request.post(url + "/api/sessions", data=json.dumps({"game": "dojo_v0", "config": "9p"}),
                       headers={"Content-Type": "application/json"})
    assert bad.status == 400 and 'no config named "9p"' in bad.json()["error"]
    made = request.post(url + "/api/sessions", data=json.dumps({"game": "sequence_v0", "seat": 0}),
                        headers={"Content-Type": "application/json"}).json()
    sid = made["id"]
    assert request.get(f"{url}/api/sessions/{sid}/record").status == 409
    hint = request.get(f"{url}/api/sessions/{sid}/hint").json()
    assert hint["action"] in {m["action"] for m in made["moves"]} and hint["agent"] == "sequence_v0/heuristic-v1"
    legal = {m["action"] for m in made["moves"]}
    illegal = next(a for a in range(349) if a not in legal)
    refused = request.post(f"{url}/api/sessions/{sid}/move", data=json.dumps({"action": illegal}),
                           headers={"Content-Type": "application/json"})
    assert refused.status == 400 and "is not legal now" in refused.json()["error"]
    huge = request.post(f"{url}/api/sessions/{sid}/move", data="x" * 20000,
                        headers={"Content-Type": "application/json"})
    assert huge.status == 413 and "larger than 16 KiB" in huge.json()["error"]
    # arrays nested 8,000 deep (16 KB): the parser gives up, and the answer is a 400 like any bad body
    deep = request.post(f"{url}/api/sessions/{sid}/move", data=("[" * 8000 + "]" * 8000).encode(),
                        headers={"Content-Type": "application/json"})
    assert deep.status == 400 and "not JSON" in deep.json()["error"]
    for path in ("", "/hint", "/record"):
        missing = request.get(f"{url}/api/sessions/nope{path}")
        assert missing.status == 404 and "no such game" in missing.json()["error"]
    for path in ("/advance", "/move"):
        missing = request.post(f"{url}/api/sessions/nope{path}", data="{}", headers={"Content-Type": "application/json"})
        assert missing.status == 404 and "no such game" in missing.json()["error"]
    page.close()


def test_the_toy_game_plays_in_the_browser(server, browser, monkeypatch):
    """The toy game of tests/toy (a game play/ knows nothing about) plays like the shipped ones."""
    import agents
    import envs
    import tests.toy_game  # noqa: F401  (puts the toy game on the package paths)

    monkeypatch.setattr(envs, "NAMES", (*envs.NAMES, "nim_v0"))
    agents.load_game_agents("nim_v0")
    test_whole_game_against_the_heuristic(server, browser, "nim_v0", "default", None)


def _fresh(page, url):
    page.goto(url + "/?pace=0")
    page.wait_for_selector("body[data-ready='1']")


def test_opponents_offered_fit_the_table_and_a_misfit_is_explained(server, browser):
    url, _ = server
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _fresh(page, url)
    page.select_option("#game", "sequence_v0")
    offered = lambda: page.eval_on_selector_all("#opponent option", "os => os.map(o => o.value)")  # noqa: E731
    page.select_option("#config", "2p")
    assert "sequence_v0/ppo-v1" in offered() and "sequence_v0/ppo-teams-v1" not in offered()
    page.select_option("#config", "2x2")
    assert "sequence_v0/ppo-teams-v1" in offered() and "sequence_v0/ppo-v1" not in offered()
    # A page that sends a misfit anyway (an old page, a hand-made request) is told why, as text.
    page.select_option("#config", "2p")
    page.evaluate("""() => { const s = document.getElementById('opponent');
        s.add(new Option('sequence_v0/ppo-teams-v1', 'sequence_v0/ppo-teams-v1', true, true)); }""")
    page.click("#start")
    page.wait_for_function("document.getElementById('message').textContent.length > 0")
    message = page.text_content("#message")
    assert message.startswith("Could not start the game: seat 1: sequence_v0/ppo-teams-v1 was trained for another")
    assert page.is_hidden("#game-area") and not errors, errors
    page.close()


def test_a_new_game_replaces_the_old_one_and_late_answers_are_ignored(server, browser):
    url, _ = server
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    held_advance: list = []
    held_create: list = []
    hold = {"advance": True, "create": False}
    moves_sent: list[str] = []
    page.on("request", lambda r: moves_sent.append(r.url) if r.url.endswith("/move") else None)

    def on_advance(route):
        if hold["advance"]:
            held_advance.append(route)
        else:
            route.continue_()

    def on_create(route):
        if hold["create"] and route.request.method == "POST":
            held_create.append(route)
        else:
            route.continue_()

    page.route("**/api/sessions/*/advance", on_advance)
    page.route("**/api/sessions", on_create)
    _fresh(page, url)
    # Game A: Wizard Arena from seat 1, so the agent moves first and its answer is held back.
    page.select_option("#game", "wizard_arena_v0")
    page.select_option("#config", "2bots")
    page.select_option("#seat", "1")
    page.select_option("#opponent", "wizard_arena_v0/random-v0")
    page.click("#start")
    page.wait_for_function("document.body.dataset.game === 'wizard_arena_v0'")
    old_sid = page.evaluate("document.body.dataset.sid")
    while not held_advance:
        page.wait_for_timeout(20)
    # Game B: Sequence; its creation is held back too, so the old board is on screen meanwhile.
    hold["create"] = True
    page.select_option("#game", "sequence_v0")
    page.select_option("#config", "2p")
    page.select_option("#seat", "0")
    page.select_option("#opponent", "sequence_v0/random-v0")
    page.click("#start")
    while not held_create:
        page.wait_for_timeout(20)
    assert "stale" in page.get_attribute("#game-area", "class")  # disabled at once
    page.evaluate("document.querySelector('#board rect').dispatchEvent(new MouseEvent('click'))")
    page.wait_for_timeout(100)
    assert moves_sent == []  # a click on the old board sends nothing
    held_create.pop().continue_()
    page.wait_for_function("document.body.dataset.game === 'sequence_v0' && document.body.dataset.turn === '1'")
    new_sid = page.evaluate("document.body.dataset.sid")
    assert new_sid != old_sid
    # Now the old game's late answer arrives: it must change nothing on screen.
    log_before = page.text_content("#log")
    hold["advance"] = False
    held_advance.pop().continue_()
    page.wait_for_timeout(500)
    assert page.evaluate("document.body.dataset.sid") == new_sid
    assert page.evaluate("document.body.dataset.game") == "sequence_v0"
    assert page.text_content("#log") == log_before and page.text_content("#message") == ""
    assert "stale" not in (page.get_attribute("#game-area", "class") or "")
    page.click("#moves button.move")  # the new game plays on
    page.wait_for_function("document.body.dataset.moves !== '0'")
    assert not errors, errors
    page.close()


def test_a_reload_finds_the_same_game_and_an_expired_one_says_so(server, browser):
    url, _ = server
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _start(page, url, "sequence_v0", "2p", None)
    for _ in range(2):
        _wait_turn(page, errors)
        before = page.evaluate("document.body.dataset.moves")
        page.click("#moves button.move")
        page.wait_for_function(f"document.body.dataset.moves !== '{before}'")
    _wait_turn(page, errors)
    sid = page.evaluate("document.body.dataset.sid")
    log = page.text_content("#log")
    board = page.inner_html("#board")
    assert f"#game={sid}" in page.url and "player_1 draws a card" in log
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    _wait_turn(page, errors)
    assert page.evaluate("document.body.dataset.sid") == sid
    assert page.text_content("#log") == log and page.inner_html("#board") == board
    assert page.text_content("#status").startswith("Your move, player_0")
    assert page.input_value("#game") == "sequence_v0" and page.input_value("#config") == "2p"
    # a tab closed and opened again: the address no longer holds the game, the browser's storage does
    page.goto(url + "/?pace=0")
    page.wait_for_selector("body[data-ready='1']")
    _wait_turn(page, errors)
    assert page.evaluate("document.body.dataset.sid") == sid and page.text_content("#log") == log
    # the server dropped the game: the page says so and offers the form
    page.request.delete(f"{url}/api/sessions/{sid}")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert "no longer on the server" in page.text_content("#message")
    assert page.is_hidden("#game-area") and not errors, errors
    page.close()


def test_a_finished_game_shows_its_result_after_a_reload(server, browser):
    url, _ = server
    page = browser.new_page()
    _start(page, url, "wizard_arena_v0", "2bots", 3)
    while not _wait_turn(page, []):
        before = page.evaluate("document.body.dataset.moves")
        page.click("#moves button.move")
        page.wait_for_function(f"document.body.dataset.moves !== '{before}'")
    result = page.text_content("#result")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function("document.body.dataset.over === '1'")
    assert page.text_content("#result") == result and page.text_content("#status").startswith("Game over: ")
    page.close()


def test_skip_goes_to_the_next_decision_at_once(server, browser):
    url, _ = server
    page = browser.new_page()
    page.goto(url + "/?pace=600000")  # ten minutes between agent moves: only "skip" can get past them
    page.wait_for_selector("body[data-ready='1']")
    page.select_option("#game", "dojo_v0")
    page.select_option("#config", "4p")
    page.select_option("#seat", "3")
    page.fill("#seed", "8")
    page.click("#start")
    page.wait_for_function("document.body.dataset.turn === '1' || !document.getElementById('skip').hidden")
    if page.evaluate("document.body.dataset.turn") == "1":  # our pawn is placed first: then the agents wait
        page.click("#moves button.move")
        page.wait_for_selector("#skip:not([hidden])")
    assert "is thinking" in page.text_content("#status")
    page.click("#skip")
    page.wait_for_function("document.body.dataset.turn === '1'", timeout=60_000)
    assert page.is_hidden("#skip") and page.text_content("#status").startswith("Your move, player_3")
    page.close()


def test_move_buttons_and_your_move_are_in_view_at_1280_by_900(server, browser):
    url, _ = server
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    for game, config in (("dojo_v0", "4p"), ("wizard_arena_v0", "16bots"), ("sequence_v0", "2p"),
                         ("pans_trial_v0", "default")):
        page.goto(url + "/?pace=0")
        page.wait_for_selector("body[data-ready='1']")
        page.select_option("#game", game)
        page.select_option("#config", config)
        page.fill("#seed", "8")
        page.click("#start")
        _wait_turn(page, [])
        for selector in ("#status", "#moves button.move"):
            box = page.locator(selector).first.bounding_box()
            assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 900, (game, selector, box)
    page.close()


def test_a_config_change_keeps_the_opponent_when_it_fits_and_says_so_when_not(server, browser):
    url, _ = server
    page = browser.new_page()
    _fresh(page, url)
    page.select_option("#game", "sequence_v0")
    page.select_option("#config", "2p")
    page.select_option("#opponent", "sequence_v0/random-v0")
    page.select_option("#config", "2x2")
    assert page.input_value("#opponent") == "sequence_v0/random-v0" and page.text_content("#message") == ""
    page.select_option("#config", "2p")
    page.select_option("#opponent", "sequence_v0/ppo-v1")
    page.select_option("#config", "2x2")
    message = page.text_content("#message")
    assert "sequence_v0/ppo-v1 plays only at the table it was trained for" in message
    assert page.input_value("#opponent") in message
    page.close()


def _form(page):
    return {key: page.input_value("#" + key) for key in ("game", "config", "seat", "opponent", "max_cycles", "seed")}


def test_a_reload_restores_the_form_so_that_start_plays_the_same_game_again(server, browser):
    url, _ = server
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _fresh(page, url)
    page.select_option("#game", "wizard_arena_v0")
    page.select_option("#config", "2bots")
    page.select_option("#seat", "1")  # the agent moves first: its moves depend on the seed alone
    page.select_option("#opponent", "wizard_arena_v0/random-v0")
    page.fill("#max_cycles", "20")
    page.fill("#seed", "5")
    started = _form(page)
    page.click("#start")
    _wait_turn(page, errors)
    sid, log = page.evaluate("document.body.dataset.sid"), page.text_content("#log")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    _wait_turn(page, errors)
    assert page.evaluate("document.body.dataset.sid") == sid
    assert _form(page) == started  # not the defaults (heuristic-v1, seed "random")
    page.click("#start")  # the same game again, from its start
    page.wait_for_function(f"document.body.dataset.sid !== '{sid}'")
    _wait_turn(page, errors)
    assert page.text_content("#log") == log and _form(page) == started
    # a seed left "random" stays so after a reload; a tab opened again finds the form in storage
    page.fill("#seed", "")
    page.select_option("#opponent", "wizard_arena_v0/heuristic-v1")
    random_seed = _form(page)
    sid = page.evaluate("document.body.dataset.sid")
    page.click("#start")
    page.wait_for_function(f"document.body.dataset.sid !== '{sid}'")
    _wait_turn(page, errors)
    page.goto(url + "/?pace=0")
    page.wait_for_selector("body[data-ready='1']")
    _wait_turn(page, errors)
    assert _form(page) == random_seed and random_seed["seed"] == ""
    assert not errors, errors
    page.close()


def test_the_opponent_list_follows_the_ladder_with_older_versions_folded(server, browser):
    from agents.ladder import ladder

    url, _ = server
    page = browser.new_page()
    page.goto(url + "/?pace=0")
    page.wait_for_selector("body[data-ready='1']")
    page.select_option("#game", "pans_trial_v0")
    page.select_option("#config", "default")
    offered = page.evaluate("""() => [...document.querySelectorAll('#opponent option')].map(o => ({
        id: o.value, label: o.textContent, older: o.parentElement.tagName === 'OPTGROUP',
        group: o.parentElement.tagName === 'OPTGROUP' ? o.parentElement.label : null }))""")
    rows = {r["id"]: r for r in ladder("pans_trial_v0")}
    current = [o for o in offered if not o["older"]]
    older = [o for o in offered if o["older"]]
    assert [o["id"] for o in current] == [r for r in rows if not rows[r]["superseded_by"] and r in
                                          {o["id"] for o in offered}]
    assert older and {o["group"] for o in older} == {"older versions"}
    assert all(rows[o["id"]]["superseded_by"] for o in older)
    top = rows[current[0]["id"]]
    assert current[0]["id"] == ladder("pans_trial_v0")[0]["id"]  # the strongest first
    assert f"Elo {top['elo']:.0f}" in current[0]["label"] and "a move" in current[0]["label"]
    page.close()


def test_the_rules_panel_explains_the_words_of_the_game(server, browser):
    """The panel shows the glossary of the game's rules (before a game, of the game chosen; in a game, of
    the game played), looks a word up whatever its case and number, and links to the whole rules."""
    import envs
    from play.terms import glossary

    url, _ = server
    page = browser.new_page()
    _fresh(page, url)
    page.select_option("#game", "pans_trial_v0")
    page.wait_for_selector("body[data-terms='pans_trial_v0']")
    assert page.is_hidden("#terms")  # the panel is closed until opened
    page.click("#rules summary")
    words = glossary(envs.game_class("pans_trial_v0"))
    assert page.text_content("#rules-title") == "Pan's Trial"
    shown = page.eval_on_selector_all("#terms dt", "els => els.map((e) => e.textContent)")
    meanings = page.eval_on_selector_all("#terms dd", "els => els.map((e) => e.textContent)")
    assert shown == [t.heading() for t in words.terms] and meanings == [t.text for t in words.terms]
    assert "Appeasing Pan (also: Appeasing, Pan)" in shown
    page.fill("#term", "OMENS")
    page.click("#term-go")
    page.wait_for_function("document.getElementById('term-answer').textContent.startsWith('Omen: ')")
    assert page.text_content("#term-answer") == "Omen: " + words.lookup("omen")[0].text
    assert page.eval_on_selector_all("#terms dt.found", "els => els.map((e) => e.textContent)") == ["Omen"]
    page.fill("#term", "kumite")
    page.press("#term", "Enter")
    page.wait_for_function("document.getElementById('term-answer').textContent.includes('is not a word')")
    assert page.text_content("#term-answer") == ("'kumite' is not a word of the rules of Pan's Trial. Its words: "
                                                 + ", ".join(words.names()) + ".")
    rules = page.request.get(url + page.get_attribute("#rules-link", "href"))
    assert rules.status == 200 and rules.text() == words.path.read_text(encoding="utf-8")

    # a game in play keeps its words in the panel, whatever the form then shows
    _start(page, url, "sequence_v0", "2p", None)  # a page loaded afresh: the panel closed again
    page.wait_for_selector("body[data-terms='sequence_v0']")
    page.select_option("#game", "dojo_v0")
    page.click("#rules summary")
    page.fill("#term", "jacks")
    page.click("#term-go")
    page.wait_for_function("document.getElementById('term-answer').textContent.startsWith('Jack: ')")
    assert page.text_content("#rules-title") == "Sequence"
    assert page.evaluate("document.body.dataset.terms") == "sequence_v0"
    missing = page.request.get(url + "/api/terms/chess_v0")
    assert missing.status == 404 and "unknown game" in missing.json()["error"]
    page.close()
