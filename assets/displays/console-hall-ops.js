// boardcast display pages: a hall row's actions beyond Identify and Flip
// (docs/operator.md, "The hall view"): Un-assign a board assigned in the
// console (POST /api/unassign, operator accounts only, after a
// confirmation: the bridge that reads it stops, keeps its games, and
// offers it again as not assigned; every console's row goes when the
// bridge clears the board's retained status), and, for a board this
// daemon reads, its capture file (a download) and its latest log lines
// (GET /api/board/capture, /api/board/log). console.js calls `actions` for
// each row it draws. GPL-3.0-or-later.
'use strict';
window.ConsoleHallOps = (() => {
  const $ = (id) => document.getElementById(id);
  let ctx = null; // {who, bridge, change, command}
  let shown = null; // the board whose log lines are shown

  // An answer under Answers, as console.js shows a command's.
  function reply(board, what, status, reason) {
    const li = document.createElement('li');
    li.dataset.status = status;
    li.classList.toggle('refused', status !== 'done');
    const said = { done: '', refused: 'refused: ', no_answer: 'no answer: ' }[status] ?? '';
    li.textContent = `${board}: ${what}: ${said}${reason || status}`;
    $('replies').prepend(li);
  }

  async function unassign(s, from) {
    const label = s.label || s.board;
    if (!confirm(`Un-assign board ${label} (${s.board})? It is no longer read; its games and captures are kept, and it is offered again as not assigned.`)) return;
    const answer = await ctx.change('/api/unassign', { board: s.board, bridge: from });
    if (!answer) return;
    reply(s.board, 'unassign', answer.status, answer.reason);
  }

  // The board's latest log lines, under the hall.
  async function log(board) {
    const panel = $('board-log');
    shown = board;
    panel.hidden = false;
    panel.dataset.board = board;
    panel.querySelector('.title').textContent = `Log of ${board}`;
    const pre = panel.querySelector('pre');
    pre.textContent = 'reading…';
    try {
      const response = await fetch(`/api/board/log?board=${encodeURIComponent(board)}`, { credentials: 'same-origin', cache: 'no-store' });
      const answer = await response.json();
      if (shown !== board) return;
      pre.textContent = response.ok
        ? (answer.lines.length ? answer.lines.join('\n') : 'no line about this board since the daemon started')
        : (answer.error || response.statusText);
      panel.dataset.lines = response.ok ? answer.lines.length : '';
    } catch {
      pre.textContent = 'the daemon cannot be reached';
    }
  }

  // Un-assign, for a board assigned in the console.
  function unassignButton(s, from, gone, operator) {
    const un = document.createElement('button');
    un.type = 'button';
    un.className = 'unassign';
    un.textContent = 'Un-assign';
    un.disabled = !operator || !!gone;
    un.title = operator
      ? 'a board assigned in the console: stop reading it (its games are kept) and offer it again'
      : `a ${ctx.who.role} account may not un-assign boards (an operator account may)`;
    un.addEventListener('click', () => unassign(s, from));
    return un;
  }

  return {
    // After the log-in.
    start(session, bridge, change, command) {
      ctx = { who: session, bridge, change, command };
      const panel = $('board-log');
      panel.querySelector('.close').addEventListener('click', () => { panel.hidden = true; shown = null; });
      panel.querySelector('.again').addEventListener('click', () => { if (shown) log(shown); });
    },
    // The actions of a hall row for the board of status `s`, read by
    // bridge `from` (gone: its bridge is offline).
    actions(actionsTd, s, from, gone) {
      if (!ctx) return;
      const operator = ctx.who.role === 'operator';
      // Only a board assigned in the console can be un-assigned there; a
      // board of the configuration file has its [[boards]] table.
      if (s.assigned) actionsTd.appendChild(unassignButton(s, from, gone, operator));
      if (s.family === 'certabo') {
        // Learns the set's tags from the board's next reports (the signed
        // command `calibrate`); the answer shows under Answers.
        const cal = document.createElement('button');
        cal.type = 'button';
        cal.className = 'calibrate';
        cal.textContent = 'Calibrate';
        cal.disabled = !ctx.who.may_change || !!gone || s.connection !== 'connected';
        cal.title = cal.disabled ? 'needs an account that may send commands, and the board connected'
          : 'learn which RFID tag is which piece (the pieces must stand in the start position)';
        cal.addEventListener('click', () => {
          if (!confirm(`Calibrate board ${s.label || s.board}? The pieces must stand in the start position (ranks 3 to 6 empty; spare queens may stand on d6 and d3).`)) return;
          ctx.command({ board: s.board, command: 'calibrate' }, from);
        });
        actionsTd.appendChild(cal);
      }
      // The capture and the lines are the daemon's own boards'.
      if (from !== ctx.bridge) return;
      const files = document.createElement('span');
      files.className = 'files';
      const capture = document.createElement('a');
      capture.className = 'capture';
      capture.href = `/api/board/capture?board=${encodeURIComponent(s.board)}`;
      capture.download = '';
      capture.textContent = 'Capture';
      capture.title = 'download the capture being written (every byte the board sent, every command)';
      const lines = document.createElement('button');
      lines.type = 'button';
      lines.className = 'log';
      lines.textContent = 'Log';
      lines.title = 'the daemon\'s latest log lines about this board';
      lines.addEventListener('click', () => log(s.board));
      files.append(capture, ' ', lines);
      actionsTd.appendChild(files);
    },
  };
})();
