// boardcast display pages: the arbiter console's script (kept out of the
// page so that the pages run under a `script-src 'self'` policy). GPL-3.0-or-later.
'use strict';
(async () => {
  const B = Boardcast;
  const S = BoardcastSha256;
  const cfg = await B.config();
  const root = `${cfg.root}/v1`;
  const bridge = B.params.get('bridge') || cfg.bridges[0];
  const states = new Map(); // board name -> latest state
  const seen = new B.Seen();
  const noticesSeen = new Set(); // QoS 1 may bring a notice twice
  let client = null;
  const $ = (id) => document.getElementById(id);

  // The operator key (the daemon's [operator] key_file: 64 hex digits),
  // pasted once per tab; it stays in sessionStorage and only signs.
  function key() {
    const saved = sessionStorage.getItem('boardcast-operator-key');
    if (saved) return Promise.resolve(S.fromHex(saved));
    return new Promise((resolve) => {
      const form = document.createElement('form');
      form.id = 'key';
      form.innerHTML = `<h2>Operator key</h2><p>Paste the 64 hexadecimal digits of the daemon's operator key file.
        It stays in this tab and is never sent.</p><input name="key" autocomplete="off" spellcheck="false">
        <button type="submit">Use this key</button><span class="why"></span>`;
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        const text = form.key.value.trim().toLowerCase();
        const bytes = S.fromHex(text);
        if (!bytes || bytes.length !== 32) {
          form.querySelector('.why').textContent = 'that is not 64 hexadecimal digits';
          return;
        }
        sessionStorage.setItem('boardcast-operator-key', text);
        form.remove();
        resolve(bytes);
      });
      document.body.appendChild(form);
    });
  }

  // Publishes `request` signed: {"signed": the request as JSON text,
  // "mac": HMAC-SHA256 of its UTF-8 bytes with the operator key, in hex}.
  async function command(request) {
    const k = await key();
    const full = { id: `console-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, ts_ms: Date.now(), ...request };
    const signed = JSON.stringify(full);
    const envelope = { signed, mac: S.hex(S.hmac(k, S.utf8(signed))) };
    client.publish(`${root}/bridges/${bridge}/commands`, JSON.stringify(envelope), { qos: 1 });
    const li = document.createElement('li');
    li.dataset.id = full.id;
    li.textContent = `${full.board}: ${full.command} sent…`;
    $('replies').prepend(li);
    return full;
  }

  function boards() {
    const names = [...new Set([...states.keys()])].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    for (const select of [$('filter'), $('command-board')]) {
      const chosen = select.value;
      const keep = select.id === 'filter' ? 1 : 0;
      while (select.options.length > keep) select.remove(keep);
      for (const n of names) select.add(new Option(n, n));
      // Keep the operator's choice; a command needs a board, so the
      // command form shows the first one rather than none.
      select.value = chosen;
      if (select.selectedIndex < 0 && select.options.length) select.selectedIndex = 0;
    }
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
  function notice(m) {
    const key = `${m.ts_ms}|${m.kind}|${m.message}`;
    if (noticesSeen.has(key)) return;
    noticesSeen.add(key);
    const li = document.createElement('li');
    li.className = 'notice';
    li.dataset.kind = m.kind || '';
    li.dataset.severity = m.severity || '';
    const when = m.ts_ms ? new Date(m.ts_ms).toLocaleTimeString() : '';
    li.innerHTML = `<b>${B.esc(bridge)}</b> · ${B.esc(when)} · <span class="kind">${B.esc(m.kind)}</span> ${B.esc(m.severity)}
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
    li.innerHTML = `<div class="board"></div><div><b>${B.esc(m.board)}</b> · ${B.esc(when)} · game ${m.game}, ply ${B.esc(m.ply ?? '')}
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

  $('commands').addEventListener('submit', (e) => {
    e.preventDefault();
    const f = e.target;
    const value = f.value.value.trim();
    const request = { board: f.board.value, command: f.command.value };
    if (request.command === 'set_result') {
      const [result, ...reason] = value.split(/\s+/);
      Object.assign(request, { result, reason: reason.join(' ') || 'arbiter' });
    } else if (request.command === 'moves') request.san = value.split(/\s+/).filter(Boolean);
    else if (request.command === 'promote') request.piece = value;
    else if (request.command === 'set_position') request.fen = value;
    else if (request.command === 'next_round') request.round = value;
    command(request);
  });
  $('forget').addEventListener('click', () => sessionStorage.removeItem('boardcast-operator-key'));

  client = await B.connect(cfg, 'live',
    [`${root}/live/+/+/+/alerts`, `${root}/live/+/+/+/state`, `${root}/bridges/${bridge}/replies`, `${root}/bridges/${bridge}/notices`],
    (t, m) => {
      if (t.endsWith('/state')) {
        if (!B.newer(m, states.get(m.board))) return;
        const known = states.has(m.board);
        states.set(m.board, m);
        if (!known) boards();
        lastMoves();
      } else if (t.endsWith('/notices')) {
        notice(m);
      } else if (t.endsWith('/alerts')) {
        if (!seen.first(m)) return;
        if (m.kind === 'acknowledged') {
          const li = document.querySelector(`.alert[data-board="${CSS.escape(m.board)}"][data-game="${m.alert_game}"][data-seq="${m.alert_seq}"]`);
          if (li) li.classList.add('acknowledged');
        } else alert(m);
      } else if (t.endsWith('/replies')) {
        const li = document.querySelector(`#replies li[data-id="${CSS.escape(m.id || '')}"]`) || document.createElement('li');
        li.textContent = `${m.board || ''}: ${m.ok ? '' : 'refused: '}${m.message || ''}`;
        li.classList.toggle('refused', !m.ok);
        if (!li.parentNode) $('replies').prepend(li);
      }
    },
    (link) => {
      $('link').dataset.state = link;
      $('link').textContent = link === 'connected' ? '' : 'no connection to the feed: retrying';
    });
})();
