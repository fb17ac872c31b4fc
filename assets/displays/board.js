// boardcast display pages: the board page's script — one board drawn with
// chessground, its players' cards with flags and clocks, the moves with
// each move's clock, and, on the public tree only, an engine's evaluation
// and best move once the daemon publishes them after the delay.
// GPL-3.0-or-later.
import { Chessground } from '/vendor/chessground.min.js';

const B = Boardcast;
const p = B.params;
const tree = p.get('tree') === 'live' ? 'live' : 'public';
const lang = p.get('lang') || 'en';
const flip = p.get('flip') === '1';
const level = (name) => p.get(name) || '+';
const $ = (id) => document.getElementById(id);
const cfg = await B.config();
// The board shown: the one asked for, or the first one heard of.
let base = null;
let state = null;
let clock = null;
// The engine's latest analysis of each board heard of (a wildcard page
// may hear one before it settles on its board).
const analyses = new Map();
let sans = { key: null, list: [] };
const cg = Chessground($('board'), B.boardView(null, { flip }));
// Chessground places pieces in pixels: a new size needs a new drawing.
window.addEventListener('resize', () => cg.redrawAll());
const [whiteBox, blackBox] = flip ? [$('top'), $('bottom')] : [$('bottom'), $('top')];
whiteBox.dataset.color = 'white';
blackBox.dataset.color = 'black';
$('page').classList.toggle('flipped', flip);

function render() {
  if (!state) return;
  const last = state.last_move;
  cg.set(B.boardView(state.fen, { uci: last?.uci, san: last?.san, flip }));
  for (const [box, color] of [[whiteBox, 'white'], [blackBox, 'black']]) {
    box.querySelector('.who').innerHTML = B.playerHtml(state.players?.[color] ?? { name: state[color] }, color === 'white' ? 'White' : 'Black');
    // The time the side's latest move took.
    const spent = state.spent_ms || [];
    let index = state.ply - 1;
    if (index >= 0 && (index % 2 === 0) !== (color === (firstMover() ?? 'white'))) index -= 1;
    box.querySelector('.spent').textContent = index >= 0 ? B.spentText(spent[index]) : '';
  }
  // The moves: the PGN's, with the state's last move (the freshest) in
  // its place; plies after the completed ones are provisional (6.12).
  const list = sans.key === `${state.session}|${state.game}` ? sans.list.slice(0, state.ply) : [];
  if (last && last.ply === state.ply) list[state.ply - 1] = last.san;
  const moves = $('moves');
  moves.textContent = '';
  const clocks = state.clocks_ms || [];
  for (let i = 0; i < state.ply; i++) {
    const li = document.createElement('li');
    li.dataset.ply = i + 1;
    if (i + 1 > state.completed_plies) {
      li.classList.add('provisional');
      li.title = 'made, not yet completed: the clock has not been pressed (article 6.12)';
    }
    const number = i % 2 === 0 ? `${i / 2 + 1}.` : '';
    const clk = clocks[i] !== null && clocks[i] !== undefined ? B.clockText(clocks[i]) : '';
    const spent = B.spentText((state.spent_ms || [])[i]);
    li.innerHTML = `${number ? `<span class="n">${number}</span>` : ''}<span class="san">${B.esc(B.translate(list[i] || '…', lang))}</span>`
      + `<span class="clk"${spent ? ` title="took ${spent}"` : ''}>${clk}</span>`;
    moves.appendChild(li);
  }
  // Only the latest moves fit on a projector: drop the oldest whole moves.
  while (moves.scrollHeight > moves.clientHeight + 1 && moves.children.length > 2) {
    moves.removeChild(moves.firstChild);
    moves.removeChild(moves.firstChild);
  }
  $('result').textContent = B.resultText(state.result);
  $('termination').textContent = state.result !== '*' && state.termination ? state.termination : '';
  const sync = $('sync');
  sync.dataset.status = state.status;
  sync.dataset.connection = state.connection;
  sync.textContent = state.connection === 'disconnected' ? 'board disconnected'
    : state.status === 'out_of_sync' ? 'board being checked' : '';
  renderAnalysis();
  tick();
}

// Who made the first ply (Black in a game set up with Black to move).
function firstMover() {
  const last = state?.last_move;
  if (!last) return null;
  const lastIsWhite = last.color === 'white';
  return (last.ply % 2 === 1) === lastIsWhite ? 'white' : 'black';
}

// The evaluation bar, the best line and the arrow: only for the position
// shown, hidden when there is none.
function renderAnalysis() {
  const analysis = analyses.get(base);
  const shown = !!state && B.analysisOf(analysis, state.fen);
  $('evalbar').hidden = !shown;
  $('analysis').hidden = !shown;
  cg.setAutoShapes(shown ? B.bestArrow(analysis) : []);
  if (!shown) return;
  const share = B.whiteShare(analysis.score);
  $('evalbar').querySelector('.white').style.height = `${share}%`;
  $('evalbar').dataset.score = B.scoreText(analysis.score);
  $('evalbar').querySelector('.score').textContent = B.scoreText(analysis.score);
  $('analysis').querySelector('.score').textContent = B.scoreText(analysis.score);
  $('analysis').querySelector('.line').textContent = B.lineText(analysis.fen, analysis.pv, lang);
  $('analysis').querySelector('.engine').textContent = [analysis.engine, analysis.depth ? `depth ${analysis.depth}` : ''].filter(Boolean).join(', ');
}

function tick() {
  for (const [box, color] of [[whiteBox, 'white'], [blackBox, 'black']]) {
    const el = box.querySelector('.clock');
    el.textContent = clock ? B.clockText(B.left(clock, color)) : '';
    el.classList.toggle('running', !!clock && clock.running === color && (state?.result ?? '*') === '*');
  }
}
setInterval(tick, 100);

const topic = (t) => t.split('/').slice(-4, -1).join('/');
const root = `${cfg.root}/v1/${tree}/${level('event')}/${level('round')}/${level('board')}`;
const topics = [`${root}/state`, `${root}/pgn`, `${root}/clock`];
// The engine's analysis is published on the public tree only, after the
// delay: a page of the live tree never asks for it.
if (tree === 'public') topics.push(`${root}/analysis`);
B.connect(cfg, tree, topics, (t, m) => {
  // A wildcard page settles on the first board it hears of.
  if (t.endsWith('/analysis')) {
    analyses.set(topic(t), m);
    renderAnalysis();
    return;
  }
  base = base || topic(t);
  if (topic(t) !== base) return;
  if (t.endsWith('/state')) {
    if (!B.newer(m, state)) return;
    state = m;
    if (m.clock && (!clock || m.boot !== clock.boot || m.clock.read_at_ms >= clock.read_at_ms)) clock = { ...m.clock, boot: m.boot };
  } else if (t.endsWith('/clock')) {
    if (!m.clock || (clock && m.boot === clock.boot && m.clock.read_at_ms < clock.read_at_ms)) return;
    clock = { ...m.clock, boot: m.boot };
  } else if (t.endsWith('/pgn')) {
    sans = { key: `${m.session}|${m.game}`, list: B.pgnMoves(m.pgn) };
  }
  render();
}, (link) => {
  $('link').dataset.state = link;
  $('link').textContent = link === 'connected' ? '' : 'no connection to the feed: retrying';
});
