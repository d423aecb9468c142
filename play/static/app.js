// The play page: setup form, SVG board, move buttons, agents' moves one by one. No build step.
"use strict";
let catalogue = [];
let state = null;
const PACE_MS = Number(new URLSearchParams(location.search).get("pace") ?? 250);
const $ = (id) => document.getElementById(id);

function say(text) { $("message").textContent = text || ""; }

async function api(method, url, body) {
  const options = { method, headers: { "Content-Type": "application/json" } };
  if (body !== undefined) options.body = JSON.stringify(body);
  const response = await fetch(url, options);
  const data = await response.json();
  return { ok: response.ok, status: response.status, data };
}

function fillSetup() {
  const game = catalogue.find((g) => g.name === $("game").value);
  $("config").innerHTML = "";
  for (const name of Object.keys(game.configs)) $("config").add(new Option(name, name));
  $("opponent").innerHTML = "";
  for (const id of game.agents) $("opponent").add(new Option(id, id, false, id === game.default_opponent));
  fillSeats();
}

function fillSeats() {
  const game = catalogue.find((g) => g.name === $("game").value);
  const n = game.seats[$("config").value];
  $("seat").innerHTML = "";
  for (let i = 0; i < n; i++) $("seat").add(new Option("player_" + i, i));
}

async function init() {
  const { data } = await api("GET", "/api/games");
  catalogue = data.games;
  for (const g of catalogue) $("game").add(new Option(g.name, g.name));
  $("game").onchange = fillSetup;
  $("config").onchange = fillSeats;
  $("start").onclick = start;
  $("hint").onclick = hint;
  fillSetup();
  document.body.dataset.ready = "1";
}

async function start() {
  say("");
  const body = { game: $("game").value, config: $("config").value, seat: Number($("seat").value),
                 opponents: $("opponent").value };
  if ($("max_cycles").value) body.max_cycles = Number($("max_cycles").value);
  if ($("seed").value) body.seed = Number($("seed").value);
  const { ok, data } = await api("POST", "/api/sessions", body);
  if (!ok) { say(data.error); return; }
  $("log").innerHTML = "";
  $("game-area").hidden = false;
  $("download").hidden = true;
  $("result").textContent = "";
  show(data);
  loop();
}

function show(data) {
  state = data;
  document.body.dataset.moves = String(data.num_moves);
  for (const ev of data.events) {
    const line = document.createElement("div");
    line.textContent = ev.index + ". " + ev.text;
    $("log").appendChild(line);
    $("log").scrollTop = $("log").scrollHeight;
  }
  drawBoard(data);
  $("private").textContent = data.picture.private.join("\n");
  $("public").textContent = data.picture.lines.join("\n");
  $("legend").textContent = data.picture.legend;
  $("choices").innerHTML = "";
  $("moves").innerHTML = "";
  $("hint-text").textContent = "";
  $("hint").hidden = !data.your_turn;
  if (data.over) {
    $("status").textContent = "Game over";
    $("result").textContent = "Result: " + data.result;
    $("download").href = "/api/sessions/" + data.id + "/record";
    $("download").hidden = false;
    document.body.dataset.over = "1";
    return;
  }
  document.body.dataset.over = "";
  if (data.your_turn) {
    $("status").textContent = "Your move, player_" + data.seat + " (" + data.phase + ")";
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
    $("status").textContent = "player_" + data.to_act + " (" + data.seats[data.to_act] + ") is thinking...";
    document.body.dataset.turn = "";
  }
}

function drawBoard(data) {
  const pic = data.picture;
  const size = pic.cols > 20 ? 18 : pic.cols > 10 ? 32 : pic.cols > 6 ? 44 : 64;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", pic.cols * size + 2);
  svg.setAttribute("height", pic.rows * size + 2);
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
        t.setAttribute("font-size", Math.max(8, size * 0.28)); t.setAttribute("pointer-events", "none");
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
  const { ok, data } = await api("GET", "/api/sessions/" + state.id + "/hint");
  $("hint-text").textContent = ok ? data.agent + " would play: " + data.name : data.error;
}

async function play(body) {
  if (!state || state.over) return;
  say("");
  $("choices").innerHTML = "";
  const { ok, status, data } = await api("POST", "/api/sessions/" + state.id + "/move", body);
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

let looping = false;
async function loop() {
  if (looping) return;
  looping = true;
  try {
    while (state && !state.over && !state.your_turn) {
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
      const { ok, data } = await api("POST", "/api/sessions/" + state.id + "/advance");
      if (!ok) { say(data.error); break; }
      show(data);
    }
  } finally {
    looping = false;
  }
}

init();
