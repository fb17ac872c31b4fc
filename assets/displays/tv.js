// boardcast display pages: the TV wall's script — the boards of the rounds
// heard of (or of `event` and `round`), `per_page` at a time, the page
// turned every `interval_s` seconds, for a projector nobody touches.
// GPL-3.0-or-later.
import { card, cards, fill, follow, prune } from '/cards.js';

const B = Boardcast;
const p = B.params;
const perPage = Math.max(1, Math.min(64, Number(p.get('per_page')) || 4));
const intervalMs = Math.max(2, Number(p.get('interval_s')) || 20) * 1000;
const cfg = await B.config();
const rounds = new Map();
let page = 0;
const wall = document.getElementById('wall');
// Columns and rows for N boards on a 16:9 screen.
const columns = Math.ceil(Math.sqrt(perPage * 1.6));
wall.style.setProperty('--columns', String(Math.min(columns, perPage)));
wall.style.setProperty('--rows', String(Math.ceil(perPage / Math.min(columns, perPage))));

function boards() {
  const byLabel = (x, y) => `${x.event}/${x.round}`.localeCompare(`${y.event}/${y.round}`)
    || String(x.b.label ?? x.b.board).localeCompare(String(y.b.label ?? y.b.board), undefined, { numeric: true });
  return [...rounds.values()]
    .flatMap((parts) => [...parts.entries()].flatMap(([bridge, s]) => s.boards.map((b) => ({ b, bridge, event: s.event, round: s.round }))))
    .sort(byLabel);
}

function render() {
  const all = boards();
  const pages = Math.max(1, Math.ceil(all.length / perPage));
  page %= pages;
  const shown = all.slice(page * perPage, (page + 1) * perPage);
  const keep = new Set();
  shown.forEach(({ b, bridge, event, round }, i) => {
    const c = card(event, round, b);
    keep.add(c.key);
    if (wall.children[i] !== c.a) wall.insertBefore(c.a, wall.children[i] || null);
    fill(c, b, bridge);
  });
  prune(keep);
  document.body.dataset.page = String(page + 1);
  document.body.dataset.pages = String(pages);
  const places = [...new Set(shown.map(({ event, round }) => `${event} · round ${round}`))];
  document.getElementById('heading').textContent = places.join(', ');
  document.getElementById('page-number').textContent = pages > 1 ? `${page + 1} / ${pages}` : '';
  // A new page's boards take their size now.
  for (const { cg } of cards.values()) cg.redrawAll();
}

setInterval(() => {
  page += 1;
  render();
}, intervalMs);

follow(cfg, rounds, render);
