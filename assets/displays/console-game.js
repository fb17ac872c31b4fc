// boardcast display pages: the console's game view. A board chosen in the
// hall opens here: its live position on chessground with the last move,
// the players, the clock and the moves; and the operator's corrections —
// the result with its reason, take back, new game, set position, the last
// promotion's piece, and a move entered by dragging it on the board. The
// squares a piece may go to come from the daemon (/api/legal, shakmaty's
// rules): this page never decides what is legal. Every change asks for a
// confirmation on the page and shows the daemon's answer.
// GPL-3.0-or-later.
import { Chessground } from '/vendor/chessground.min.js';

const B = Boardcast;
const $ = (id) => document.getElementById(id);
// The console's shared part (console.js): who is logged in, and the
// function that sends a command and returns the daemon's answer.
const ready = () => window.BoardcastConsole;
const states = new Map(); // board -> latest live state
const pgns = new Map(); // board -> {key, list, chess960}
const clocks = new Map(); // board -> latest clock reading
let board = null; // the board whose game is shown
let legal = null; // {fen, san: {uci: san}} of the position shown
// Made movable from the start: chessground listens to the mouse (and to
// scrolling, which moves its squares) only on a board made so.
const cg = Chessground($('game-board'), { ...B.boardView(null), viewOnly: false, movable: { free: false, color: undefined } });
window.addEventListener('resize', () => cg.redrawAll());

// The shown board's PGN and clock, subscribed to while it is shown (its
// topics from its state's: the round in them changes with the round).
const prefixes = new Map(); // board -> `<root>/v1/live/<event>/<round>/<board>`
let followed = null;
function follow() {
  const client = ready()?.client;
  const prefix = (board && prefixes.get(board)) || null;
  if (!client || prefix === followed) return;
  if (followed) client.unsubscribe([`${followed}/pgn`, `${followed}/clock`]);
  followed = prefix;
  if (prefix) client.subscribe([`${prefix}/pgn`, `${prefix}/clock`], { qos: 0 });
}

// Opens `name`'s game (from the hall: a click on its row).
function open(name) {
  board = name;
  legal = null;
  $('game').hidden = false;
  $('game').dataset.board = name;
  $('game-answer').textContent = '';
  $('game-answer').removeAttribute('data-status');
  ask(null);
  follow();
  render();
  cg.redrawAll();
  $('game').scrollIntoView({ block: 'start' });
}
$('game-close').addEventListener('click', () => {
  board = null;
  follow();
  $('game').hidden = true;
});
$('hall-boards').addEventListener('click', (e) => {
  const row = e.target.closest('tr[data-board]');
  if (row && !e.target.closest('button, a')) open(row.dataset.board);
});

const mayChange = () => !!ready()?.who.may_change;
const inProgress = (state) => !!state?.fen && (state.result ?? '*') === '*';

function render() {
  if (!board) return;
  const state = states.get(board);
  $('game-title').textContent = `Board ${board}`;
  const last = state?.last_move;
  cg.set({ ...B.boardView(state?.fen, { uci: last?.uci, san: last?.san }), viewOnly: false, movable: movable(state) });
  for (const box of document.querySelectorAll('#game-players .player')) {
    const color = box.dataset.color;
    box.querySelector('.who').innerHTML = B.playerHtml(state?.players?.[color] ?? { name: state?.[color] }, color === 'white' ? 'White' : 'Black');
  }
  tick();
  // The moves: the PGN's, with the state's last move (the freshest) in
  // its place; plies not yet completed are provisional (article 6.12).
  const moves = $('game-moves');
  moves.textContent = '';
  const pgn = pgns.get(board);
  const current = state && pgn?.key === `${state.session}|${state.game}` ? pgn : null;
  const list = current ? current.list.slice(0, state.ply) : [];
  if (last && last.ply === state.ply) list[state.ply - 1] = last.san;
  for (let i = 0; i < (state?.ply ?? 0); i++) {
    const li = document.createElement('li');
    li.dataset.ply = i + 1;
    if (i + 1 > state.completed_plies) li.classList.add('provisional');
    const [number, white] = moveNumber(current?.start, i + 1);
    li.textContent = `${white ? `${number}. ` : i === 0 ? `${number}… ` : ''}${list[i] || '…'}`;
    moves.appendChild(li);
  }
  moves.scrollTop = moves.scrollHeight;
  const status = !state ? 'no game published for this board yet'
    : [state.connection === 'disconnected' ? 'board disconnected' : '', (state.status || '').replace(/_/g, ' '),
      state.result && state.result !== '*' ? `result ${B.resultText(state.result)}${state.termination ? ` (${state.termination})` : ''}` : 'game in progress',
    ].filter(Boolean).join(' · ');
  $('game-status').textContent = status;
  $('game-status').dataset.status = state?.status ?? '';
  $('game-hint').textContent = !mayChange() ? `a ${ready()?.who.role ?? ''} account sees the game but may not change it`
    : inProgress(state) ? 'To enter a move the board could not show, drag it on the board.' : '';
  for (const button of document.querySelectorAll('#game-actions button')) button.disabled = !mayChange() || !state;
  // A promotion to correct only where the game has one.
  $('game-promote').disabled = !mayChange() || !list.some((san) => san && san.includes('='));
  $('game-promote').title = $('game-promote').disabled ? 'the game has no promotion' : 'the last promotion made this piece, not a queen';
  if (state?.fen && legal?.fen !== state.fen && mayChange() && inProgress(state)) loadLegal(state.fen);
}

// The move number of the game's `ply` (from 1), and whether White made
// it: counted from the game's starting FEN (a set position's PGN `FEN`
// tag), which need not be move 1 with White to move.
function moveNumber(start, ply) {
  const [, turn, , , , fullmove] = (start || '').split(' ');
  const half = ply - 1 + (turn === 'b' ? 1 : 0);
  return [(Number(fullmove) || 1) + Math.floor(half / 2), half % 2 === 0];
}

// What chessground may let the operator drag: the legal moves of the
// position shown, once the daemon has said what they are.
function movable(state) {
  const on = mayChange() && inProgress(state) && legal?.fen === state.fen;
  // Whether a move may be dragged now (for a test to wait on).
  $('game').dataset.movable = on ? 'yes' : 'no';
  return {
    free: false,
    color: on ? (state.fen.split(' ')[1] === 'b' ? 'black' : 'white') : undefined,
    dests: on ? new Map(Object.entries(legal.dests)) : new Map(),
    showDests: true,
    events: { after: dropped },
  };
}

async function loadLegal(fen) {
  const pgn = pgns.get(board);
  const query = `fen=${encodeURIComponent(fen)}${pgn?.chess960 ? '&chess960=1' : ''}`;
  legal = { fen, dests: {}, san: {} };
  try {
    const response = await fetch(`/api/legal?${query}`, { credentials: 'same-origin', cache: 'no-store' });
    const answer = await response.json();
    if (!response.ok) {
      say('refused', answer.error || response.statusText);
      return;
    }
    if (legal.fen === fen) legal = { fen, dests: answer.dests, san: answer.san };
  } catch {
    say('no_answer', 'the daemon cannot be reached for the legal moves');
    return;
  }
  const state = states.get(board);
  if (state?.fen === fen) cg.set({ movable: movable(state) });
}

// A move dragged from `from` to `to`: its SAN from the daemon's list (a
// pawn reaching the last rank asks for its piece first), then confirmed.
async function dropped(from, to) {
  const state = states.get(board);
  let key = `${from}${to}`;
  if (!legal.san[key] && legal.san[`${key}q`]) {
    const piece = await promotion();
    if (!piece) return render();
    key += piece;
  }
  const san = legal.san[key];
  if (!san) return render();
  // Numbered as the position says (a set position need not start at 1).
  const [, turn, , , , fullmove] = state.fen.split(' ');
  const number = `${fullmove || Math.ceil((state.ply + 1) / 2)}${turn === 'b' ? '…' : '.'}`;
  await change(`Enter ${number} ${san} on board ${board} (played, though the board could not show it)?`,
    { command: 'moves', san: [san] });
}

// Which piece a pawn becomes: the operator's choice, or '' to cancel.
function promotion() {
  const box = $('game-promotion');
  box.hidden = false;
  return new Promise((resolve) => {
    box.onclick = (e) => {
      const button = e.target.closest('button');
      if (!button) return;
      box.hidden = true;
      resolve(button.dataset.piece);
    };
  });
}

// Asks `question` on the page (an open question is answered No first).
let pending = null;
function ask(question) {
  if (pending) pending(false);
  pending = null;
  const box = $('game-confirm');
  box.hidden = !question;
  if (!question) return Promise.resolve(false);
  box.querySelector('.question').textContent = question;
  return new Promise((resolve) => {
    pending = resolve;
    box.querySelector('.yes').onclick = () => { pending = null; box.hidden = true; resolve(true); };
    box.querySelector('.no').onclick = () => { pending = null; box.hidden = true; resolve(false); };
  });
}

function say(status, words) {
  const p = $('game-answer');
  p.dataset.status = status;
  const said = { done: 'Done', refused: 'Refused', no_answer: 'No answer', sent: 'Sent' }[status] ?? status;
  p.textContent = `${said}: ${words}`;
}

// Sends a change to the shown board once the operator confirms it, and
// shows the daemon's answer; the board is drawn again from the feed.
async function change(question, request) {
  const name = board;
  if (!(await ask(question))) return render();
  say('sent', `${request.command} sent to board ${name}…`);
  const { status, reason } = await ready().command({ board: name, ...request });
  if (board === name) {
    say(status, reason || request.command);
    render();
  }
}

for (const button of document.querySelectorAll('#game-actions .result')) {
  button.addEventListener('click', () => {
    const reason = $('game-reason').value;
    change(`Set the result of board ${board} to ${button.textContent} (${$('game-reason').selectedOptions[0].textContent})?`,
      { command: 'set_result', result: button.dataset.result, reason });
  });
}
$('game-take-back').addEventListener('click', () => {
  const last = states.get(board)?.last_move;
  const what = last ? `${moveNumber(pgns.get(board)?.start, last.ply)[0]}${last.color === 'white' ? '.' : '…'} ${last.san}` : 'the last move';
  change(`Take back ${what} on board ${board}? Put the position back on the board as well.`, { command: 'take_back' });
});
$('game-new').addEventListener('click', () =>
  change(`End the game on board ${board} as it is and wait for the next game's start position?`, { command: 'new_game' }));
$('game-promote').addEventListener('click', () =>
  change(`The last promotion on board ${board} made a ${$('game-piece').value}, not the piece recorded?`,
    { command: 'promote', piece: $('game-piece').value }));
$('game-set-position').addEventListener('click', async () => {
  const fen = $('game-fen').value.trim();
  // Checked by the daemon (shakmaty) before anything is asked or sent.
  const response = await fetch(`/api/legal?fen=${encodeURIComponent(fen)}`, { credentials: 'same-origin', cache: 'no-store' })
    .catch(() => null);
  const answer = response ? await response.json().catch(() => ({})) : { error: 'the daemon cannot be reached' };
  if (!response?.ok) return say('refused', answer.error || 'not a position');
  change(`Board ${board}'s game goes on from ${fen} (a new game record; the game before is kept)?`,
    { command: 'set_position', fen });
});

function tick() {
  if (!board) return;
  const clock = clocks.get(board);
  const state = states.get(board);
  for (const box of document.querySelectorAll('#game-players .player')) {
    const color = box.dataset.color;
    const el = box.querySelector('.clock');
    el.textContent = clock ? B.clockText(B.left(clock, color)) : '';
    el.title = clock ? '' : 'no clock known for this board';
    el.classList.toggle('running', !!clock && clock.running === color && (state?.result ?? '*') === '*');
  }
}
setInterval(tick, 200);

window.addEventListener('boardcast:message', ({ detail: { topic, message: m } }) => {
  if (!topic.includes('/v1/live/') || !m || !m.board) return;
  if (topic.endsWith('/state')) {
    if (!B.newer(m, states.get(m.board))) return;
    states.set(m.board, m);
    prefixes.set(m.board, topic.slice(0, -'/state'.length));
    if (m.board === board) follow();
    const clock = clocks.get(m.board);
    if (m.clock && (!clock || m.boot !== clock.boot || m.clock.read_at_ms >= clock.read_at_ms)) clocks.set(m.board, { ...m.clock, boot: m.boot });
  } else if (topic.endsWith('/clock')) {
    const clock = clocks.get(m.board);
    if (!m.clock || (clock && m.boot === clock.boot && m.clock.read_at_ms < clock.read_at_ms)) return;
    clocks.set(m.board, { ...m.clock, boot: m.boot });
  } else if (topic.endsWith('/pgn')) {
    const start = /^\[FEN "([^"]*)"\]/m.exec(m.pgn || '')?.[1];
    pgns.set(m.board, { key: `${m.session}|${m.game}`, list: B.pgnMoves(m.pgn), start, chess960: /\[Variant "Chess960"\]/i.test(m.pgn || '') });
  } else return;
  if (m.board === board) render();
});
