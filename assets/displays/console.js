// boardcast display pages: the operator console's script (kept out of the
// page so that the pages run under a `script-src 'self'` policy). It logs
// in at the daemon (/api/login: a session cookie the script never sees)
// and sends commands to /api/command, where the daemon signs them with the
// operator key, which never reaches the browser. The live tree is read
// over MQTT with the same account, kept in sessionStorage for this tab as
// the other pages keep theirs (displays.js). The hall view lists every
// board a bridge publishes a status for, with Identify, Flip, Un-assign,
// its capture and log lines (console-hall-ops.js), its Sync
// from the live state (undelayed), and the boards found but not assigned
// (console-assign.js). In a hall of several bridges it lists the boards of
// every bridge on the hall's broker, and a change for a board goes to the
// bridge that reads it (console-bridges.js).
// GPL-3.0-or-later.
'use strict';
(async () => {
  const B = Boardcast;
  const cfg = await B.config();
  const root = `${cfg.root}/v1`;
  const bridge = B.params.get('bridge') || cfg.bridges[0];
  const states = new Map(); // board name -> latest state
  const seen = new B.Seen();
  const noticesSeen = new Set(); // QoS 1 may bring a notice twice
  const $ = (id) => document.getElementById(id);
  const post = (path, body) => fetch(path, {
    method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  // A change posted to the daemon, and its answer ({status, reason}): a
  // daemon that cannot be reached is `no_answer`; an expired session
  // (401) logs in again, and the answer is null (the page reloads).
  async function change(path, body) {
    try {
      const response = await post(path, body);
      if (response.status === 401) {
        sessionStorage.removeItem('boardcast-login');
        location.reload();
        return null;
      }
      const type = response.headers.get('Content-Type') || '';
      return type.startsWith('application/json') ? await response.json() : { status: 'refused', reason: await response.text() };
    } catch {
      return { status: 'no_answer', reason: 'the daemon cannot be reached' };
    }
  }

  // The session: the daemon's answer to /api/session, or the log-in form
  // until an operator or live account logs in. The same account reads the
  // live tree over MQTT.
  async function session() {
    const link = await linkLogin();
    if (link.who) return link.who;
    const response = await fetch('/api/session', { credentials: 'same-origin', cache: 'no-store' });
    if (response.ok && sessionStorage.getItem('boardcast-login')) return response.json();
    const form = $('console-login');
    form.hidden = false;
    form.querySelector('.why').textContent = link.why || '';
    form.account.focus();
    return new Promise((resolve) => {
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        const why = form.querySelector('.why');
        why.textContent = '';
        const login = { account: form.account.value.trim(), password: form.password.value };
        let answer;
        try {
          answer = await post('/api/login', login);
        } catch {
          why.textContent = 'the daemon cannot be reached';
          return;
        }
        if (!answer.ok) {
          const words = (await answer.text()) || answer.statusText;
          const wait = answer.headers.get('Retry-After');
          why.textContent = wait ? `${words} (try again in ${wait} s)` : words;
          form.password.value = '';
          return;
        }
        sessionStorage.setItem('boardcast-login', JSON.stringify({ username: login.account, password: login.password }));
        form.password.value = '';
        form.hidden = true;
        resolve(answer.json());
      });
    });
  }

  // A one-click log-in link (`boardcast demo` prints one):
  // console.html#login=<token>, a one-time token the daemon spends at the
  // first use. It leaves the address at once (no history entry or
  // bookmark keeps it). Such a link comes with a broker whose live tree
  // anonymous clients read (the demo's), so the feed is read without an
  // account; a broker that refuses asks for one.
  async function linkLogin() {
    const token = new URLSearchParams(location.hash.slice(1)).get('login');
    if (!token) return {};
    history.replaceState(null, '', location.pathname + location.search);
    try {
      const answer = await post('/api/login-link', { token });
      if (!answer.ok) return { why: (await answer.text()) || answer.statusText };
      sessionStorage.setItem('boardcast-login', '{}');
      return { who: await answer.json() };
    } catch {
      return { why: 'the daemon cannot be reached' };
    }
  }

  const who = await session();
  $('who').textContent = `${who.account} (${who.role})`;
  $('who').dataset.role = who.role;
  $('logout').hidden = false;
  $('console').hidden = false;
  $('filter-label').hidden = false;
  window.ConsoleAssign.start(who, change);
  window.ConsoleHallOps.start(who, bridge, change, (c, from) => command(c, from));
  if (!who.may_change) {
    // The daemon refuses these commands for this account anyway; the
    // views disable their controls, and this says why once for all.
    const note = $('why-disabled');
    note.hidden = false;
    note.textContent = `${who.account} is a ${who.role} account: it may acknowledge alerts, not change games (an operator account may)`;
  }
  $('logout').addEventListener('click', async () => {
    sessionStorage.removeItem('boardcast-login');
    await post('/api/logout', {}).catch(() => {});
    location.reload();
  });

  // Sends `request` ({board, command, …} as in docs/operator.md) to the
  // daemon, which signs it and waits for the reply of the bridge that
  // reads the board (`to`, else the one whose status names the board,
  // else this daemon's); the reply is shown, and returned ({status,
  // reason}): done, refused and why, or no answer.
  async function command(request, to = window.ConsoleBridges.owner(request.board) || bridge) {
    const li = document.createElement('li');
    li.textContent = `${request.board}: ${request.command} sent…`;
    li.dataset.status = 'sent';
    $('replies').prepend(li);
    const answer = await change('/api/command', { bridge: to, ...request });
    if (!answer) return;
    const { status, reason } = answer;
    li.dataset.status = status;
    li.classList.toggle('refused', status !== 'done');
    const said = { done: '', refused: 'refused: ', no_answer: 'no answer: ' }[status] ?? '';
    li.textContent = `${request.board}: ${request.command}: ${said}${reason || status}`;
    return { status, reason };
  }
  // The game and alert views (console-game.js, console-alerts.js) send
  // through the same function and hear the feed through 'boardcast:message'.
  window.BoardcastConsole = { who, bridge, command };
  window.dispatchEvent(new Event('boardcast:console'));

  function boards() {
    const names = [...new Set([...states.keys()])].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const select = $('filter');
    const chosen = select.value;
    while (select.options.length > 1) select.remove(1);
    for (const n of names) select.add(new Option(n, n));
    // Keep the operator's choice.
    select.value = chosen;
    if (select.selectedIndex < 0) select.selectedIndex = 0;
  }

  function filter() {
    const board = $('filter').value;
    for (const li of document.querySelectorAll('.alert, #last-moves li')) li.hidden = !!board && li.dataset.board !== board;
  }

  // Each board's last move; a made move (article 6.12: not yet completed,
  // the clock not pressed) is shown provisional, like on the board page.
  function lastMoves() {
    const list = $('last-moves');
    list.textContent = '';
    const names = [...states.keys()].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    for (const name of names) {
      const last = states.get(name).last_move;
      const li = document.createElement('li');
      li.dataset.board = name;
      li.dataset.ply = last ? last.ply : '';
      li.dataset.status = last ? last.status : '';
      const number = last ? `${Math.ceil(last.ply / 2)}${last.color === 'white' ? '.' : '…'} ` : '';
      li.innerHTML = `<b>${B.esc(name)}</b> <span class="san">${last ? B.esc(number + last.san) : '–'}</span>`;
      if (last && last.status === 'made') {
        li.classList.add('provisional');
        li.title = 'made, not yet completed: the clock has not been pressed (article 6.12)';
      }
      list.appendChild(li);
    }
    filter();
  }

  // A notice of the bridge (a game lichess refused, a refused token): about
  // the bridge rather than a board, so never hidden by the board filter.
  function notice(m, from) {
    const key = `${from}|${m.ts_ms}|${m.kind}|${m.message}`;
    if (noticesSeen.has(key)) return;
    noticesSeen.add(key);
    const li = document.createElement('li');
    li.className = 'notice';
    li.dataset.kind = m.kind || '';
    li.dataset.severity = m.severity || '';
    const when = m.ts_ms ? new Date(m.ts_ms).toLocaleTimeString() : '';
    li.dataset.bridge = from;
    li.innerHTML = `<b>${B.esc(from)}</b> · ${B.esc(when)} · <span class="kind">${B.esc(m.kind)}</span> ${B.esc(m.severity)}
      <p class="message">${B.esc(m.message)}</p>`;
    $('notices').prepend(li);
  }
  $('filter').addEventListener('change', filter);

  // An alert with its evidence replayed on a small board: the board's
  // position when the alert came, then each sensor observation in turn.
  function alert(m) {
    const li = document.createElement('li');
    li.className = 'alert';
    li.dataset.board = m.board;
    li.dataset.game = m.game;
    li.dataset.seq = m.seq;
    li.dataset.kind = m.kind;
    li.dataset.severity = m.severity || '';
    const when = new Date(m.ts_ms).toLocaleTimeString();
    li.innerHTML = `<div class="board"></div><div><b>${B.esc(m.board)}</b> · ${B.esc(when)} · game ${B.esc(m.game)}, ply ${B.esc(m.ply ?? '')}
      <div class="kind">${B.esc(m.kind)}${m.article ? ` (article ${B.esc(m.article)})` : ''}</div>
      <p class="message">${B.esc(m.message)}</p>
      <div class="squares">${B.esc((m.squares || []).join(' '))}</div>
      <button class="replay" type="button">Replay the evidence</button>
      <button class="ack" type="button">Acknowledge</button></div>`;
    const state = states.get(m.board);
    const start = B.pieces(state && state.fen);
    const hot = m.squares || [];
    const boardEl = li.querySelector('.board');
    B.drawBoard(boardEl, start, { hot });
    const evidence = (m.evidence || []).filter((e) => e.square);
    li.querySelector('.replay').addEventListener('click', () => {
      const shown = { ...start };
      let i = 0;
      const step = () => {
        if (i >= evidence.length) return;
        const e = evidence[i++];
        if (e.piece) shown[e.square] = e.piece; else delete shown[e.square];
        B.drawBoard(boardEl, shown, { hot, marks: [e.square] });
        setTimeout(step, 400);
      };
      step();
    });
    li.querySelector('.ack').addEventListener('click', () =>
      command({ board: m.board, command: 'acknowledge_alert', game: m.game, seq: m.seq }));
    $('alerts').prepend(li);
    filter();
  }


  // The hall: one row per board whose status a bridge publishes (every
  // bridge on the broker), with the last move from the live state. Keyed
  // by bridge and board name: a status moves from the name's topic to the
  // serial number's once the board tells it.
  const statuses = new Map(); // `${bridge}\n${board}` -> {bridge, status}
  const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : '');
  const byLabel = (a, b) => (a.status.label || a.status.board).localeCompare(b.status.label || b.status.board, undefined, { numeric: true })
    || a.bridge.localeCompare(b.bridge);
  const CLOCKS = { dgt3000: 'DGT 3000', attached: 'attached', none: 'none' };

  // Boards whose LEDs Identify lights (every one, for 5 s).
  const LEDS = new Set(['millennium', 'certabo']);

  // Why Identify cannot be done for this board, or '' when it can.
  function identifyRefusal(s, gone) {
    if (!who.may_change) return `a ${who.role} account may not send commands to a board`;
    if (gone) return 'its bridge is offline';
    if (s.connection !== 'connected') return 'the board is not connected';
    if (LEDS.has(s.family)) return '';
    if (s.family !== 'dgt') {
      return `a ${s.family || 'board of unknown family'} board cannot show itself: it has no LEDs the daemon drives and no clock that shows text`;
    }
    if (s.clock !== 'dgt3000') {
      return `no DGT 3000 clock known on this board (clock: ${s.clock || 'not reported'}); `
        + 'only a DGT 3000 shows text, and it is recognised only with clock_display on';
    }
    return '';
  }

  function hall() {
    const body = $('hall-boards').tBodies[0];
    body.textContent = '';
    const rows = [...statuses.values()].sort(byLabel);
    $('hall-empty').hidden = rows.length > 0 || $('hall-unassigned').rows.length > 0;
    for (const { bridge: from, status: s } of rows) {
      const gone = window.ConsoleBridges.gone(from);
      const tr = document.createElement('tr');
      tr.dataset.board = s.board;
      tr.dataset.bridge = from;
      tr.dataset.connection = s.connection;
      const state = states.get(s.board);
      // The status topic's sync is the public one, public_delay_s late; a
      // logged-in console reads the live state, whose status is the board's
      // sync now.
      const sync = (state && state.status) || s.sync;
      tr.dataset.sync = sync;
      tr.classList.toggle('gone', !!gone);
      const last = state && state.last_move;
      if (last && last.status === 'made') tr.classList.add('provisional');
      const number = last ? `${Math.ceil(last.ply / 2)}${last.color === 'white' ? '.' : '…'} ${last.san}` : '–';
      const connection = gone ? `bridge ${from} ${gone}` : s.connection;
      const since = !gone && s.connected_since_ms ? `since ${when(s.connected_since_ms)}` : '';
      const cells = [
        ['label', 'Board', `<b>${B.esc(s.label || s.board)}</b> ${s.label && s.label !== s.board ? B.esc(s.board) : ''}${window.ConsoleBridges.count() > 1 ? ` <small class="bridge">${B.esc(from)}</small>` : ''}`],
        ['family', 'Family', B.esc(s.family || '?')],
        ['serial', 'Serial', B.esc(s.serial || '–')],
        ['port', 'Port', B.esc(s.port || 'found by serial')],
        ['connection', 'Connection', `${B.esc(connection)}<span class="since">${B.esc(since)}</span>`],
        ['sync', 'Sync', B.esc((sync || '').replace(/_/g, ' '))],
        ['battery', 'Battery', s.battery_percent == null ? 'cable' : `${B.esc(s.battery_percent)} %`],
        ['firmware', 'Firmware', B.esc(s.firmware || '–')],
        ['clock', 'Clock', B.esc(CLOCKS[s.clock] || 'not reported')],
        ['last', 'Last move', B.esc(number)],
        ['actions', 'Actions', ''],
      ];
      for (const [name, label, html] of cells) {
        const td = document.createElement('td');
        td.className = name;
        td.dataset.label = label;
        td.innerHTML = html;
        tr.appendChild(td);
      }
      const actions = tr.querySelector('.actions');
      const identify = document.createElement('button');
      identify.type = 'button';
      identify.className = 'identify';
      identify.textContent = 'Identify';
      const refusal = identifyRefusal(s, gone);
      identify.disabled = !!refusal;
      identify.title = refusal || (LEDS.has(s.family) ? 'lights every LED of the board for 5 s'
        : 'shows the board\'s label on its DGT 3000 clock for a moment');
      // The label for the clock, which shows eight characters; a board with
      // LEDs lights them all instead.
      identify.addEventListener('click', () =>
        command({ board: s.board, command: 'identify', text: (s.label || s.board).slice(0, 8) }, from));
      const flip = document.createElement('button');
      flip.type = 'button';
      flip.className = 'flip';
      flip.textContent = 'Flip';
      flip.disabled = !who.may_change || gone || !!s.mirror_of;
      flip.title = 'the board is turned round: read it the other way';
      flip.addEventListener('click', () => {
        if (confirm(`Board ${s.label || s.board} is turned round: read it the other way?`)) command({ board: s.board, command: 'flip' }, from);
      });
      actions.append(identify, flip);
      window.ConsoleHallOps.actions(actions, s, from, gone);
      if (refusal) {
        const why = document.createElement('span');
        why.className = 'why';
        why.textContent = `Identify: ${refusal}`;
        actions.appendChild(why);
      }
      body.appendChild(tr);
    }
  }

  // The client is shared with the game view, which subscribes to the
  // shown board's PGN and clock only (every board's would be too much for
  // a tablet in a large hall).
  window.BoardcastConsole.client = await B.connect(cfg, 'live',
    [`${root}/live/+/+/+/alerts`, `${root}/live/+/+/+/state`, `${root}/bridges/+/notices`,
      `${root}/bridges/+/status`, `${root}/bridges/+/boards/+/status`, `${root}/live/unassigned/+`],
    (t, m, retained) => {
      // After this handler has drawn what it draws.
      setTimeout(() => window.dispatchEvent(new CustomEvent('boardcast:message', { detail: { topic: t, message: m } })));
      if (t.startsWith(`${root}/live/unassigned/`)) {
        window.ConsoleAssign.found(t.slice(`${root}/live/unassigned/`.length), m);
      } else if (t.startsWith(`${root}/bridges/`) && t.endsWith('/status')) {
        const [from, ...rest] = t.slice(`${root}/bridges/`.length).split('/');
        if (rest.length === 1) window.ConsoleBridges.status(from, m, retained);
        else if (m) {
          statuses.set(`${from}\n${m.board}`, { bridge: from, status: m, topic: t });
          window.ConsoleBridges.board(from, m);
        } else {
          // Cleared: the bridge no longer reads the board (un-assigned).
          // The row is keyed by the board's name, its topic by its name or
          // serial number: the row whose latest status came on this topic goes.
          for (const [key, row] of statuses) if (row.topic === t) statuses.delete(key);
        }
        hall();
      } else if (t.endsWith('/state')) {
        if (!B.newer(m, states.get(m.board))) return;
        const known = states.has(m.board);
        states.set(m.board, m);
        if (!known) boards();
        lastMoves();
        hall();
      } else if (t.endsWith('/notices')) {
        notice(m, t.slice(`${root}/bridges/`.length).split('/')[0]);
      } else if (t.endsWith('/alerts')) {
        if (!seen.first(m)) return;
        if (m.kind === 'acknowledged') {
          const li = document.querySelector(`.alert[data-board="${CSS.escape(m.board)}"][data-game="${m.alert_game}"][data-seq="${m.alert_seq}"]`);
          if (li) li.classList.add('acknowledged');
        } else alert(m);
      }
    },
    (link) => {
      $('link').dataset.state = link;
      $('link').textContent = link === 'connected' ? '' : 'no connection to the feed: retrying';
    });
})();
