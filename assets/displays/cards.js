// boardcast display pages: the small boards of the overview and the TV
// wall — a chessground with the players, their clocks, the last move, the
// result and a thin evaluation bar — kept by board, so that a board's
// chessground follows its position instead of being drawn anew.
// GPL-3.0-or-later.
import { Chessground } from '/vendor/chessground.min.js';

const B = Boardcast;
const p = B.params;
const tree = p.get('tree') === 'live' ? 'live' : 'public';
const lang = p.get('lang');
// The cards drawn, by event/round/label.
export const cards = new Map();
// The engine's latest analysis per event/round/label (public tree only).
export const analyses = new Map();
// Bridges whose status says offline: their boards are marked.
export const offline = new Set();
const WHY = 'made, not yet completed: the clock has not been pressed (article 6.12)';

export function card(event, round, b) {
  const key = `${event}/${round}/${b.label ?? b.board}`;
  let shown = cards.get(key);
  if (!shown) {
    const a = document.createElement('a');
    a.className = 'card';
    const query = new URLSearchParams({ event, round, board: b.label ?? b.board });
    if (tree === 'live') query.set('tree', 'live');
    if (lang) query.set('lang', lang);
    a.href = `/board.html?${query}`;
    a.dataset.board = b.label ?? b.board;
    a.innerHTML = `<div class="meta"><b>Board ${B.esc(b.label ?? b.board)}</b><span class="status"></span></div>
      <div class="player" data-color="black"><span class="who"></span><span class="clock" data-color="black"></span></div>
      <div class="cgbox"><div class="eval" hidden><div class="white"></div></div><div class="board"></div></div>
      <div class="player" data-color="white"><span class="who"></span><span class="clock" data-color="white"></span></div>
      <div class="meta"><span class="last"></span><span class="result"></span></div>`;
    const cg = Chessground(a.querySelector('.board'), B.boardView(null, { coordinates: false }));
    shown = { a, cg, key };
    cards.set(key, shown);
  }
  return shown;
}

export function fill(shown, b, bridge) {
  const { a, cg } = shown;
  a.dataset.connection = b.connection;
  a.dataset.status = b.status;
  a.dataset.bridge = bridge;
  const gone = offline.has(bridge);
  if (gone) a.dataset.connection = 'bridge_offline';
  a.querySelector('.status').textContent = gone ? `bridge ${bridge} offline`
    : b.connection === 'disconnected' ? 'disconnected' : b.status === 'out_of_sync' ? 'out of sync' : '';
  for (const color of ['white', 'black']) {
    a.querySelector(`.player[data-color="${color}"] .who`).innerHTML =
      B.playerHtml(b.players?.[color] ?? { name: b[color] }, color === 'white' ? 'White' : 'Black');
  }
  // The last move made but not yet completed (the clock not pressed,
  // article 6.12) is shown provisional, as on the board page.
  const made = b.ply > (b.completed_plies ?? b.ply);
  const last = a.querySelector('.last');
  last.classList.toggle('provisional', made);
  if (made) last.title = WHY; else last.removeAttribute('title');
  last.textContent = b.ply ? `${Math.ceil(b.ply / 2)}${b.ply % 2 ? '.' : '…'} ${B.translate(b.last_san || '', lang)}` : '';
  const result = a.querySelector('.result');
  result.textContent = B.resultText(b.result);
  result.title = b.result && b.result !== '*' && b.termination ? b.termination : '';
  cg.set(B.boardView(b.fen, { san: b.last_san || '', coordinates: false }));
  a._clock = b.clock;
  a._over = b.result && b.result !== '*';
  a._fen = b.fen;
  evaluation(shown);
}

// The thin bar: the engine's evaluation of the position on the card.
export function evaluation({ a, key }) {
  const analysis = analyses.get(key);
  const shown = B.analysisOf(analysis, a._fen);
  const bar = a.querySelector('.eval');
  bar.hidden = !shown;
  if (!shown) return;
  bar.querySelector('.white').style.height = `${B.whiteShare(analysis.score)}%`;
  bar.title = `engine: ${B.scoreText(analysis.score)}`;
  bar.dataset.score = B.scoreText(analysis.score);
}

export function tick() {
  for (const a of document.querySelectorAll('.card')) {
    for (const c of a.querySelectorAll('.clock')) {
      c.textContent = a._clock ? B.clockText(B.left(a._clock, c.dataset.color)) : '';
      c.classList.toggle('running', !!a._clock && a._clock.running === c.dataset.color && !a._over);
    }
  }
}

// Chessground places pieces in pixels: a new size needs a new drawing.
window.addEventListener('resize', () => { for (const { cg } of cards.values()) cg.redrawAll(); });
setInterval(tick, 250);

// Takes off the page every card not in `keep` (keys).
export function prune(keep) {
  for (const [key, shown] of cards) {
    if (!keep.has(key)) {
      shown.cg.destroy();
      shown.a.remove();
      cards.delete(key);
    }
  }
}

// Follows the rounds' summaries (and the bridges' status, and the public
// analyses) into `rounds`: per event/round, the latest summary of each
// bridge (a hall with several bridge computers has a round's boards spread
// over them, each publishing its part on …/summary/<bridge-id>). Calls
// `render()` when what the page shows changed.
export function follow(cfg, rounds, render) {
  const place = `${p.get('event') || '+'}/${p.get('round') || '+'}`;
  const topics = [`${cfg.root}/v1/${tree}/${place}/summary/+`, `${cfg.root}/v1/bridges/+/status`];
  // The engine's analysis is on the public tree only, after the delay.
  if (tree === 'public') topics.push(`${cfg.root}/v1/public/${place}/+/analysis`);
  B.connect(cfg, tree, topics, (t, m) => {
    if (t.endsWith('/analysis')) {
      const key = t.split('/').slice(-4, -1).join('/');
      analyses.set(key, m);
      const shown = cards.get(key);
      if (shown) evaluation(shown);
      return;
    }
    const isStatus = t.includes('/v1/bridges/');
    const bridge = t.split('/').at(isStatus ? -2 : -1);
    if (isStatus) {
      const was = offline.has(bridge);
      if (m.status === 'offline') offline.add(bridge); else offline.delete(bridge);
      if (was !== offline.has(bridge)) render();
      return;
    }
    if (!Array.isArray(m.boards)) return;
    const key = `${m.event}/${m.round}`;
    if (!rounds.has(key)) rounds.set(key, new Map());
    const parts = rounds.get(key);
    const shown = parts.get(bridge);
    // A summary from a restarted daemon (new boot) always wins; within a
    // run, an older one (a late duplicate) is dropped.
    if (shown && shown.boot === m.boot && (m.ts_ms ?? 0) < (shown.ts_ms ?? 0)) return;
    parts.set(bridge, m);
    render();
  }, (link) => {
    const el = document.getElementById('link');
    el.dataset.state = link;
    el.textContent = link === 'connected' ? '' : 'no connection to the feed: retrying';
  });
}
