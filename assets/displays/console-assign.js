// boardcast display pages: the console hall's boards that are plugged in
// but not assigned (docs/operator.md, "Assigning a board"). Each bridge
// publishes the boards it found on ports no board of it reads, retained on
// <root>/v1/live/unassigned/<bridge> (the live tree: operators and
// arbiters, never the public); console.js hands those messages here. They
// are rows of the hall's table (its second body) with an Assign button,
// which opens a form: the board's number or label, its name, and the
// players, or one of the pairings uploaded in the tournament panel. The bridge that found it checks and keeps the assignment (POST
// /api/assign, passed on to another bridge of the hall by the daemon;
// operator accounts only: a live account's button is disabled, and the
// daemon refuses it anyway). GPL-3.0-or-later.
'use strict';
window.ConsoleAssign = (() => {
  const B = Boardcast; // displays.js's (a global binding, not a window property)
  const found = new Map(); // bridge -> its latest list
  const assigned = new Set(); // `${bridge}\n${port}` assigned from this page, until the bridge's list drops it
  let who = null;
  let change = null; // console.js's: posts, and gives the daemon's answer
  let pairings = null; // the tournament panel's last preview (its round's pairings)
  const $ = (id) => document.getElementById(id);
  const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : '');

  function rows() {
    const body = $('hall-unassigned');
    if (!body) return;
    body.textContent = '';
    const all = [];
    for (const [from, m] of found) for (const b of m.boards || []) all.push({ from, b });
    all.sort((x, y) => x.b.port.localeCompare(y.b.port, undefined, { numeric: true }));
    for (const { from, b } of all) {
      const key = `${from}\n${b.port}`;
      const tr = document.createElement('tr');
      tr.className = 'unassigned';
      tr.dataset.port = b.port;
      tr.dataset.bridge = from;
      tr.dataset.connection = 'unassigned';
      const pending = assigned.has(key);
      const cells = [
        ['label', 'Board', `<b>not assigned</b>${found.size > 1 ? ` <small>${B.esc(from)}</small>` : ''}`],
        ['family', 'Family', B.esc(b.family || '?')],
        ['serial', 'Serial', B.esc(b.serial || '–')],
        ['port', 'Port', B.esc(b.port)],
        ['connection', 'Connection', `${pending ? 'assigned: starting' : 'plugged in, not read'}<span class="since">${b.since_ms ? `since ${B.esc(when(b.since_ms))}` : ''}</span>`],
        ['sync', 'Sync', '–'],
        ['battery', 'Battery', '–'],
        ['firmware', 'Firmware', B.esc(b.firmware || '–')],
        ['clock', 'Clock', '–'],
        ['last', 'Last move', '–'],
        ['actions', 'Actions', ''],
      ];
      for (const [name, label, html] of cells) {
        const td = document.createElement('td');
        td.className = name;
        td.dataset.label = label;
        td.innerHTML = html;
        tr.appendChild(td);
      }
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'assign';
      button.textContent = 'Assign';
      const operator = who && who.role === 'operator';
      button.disabled = !operator || pending;
      button.title = operator ? 'give this board a number, a name and its players: its game is read from now on'
        : `a ${who ? who.role : ''} account may not assign boards (an operator account may)`;
      button.addEventListener('click', () => open(from, b));
      tr.querySelector('.actions').appendChild(button);
      if (!operator) {
        const why = document.createElement('span');
        why.className = 'why';
        why.textContent = 'Assign: only an operator account may';
        tr.querySelector('.actions').appendChild(why);
      }
      body.appendChild(tr);
    }
    if (all.length > 0) $('hall-empty').hidden = true;
  }

  // The form for one board found.
  function open(from, b) {
    const form = $('assign-form');
    form.hidden = false;
    form.dataset.bridge = from;
    form.dataset.port = b.port;
    form.dataset.family = b.family;
    form.dataset.serial = b.serial || '';
    form.querySelector('.what').textContent = `${b.title || b.family}${b.serial ? `, serial ${b.serial}` : ''} on ${b.port}`;
    form.querySelector('.why').textContent = '';
    for (const name of ['board', 'name', 'white', 'black']) form[name].value = '';
    offer(form);
    form.board.focus();
  }

  // The pairings uploaded in the tournament panel, offered in the form:
  // one option per board number with its players; a number a board here
  // already has is shown but cannot be chosen.
  function offer(form) {
    const label = form.querySelector('.from-pairings');
    const select = form.pairing;
    while (select.options.length > 1) select.remove(1);
    const rows = (pairings && pairings.pairings) || [];
    label.hidden = rows.length === 0;
    for (const row of rows) {
      const option = new Option(`${row.board}: ${row.white.name || '?'} – ${row.black.name || '?'}${row.on ? ` (on ${row.on})` : ''}`, String(row.board));
      option.disabled = !!row.on;
      select.add(option);
    }
    select.value = '';
  }

  function chosen(e) {
    const form = e.target.form;
    const row = ((pairings && pairings.pairings) || []).find((p) => String(p.board) === e.target.value);
    if (!row) return;
    form.board.value = String(row.board);
    form.name.value = `board-${row.board}`;
    form.white.value = row.white.name || '';
    form.black.value = row.black.name || '';
  }

  async function submit(e) {
    e.preventDefault();
    const form = e.target;
    const why = form.querySelector('.why');
    const request = {
      // The bridge that found it reads it and keeps it (another bridge of
      // the hall gets the assignment as a signed command).
      bridge: form.dataset.bridge,
      family: form.dataset.family,
      port: form.dataset.port,
      serial: form.dataset.serial || null,
      board: form.board.value.trim(),
      name: form.name.value.trim() || `board-${form.board.value.trim()}`,
      white: form.white.value.trim(),
      black: form.black.value.trim(),
    };
    why.textContent = 'assigning…';
    const answer = await change('/api/assign', request);
    if (!answer) return;
    form.dataset.status = answer.status;
    if (answer.status !== 'done') {
      why.textContent = answer.reason || answer.status;
      return;
    }
    assigned.add(`${form.dataset.bridge}\n${form.dataset.port}`);
    const li = document.createElement('li');
    li.dataset.status = 'done';
    li.textContent = answer.reason;
    $('replies').prepend(li);
    form.hidden = true;
    rows();
  }

  return {
    // After the log-in: who is logged in, and how to POST.
    start(session, send) {
      who = session;
      change = send;
      const form = $('assign-form');
      form.addEventListener('submit', submit);
      form.querySelector('.cancel').addEventListener('click', () => { form.hidden = true; });
      form.pairing.addEventListener('change', chosen);
      window.addEventListener('boardcast:pairings', (e) => {
        pairings = e.detail;
        if (!form.hidden) offer(form);
      });
      rows();
    },
    // A bridge's list of boards found and not assigned (none: cleared).
    found(from, m) {
      if (m && (m.boards || []).length) found.set(from, m); else found.delete(from);
      const ports = new Set((m && m.boards || []).map((b) => `${from}\n${b.port}`));
      for (const key of [...assigned]) if (key.startsWith(`${from}\n`) && !ports.has(key)) assigned.delete(key);
      rows();
    },
  };
})();
