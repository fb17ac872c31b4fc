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
