// boardcast display pages: the overview's script — every board of each
// round small (chessground), with players, clocks, last move and result, a
// thin evaluation bar per board on the public tree, and the round's
// results table. GPL-3.0-or-later.
import { card, cards, fill, follow, prune } from '/cards.js';

const B = Boardcast;
const cfg = await B.config();
// Per round (event/round), the latest summary of each bridge: a hall
// with several bridge computers has a round's boards spread over them,
// each publishing its part on …/summary/<bridge-id>.
const rounds = new Map();

// The round's results: one row per board, the players and the result.
function table(boards) {
  const rows = boards.map(({ b }) => {
    const side = (color) => B.playerHtml(b.players?.[color] ?? { name: b[color] }, color === 'white' ? 'White' : 'Black');
    return `<tr data-board="${B.esc(b.label ?? b.board)}"><td class="num">${B.esc(b.label ?? b.board)}</td>
      <td><span class="who">${side('white')}</span></td>
      <td class="res">${B.esc(B.resultText(b.result) || (b.ply ? '*' : ''))}</td>
      <td><span class="who">${side('black')}</span></td></tr>`;
  });
  return `<table class="results"><thead><tr><th>Board</th><th>White</th><th>Result</th><th>Black</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function render() {
  const el = document.getElementById('rounds');
  const byLabel = (x, y) => String(x.b.label ?? x.b.board).localeCompare(String(y.b.label ?? y.b.board), undefined, { numeric: true });
  const keep = new Set();
  for (const [key, parts] of [...rounds.entries()].sort()) {
    const first = [...parts.values()][0];
    let section = el.querySelector(`section[data-round="${CSS.escape(key)}"]`);
    if (!section) {
      section = document.createElement('section');
      section.className = 'round';
      section.dataset.round = key;
      section.innerHTML = `<h2>${B.esc(first.event)} · round ${B.esc(first.round)}</h2><div class="cards"></div><h3>Results</h3><div class="table"></div>`;
      el.appendChild(section);
    }
    const boards = [...parts.entries()].flatMap(([bridge, s]) => s.boards.map((b) => ({ b, bridge }))).sort(byLabel);
    const list = section.querySelector('.cards');
    boards.forEach(({ b, bridge }, i) => {
      const shown = card(first.event, first.round, b);
      keep.add(shown.key);
      if (list.children[i] !== shown.a) list.insertBefore(shown.a, list.children[i] || null);
      fill(shown, b, bridge);
    });
    section.querySelector('.table').innerHTML = table(boards);
  }
  // A board gone from its round (moved to another) leaves the page.
  prune(keep);
}

follow(cfg, rounds, render);
