// boardcast display pages: the console's alerts view, on top of the list
// console.js keeps (one item per alert, newest first, with Acknowledge):
// each alert's severity shown, a filter by kind beside the board filter,
// the evidence stepped through record by record on a small chessground
// board, and a notice for each new alert — a banner, and a short tone
// made with the Web Audio API (no sound file), which a mute switch
// remembered in localStorage silences.
// GPL-3.0-or-later.
import { Chessground } from '/vendor/chessground.min.js';

const B = Boardcast;
const $ = (id) => document.getElementById(id);
const MUTE = 'boardcast-alert-mute';
const states = new Map(); // board -> latest live state (its position)
const evidence = new Map(); // `${board}|${game}|${seq}` -> {start, records, alert}
const key = (board, game, seq) => `${board}|${game}|${seq}`;

// The kind filter: every kind heard of so far, hidden by a class of its
// own so that it and the board filter (console.js's `hidden`) combine.
function filterKinds() {
  const kind = $('kind-filter').value;
  for (const li of document.querySelectorAll('#alerts .alert')) li.classList.toggle('kind-hidden', !!kind && li.dataset.kind !== kind);
}
function learnKind(kind) {
  const select = $('kind-filter');
  if ([...select.options].some((o) => o.value === kind)) return;
  select.add(new Option(kind.replace(/_/g, ' '), kind));
}
$('kind-filter').addEventListener('change', filterKinds);

// The tone: a short two-note chime. Browsers let a page make sound only
// after the user has touched it, so the audio context is made (or woken)
// at the first touch; a tone asked for before then is recorded as
// started but may be silent. `data-tones` and `data-audio` on the banner
// say what the page did, for a test to check.
const mute = $('alert-mute');
mute.checked = localStorage.getItem(MUTE) === '1';
mute.addEventListener('change', () => localStorage.setItem(MUTE, mute.checked ? '1' : '0'));
let audio = null;
function context() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!audio && Context) audio = new Context();
  if (audio?.state === 'suspended') audio.resume().catch(() => {});
  return audio;
}
for (const event of ['pointerdown', 'keydown']) window.addEventListener(event, context, { once: true, capture: true });
function tone() {
  const banner = $('alert-banner');
  if (mute.checked) {
    banner.dataset.muted = String(Number(banner.dataset.muted || 0) + 1);
    return;
  }
  const ctx = context();
  if (!ctx) return;
  const gain = ctx.createGain();
  gain.connect(ctx.destination);
  const t = ctx.currentTime;
  gain.gain.setValueAtTime(0.0001, t);
  gain.gain.exponentialRampToValueAtTime(0.3, t + 0.02);
  gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.45);
  for (const [frequency, at] of [[880, 0], [660, 0.18]]) {
    const osc = ctx.createOscillator();
    osc.type = 'sine';
    osc.frequency.value = frequency;
    osc.connect(gain);
    osc.start(t + at);
    osc.stop(t + at + 0.25);
  }
  banner.dataset.tones = String(Number(banner.dataset.tones || 0) + 1);
  banner.dataset.audio = ctx.state;
}

function notify(m) {
  const banner = $('alert-banner');
  banner.hidden = false;
  banner.dataset.alert = key(m.board, m.game, m.seq);
  banner.dataset.board = m.board;
  banner.dataset.kind = m.kind;
  banner.dataset.severity = m.severity || '';
  banner.querySelector('.text').textContent = `New alert on board ${m.board}: ${m.kind.replace(/_/g, ' ')}`
    + `${m.article ? ` (article ${m.article})` : ''} — ${m.message}`;
  tone();
}
$('alert-banner').querySelector('.dismiss').addEventListener('click', () => { $('alert-banner').hidden = true; });

// The evidence, stepped through: the board's position when the alert came,
// then each sensor observation in turn (a piece put down, a square left
// empty), its square marked.
const cg = Chessground($('evidence-board'), { ...B.boardView(null), coordinates: true });
let shown = null; // {start, records, alert, step}
function placementFen(placement) {
  let fen = '';
  for (let rank = 8; rank >= 1; rank--) {
    let empty = 0;
    for (const file of 'abcdefgh') {
      const piece = placement[`${file}${rank}`];
      if (piece) {
        fen += `${empty || ''}${piece}`;
        empty = 0;
      } else empty += 1;
    }
    fen += `${empty || ''}${rank > 1 ? '/' : ''}`;
  }
  return fen;
}
// `N` → 'white knight', `p` → 'black pawn'.
function pieceName(letter) {
  const role = { k: 'king', q: 'queen', r: 'rook', b: 'bishop', n: 'knight', p: 'pawn' }[letter.toLowerCase()] ?? letter;
  return `${letter === letter.toUpperCase() ? 'white' : 'black'} ${role}`;
}
function drawStep() {
  const { start, records, alert, step } = shown;
  const placement = { ...start };
  for (const r of records.slice(0, step)) {
    if (r.piece) placement[r.square] = r.piece; else delete placement[r.square];
  }
  const current = step > 0 ? records[step - 1] : null;
  cg.set({ fen: placementFen(placement), lastMove: current ? [current.square] : undefined, viewOnly: true });
  cg.setAutoShapes((alert.squares || []).map((orig) => ({ orig, brush: 'red' })));
  const box = $('evidence');
  box.dataset.step = step;
  box.querySelector('.step').textContent = `${step} / ${records.length}`;
  const seconds = (us) => `${(us / 1e6).toFixed(1)} s`;
  box.querySelector('.what').textContent = current
    ? `${seconds(current.t_us)}: ${current.square} ${current.piece ? `gets a ${pieceName(current.piece)}` : 'is left empty'}`
    : `Board ${alert.board}, ${alert.kind.replace(/_/g, ' ')}: the position when the alert came`;
  box.querySelector('.prev').disabled = step === 0;
  box.querySelector('.next').disabled = step >= records.length;
}
function openEvidence(id) {
  const found = evidence.get(id);
  if (!found) return;
  shown = { ...found, step: 0 };
  $('evidence').hidden = false;
  $('evidence').dataset.alert = id;
  cg.redrawAll();
  drawStep();
}
$('evidence').querySelector('.prev').addEventListener('click', () => { shown.step = Math.max(0, shown.step - 1); drawStep(); });
$('evidence').querySelector('.next').addEventListener('click', () => { shown.step = Math.min(shown.records.length, shown.step + 1); drawStep(); });
$('evidence').querySelector('.close').addEventListener('click', () => { $('evidence').hidden = true; shown = null; });

// An alert's item in console.js's list, once it is there: its severity,
// and a button that shows it on the evidence board.
function enhance(m) {
  const id = key(m.board, m.game, m.seq);
  const li = document.querySelector(`#alerts .alert[data-board="${CSS.escape(m.board)}"][data-game="${CSS.escape(String(m.game))}"][data-seq="${CSS.escape(String(m.seq))}"]`);
  if (!li || li.querySelector('.severity')) return;
  const severity = document.createElement('span');
  severity.className = 'severity';
  severity.textContent = m.severity || 'alert';
  // Beside the time, before the kind (whose words stay as published).
  li.querySelector('.kind')?.before(' ', severity);
  // Without sensor observations (an alert about the position as a whole)
  // the board still shows where it happened, its squares marked.
  const records = (m.evidence || []).filter((e) => e.square && 'piece' in e);
  const step = document.createElement('button');
  step.type = 'button';
  step.className = 'step-evidence';
  step.textContent = records.length ? 'Step through the evidence' : 'Show on the board';
  step.addEventListener('click', () => openEvidence(id));
  li.querySelector('.replay')?.after(' ', step);
  filterKinds();
}

window.addEventListener('boardcast:message', ({ detail: { topic, message: m } }) => {
  if (!topic.includes('/v1/live/') || !m || !m.board) return;
  if (topic.endsWith('/state')) {
    if (B.newer(m, states.get(m.board))) states.set(m.board, m);
  } else if (topic.endsWith('/alerts')) {
    if (m.kind === 'acknowledged') {
      // The alert the banner tells is dealt with: the banner goes.
      const banner = $('alert-banner');
      if (banner.dataset.alert === key(m.board, m.alert_game, m.alert_seq)) banner.hidden = true;
      return;
    }
    const id = key(m.board, m.game, m.seq);
    if (evidence.has(id)) return; // QoS 1 may bring it twice
    evidence.set(id, { start: B.pieces(states.get(m.board)?.fen), records: (m.evidence || []).filter((e) => e.square && 'piece' in e), alert: m });
    learnKind(m.kind);
    enhance(m);
    notify(m);
  }
});
