// The play page: setup form, SVG board, move buttons, agents' moves one by one. No build step.
"use strict";
let catalogue = [];
let state = null;
// Which game the page shows: every answer is for the game it was asked for; a late answer for an
// earlier game (after Start was pressed again) is ignored.
let current = 0;
let busy = false;  // a move of ours is on its way: further clicks wait for its answer
let skipping = false;
let wake = null;  // ends the pause between two agent moves at once (when "skip" is pressed)  // "skip to my next move" was pressed: the agents' moves come in one answer
// The game the page shows is kept in the address (#game=ID) and in the browser's storage, so that a
// reload or a tab opened again finds it, for as long as the server keeps it.
const STORE_KEY = "tabletop-rl-game";
// The form as the shown game was started (game, config, seat, opponent, max cycles, seed as typed), so
// that after a reload Start plays the same game again; the server does not tell the seed before the end.
const FORM_KEY = "tabletop-rl-form";
const FORM_FIELDS = ["game", "config", "seat", "opponent", "max_cycles", "seed"];
const PACE_MS = Number(new URLSearchParams(location.search).get("pace") ?? 250);
const $ = (id) => document.getElementById(id);

function say(text) { $("message").textContent = text || ""; }

// The Rules panel: the words of the game being played (before a game, of the game chosen in the form),
// as the glossary of the game's rules gives them; a word is looked up by the server, which forgives case
// and plurals.
let termsGame = null;
let termsTitle = "";
let termNames = [];

async function showTerms(game) {
  if (!game || game === termsGame) return;
  termsGame = game;
  const { ok, data } = await api("GET", "/api/terms/" + encodeURIComponent(game));
  if (termsGame !== game) return;  // another game was chosen meanwhile
  $("terms").innerHTML = "";
  $("term-answer").innerHTML = "";
  if (!ok) { $("term-answer").textContent = data.error; return; }
  termsTitle = data.title;
  termNames = data.terms.map((t) => t.name);
  $("rules-title").textContent = data.title;
  $("rules-link").hidden = !data.rules;
  if (data.rules) $("rules-link").href = data.rules;
  $("term").placeholder = termNames.length ? "e.g. " + termNames[0] : "";
  if (!termNames.length) {
    $("term-answer").textContent = "The rules of " + data.title + " give no list of words.";
    return;
  }
  for (const term of data.terms) {
    const dt = document.createElement("dt");
    dt.textContent = term.name + (term.names.length > 1 ? " (also: " + term.names.slice(1).join(", ") + ")" : "");
    dt.dataset.term = term.name;
    const dd = document.createElement("dd");
    dd.textContent = term.text;
    $("terms").append(dt, dd);
  }
  document.body.dataset.terms = game;
}

async function lookUp(event) {
  event.preventDefault();
  const word = $("term").value.trim();
  const game = termsGame;
  if (!word || !game) return;
  const { ok, data } = await api("GET", "/api/terms/" + encodeURIComponent(game) + "?q=" + encodeURIComponent(word));
  if (game !== termsGame) return;
  const answer = $("term-answer");
  answer.innerHTML = "";
  for (const dt of $("terms").querySelectorAll("dt")) dt.classList.remove("found");
  if (!ok) { answer.textContent = data.error; return; }
  if (!data.found.length) {
    answer.textContent = "'" + word + "' is not a word of the rules of " + termsTitle + ". Its words: " +
      termNames.join(", ") + ".";
    return;
  }
  for (const term of data.found) {
    const p = document.createElement("p");
    const b = document.createElement("b");
    b.textContent = term.name + ": ";
    p.append(b, term.text);
    answer.appendChild(p);
    for (const dt of $("terms").querySelectorAll("dt")) {
      if (dt.dataset.term === term.name) dt.classList.add("found");
    }
  }
}

// Every answer as {ok, status, data}; an answer that is not JSON, or none at all, becomes
// data.error saying what happened (never a parse error in the console).
async function api(method, url, body) {
  const options = { method, headers: { "Content-Type": "application/json" } };
  if (body !== undefined) options.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    return { ok: false, status: 0, data: { error: "the server did not answer (" + err.message + ")" } };
  }
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("application/json")) {
    try {
      return { ok: response.ok, status: response.status, data: await response.json() };
    } catch (err) { /* fall through: a broken body */ }
  }
  const error = "the server answered " + response.status + " " + response.statusText + " without a JSON body";
  return { ok: false, status: response.status, data: { error } };
}

function fillSetup() {
  const game = catalogue.find((g) => g.name === $("game").value);
  if (!state || state.over) showTerms(game.name);  // a game in play keeps its own words in the panel
  $("config").innerHTML = "";
  for (const name of Object.keys(game.configs)) $("config").add(new Option(name, name));
  fillSeats();
}

// Seats and opponents of the chosen config: only agents that can sit at that table are offered.
function fillSeats() {
  const game = catalogue.find((g) => g.name === $("game").value);
  const config = $("config").value;
  const n = game.seats[config];
  const seat = Number($("seat").value || 0);
  $("seat").innerHTML = "";
  for (let i = 0; i < n; i++) $("seat").add(new Option("player_" + i, i, false, i === (seat < n ? seat : 0)));
  const chosen = $("opponent").value;
  const fit = game.agents_by_config[config];
  $("opponent").innerHTML = "";
  const preferred = fit.includes(chosen) ? chosen : game.default_opponent;
  // Strongest first (the ladder's order, with Elo and time a move); older versions folded under their own heading.
  let older = null;
  for (const entry of game.opponents_by_config[config]) {
    const option = new Option(entry.label, entry.id, false, entry.id === preferred);
    if (entry.older && !older) {
      older = document.createElement("optgroup");
      older.label = "older versions";
      $("opponent").add(older);
    }
    (entry.older ? older : $("opponent")).appendChild(option);
  }
  // A chosen opponent that cannot sit at this table (trained for another config) is replaced: say so.
  if (chosen && !fit.includes(chosen) && game.agents.includes(chosen)) {
    say("The opponent " + chosen + " plays only at the table it was trained for, not at " + config +
        "; the opponent is now " + preferred + ".");
  } else if (chosen) {
    say("");
  }
}

async function init() {
  const { ok, data } = await api("GET", "/api/games");
  if (!ok) { say(data.error); return; }
  catalogue = data.games;
  for (const g of catalogue) $("game").add(new Option(g.name, g.name));
  $("game").onchange = fillSetup;
  $("config").onchange = fillSeats;
  $("start").onclick = start;
  $("hint").onclick = hint;
  $("skip").onclick = skip;
  $("opponent").onchange = () => say("");
  $("term-form").onsubmit = lookUp;
  fillSetup();
  await resume();
  document.body.dataset.ready = "1";
}

function remember(id) {
  try { if (id) localStorage.setItem(STORE_KEY, id); else localStorage.removeItem(STORE_KEY); } catch (err) { /* private mode */ }
  history.replaceState(null, "", id ? "#game=" + id : location.pathname + location.search);
}

// The form's values when game `id` was started (kept with it), or null when forgetting.
function rememberForm(id, values) {
  try {
    if (id) localStorage.setItem(FORM_KEY, JSON.stringify({ id, ...values }));
    else localStorage.removeItem(FORM_KEY);
  } catch (err) { /* private mode */ }
}

// The form as game `id` was started in this browser, or null (started elsewhere, or storage off).
function formOf(id) {
  try {
    const form = JSON.parse(localStorage.getItem(FORM_KEY) || "null");
    return form && form.id === id ? form : null;
  } catch (err) { return null; }
}

// Set the form to the game found after a reload: as it was started when this browser started it,
// else what the server says (game, config, seat, the first opponent). Only the chosen values are set:
// the lists are filled as ever (fillSetup, fillSeats), and a value not offered there is left alone.
function restoreForm(data, game) {
  const form = formOf(data.id);
  const offered = (id, value) => [...$(id).options].some((o) => o.value === value);
  $("game").value = data.game;
  fillSetup();
  let family = form && form.game === data.game && form.config in game.configs ? form.config : null;
  if (!family) {
    // the named config the game was started with: the most specific one its config agrees with
    let size = -1;
    for (const [name, conf] of Object.entries(game.configs)) {
      const keys = Object.keys(conf);
      const same = keys.every((key) => JSON.stringify(conf[key]) === JSON.stringify(data.config[key]));
      if (same && keys.length > size) { family = name; size = keys.length; }
    }
  }
  if (family) { $("config").value = family; fillSeats(); }
  $("seat").value = String(data.seat);
  const opponent = form ? form.opponent : data.seats.find((who, i) => i !== data.seat);
  if (opponent && offered("opponent", opponent)) $("opponent").value = opponent;
  $("max_cycles").value = form ? form.max_cycles : "";
  $("seed").value = form ? form.seed : "";
}

// After a reload (or a closed tab opened again): find the game in the address or the browser's
// storage and show it as it stands, board, log and turn; say so when the server no longer has it.
async function resume() {
  const fromHash = (location.hash.match(/game=([\w-]+)/) || [])[1];
  let stored = null;
  try { stored = localStorage.getItem(STORE_KEY); } catch (err) { /* private mode */ }
  const id = fromHash || stored;
  if (!id) return;
  const token = ++current;
  const { ok, status, data } = await api("GET", "/api/sessions/" + id);
  if (token !== current) return;
  if (!ok) {
    remember(null);
    rememberForm(null);
    say(status === 404 ? "Your earlier game is no longer on the server (a game unused for a while is dropped, " +
        "and a restarted server keeps none): start a new one." : "Could not find your earlier game: " + data.error);
    return;
  }
  const game = catalogue.find((g) => g.name === data.game);
  if (game) restoreForm(data, game);
  $("log").innerHTML = "";
  $("game-area").hidden = false;
  $("download").hidden = true;
  $("result").textContent = "";
  say(data.over ? "Your earlier game, finished." : "Your earlier game, as it stands.");
  show(data);
  loop();
}

async function start() {
  say("");
  const token = ++current;
  // The old game is finished with: its board stops answering clicks at once.
  const old = state;
  state = null;
  busy = false;
  $("game-area").classList.add("stale");
  $("moves").innerHTML = "";
  $("choices").innerHTML = "";
  $("hint").hidden = true;
  if (old) api("DELETE", "/api/sessions/" + old.id);  // its place on the server is free at once
  const form = Object.fromEntries(FORM_FIELDS.map((id) => [id, $(id).value]));
  const body = { game: $("game").value, config: $("config").value, seat: Number($("seat").value),
                 opponents: $("opponent").value };
  if ($("max_cycles").value) body.max_cycles = Number($("max_cycles").value);
  if ($("seed").value) body.seed = Number($("seed").value);
  const { ok, data } = await api("POST", "/api/sessions", body);
  if (token !== current) return;  // Start was pressed again meanwhile
  if (!ok) {
    $("game-area").hidden = true;
    remember(null);
    rememberForm(null);
    say("Could not start the game: " + data.error);
    return;
  }
  remember(data.id);
  rememberForm(data.id, form);
  skipping = false;
  $("game-area").classList.remove("stale");
  $("log").innerHTML = "";
  $("game-area").hidden = false;
  $("download").hidden = true;
  $("result").textContent = "";
  show(data);
  loop();
}

function show(data) {
  state = data;
  showTerms(data.game);
  document.body.dataset.game = data.game;
  document.body.dataset.sid = data.id;
  document.body.dataset.moves = String(data.num_moves);
  for (const ev of data.events) {
    const line = document.createElement("div");
    line.textContent = ev.index + ". " + ev.text;
    $("log").appendChild(line);
    for (const said of ev.story) {
      const more = document.createElement("div");
      more.className = "story";
      more.textContent = said;
      $("log").appendChild(more);
    }
    $("log").scrollTop = $("log").scrollHeight;
  }
  drawBoard(data);
  $("private").textContent = data.picture.private.join("\n");
  $("public").textContent = [data.picture.turn, ...data.picture.lines].filter((l) => l).join("\n");
  $("legend").textContent = data.picture.legend;
  $("choices").innerHTML = "";
  $("moves").innerHTML = "";
  $("hint-text").textContent = "";
  $("hint").hidden = !data.your_turn;
  $("waiting").textContent = data.over || data.your_turn ? "" : data.waiting;
  $("skip").hidden = data.over || data.your_turn;
  $("skip").disabled = skipping;
  if (data.over) {
    skipping = false;
    $("status").textContent = "Game over: " + (data.end_text || data.end);
    $("result").textContent = "Result: " + data.result;
    $("download").href = "/api/sessions/" + data.id + "/record";
    $("download").hidden = false;
    document.body.dataset.over = "1";
    return;
  }
  document.body.dataset.over = "";
  if (data.your_turn) {
    skipping = false;
    $("status").textContent = "Your move, player_" + data.seat + ": " + data.picture.turn;
    for (const m of data.moves) {
      const b = document.createElement("button");
      b.textContent = m.name;
      b.dataset.action = m.action;
      b.className = "move";
      b.onclick = () => play({ action: m.action });
      $("moves").appendChild(b);
    }
    document.body.dataset.turn = "1";
  } else {
    $("status").textContent = skipping ? "Skipping ahead to your next move (or the end)..."
      : "player_" + data.to_act + " (" + data.seats[data.to_act] + ") is thinking...";
    document.body.dataset.turn = "";
  }
}

function drawBoard(data) {
  const pic = data.picture;
  const size = pic.cols > 20 ? 24 : pic.cols > 10 ? 44 : pic.cols > 6 ? 52 : 64;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", pic.cols * size + 2);
  svg.setAttribute("height", pic.rows * size + 2);
  svg.setAttribute("viewBox", "0 0 " + (pic.cols * size + 2) + " " + (pic.rows * size + 2));
  const targets = new Set(data.moves.filter((m) => m.square).map((m) => m.square[0] + "," + m.square[1]));
  for (let r = 0; r < pic.rows; r++) {
    for (let c = 0; c < pic.cols; c++) {
      const cell = pic.cells[r][c];
      const g = document.createElementNS(ns, "g");
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", c * size + 1); rect.setAttribute("y", r * size + 1);
      rect.setAttribute("width", size); rect.setAttribute("height", size);
      rect.setAttribute("fill", cell.fill); rect.setAttribute("stroke", "#666");
      rect.setAttribute("class", targets.has(r + "," + c) ? "cell target" : "cell");
      rect.dataset.r = r; rect.dataset.c = c;
      rect.id = "sq-" + r + "-" + c;
      rect.onclick = () => play({ square: [r, c] });
      g.appendChild(rect);
      if (cell.text) {
        const t = document.createElementNS(ns, "text");
        t.setAttribute("x", c * size + 3); t.setAttribute("y", r * size + Math.max(10, size * 0.3));
        t.setAttribute("font-size", Math.max(10, size * 0.32)); t.setAttribute("pointer-events", "none");
        t.setAttribute("fill", isDark(cell.fill) ? "#fff" : "#000");
        t.textContent = cell.text;
        g.appendChild(t);
      }
      if (cell.mark) {
        const circle = document.createElementNS(ns, "circle");
        circle.setAttribute("cx", c * size + 1 + size / 2); circle.setAttribute("cy", r * size + 1 + size * 0.62);
        circle.setAttribute("r", size * 0.3); circle.setAttribute("fill", cell.mark_colour || "#000");
        circle.setAttribute("stroke", cell.strong ? "#000" : "#fff");
        circle.setAttribute("stroke-width", cell.strong ? 3 : 1);
        circle.setAttribute("pointer-events", "none");
        g.appendChild(circle);
        const t = document.createElementNS(ns, "text");
        t.setAttribute("x", c * size + 1 + size / 2); t.setAttribute("y", r * size + 1 + size * 0.62 + size * 0.1);
        t.setAttribute("font-size", Math.max(8, size * 0.3)); t.setAttribute("text-anchor", "middle");
        t.setAttribute("fill", "#fff"); t.setAttribute("pointer-events", "none");
        t.textContent = cell.mark;
        g.appendChild(t);
      }
      svg.appendChild(g);
    }
  }
  const edges = pic.walls.map((w) => [w, "#111"]).concat(pic.doors.map((d) => [d, "#28c83c"]));
  for (const [[r1, c1, r2, c2], colour] of edges) {
    const line = document.createElementNS(ns, "line");
    if (r1 === r2) {
      const x = Math.max(c1, c2) * size + 1;
      line.setAttribute("x1", x); line.setAttribute("x2", x);
      line.setAttribute("y1", r1 * size + 1); line.setAttribute("y2", (r1 + 1) * size + 1);
    } else {
      const y = Math.max(r1, r2) * size + 1;
      line.setAttribute("y1", y); line.setAttribute("y2", y);
      line.setAttribute("x1", c1 * size + 1); line.setAttribute("x2", (c1 + 1) * size + 1);
    }
    line.setAttribute("stroke", colour); line.setAttribute("stroke-width", 3);
    line.setAttribute("pointer-events", "none");
    svg.appendChild(line);
  }
  $("board").innerHTML = "";
  $("board").appendChild(svg);
}

function isDark(hex) {
  const v = parseInt(hex.slice(1), 16);
  return 0.299 * (v >> 16) + 0.587 * ((v >> 8) & 255) + 0.114 * (v & 255) < 110;
}

async function hint() {
  if (!state) return;
  const token = current;
  const { ok, data } = await api("GET", "/api/sessions/" + state.id + "/hint");
  if (token !== current) return;
  $("hint-text").textContent = ok ? data.agent + " would play: " + data.name : data.error;
}

async function play(body) {
  if (!state || state.over || busy) return;
  const token = current;
  say("");
  $("choices").innerHTML = "";
  busy = true;
  let answer;
  try {
    answer = await api("POST", "/api/sessions/" + state.id + "/move", body);
  } finally {
    if (token === current) busy = false;
  }
  if (token !== current) return;  // an answer for a game the page no longer shows
  const { ok, status, data } = answer;
  if (status === 409 && data.choices) {
    say(data.error);
    for (const ch of data.choices) {
      const b = document.createElement("button");
      b.textContent = ch.name;
      b.onclick = () => play({ action: ch.action });
      $("choices").appendChild(b);
    }
    return;
  }
  if (!ok) { say("Refused: " + data.error); return; }
  show(data);
  loop();
}

// Every agent move until the player's next decision (or the end) in one answer, for a wait the
// player does not want to watch move by move.
async function skip() {
  if (!state || state.over || state.your_turn || skipping) return;
  skipping = true;
  $("skip").disabled = true;
  $("status").textContent = "Skipping ahead to your next move (or the end)...";
  if (wake) wake();
}

// The agents' moves one by one, for the game shown when the loop began; it stops as soon as
// another game is started (its answers are then dropped).
async function loop() {
  const token = current;
  while (token === current && state && !state.over && !state.your_turn) {
    // a whole pause after an agent's turn, a fifth of it between the moves of one turn (a walk's steps)
    const last = state.events.length ? state.events[state.events.length - 1].seat : null;
    const pause = last === state.to_act ? PACE_MS / 5 : PACE_MS;
    if (!skipping) await new Promise((resolve) => { wake = resolve; setTimeout(resolve, pause); });
    wake = null;
    if (token !== current) return;
    const { ok, data } = await api("POST", "/api/sessions/" + state.id + (skipping ? "/skip" : "/advance"));
    if (token !== current) return;
    if (!ok) { say(data.error); return; }
    show(data);
  }
}

init();
