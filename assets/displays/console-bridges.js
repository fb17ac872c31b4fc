// boardcast display pages: the console in a hall of several bridges
// (docs/service.md, "A hall with several bridges"). Every bridge publishing
// to the hall's broker says on <root>/v1/bridges/<id>/status whether it is
// online and which boards it reads (its Last Will says offline); console.js
// hands those messages, and the boards' statuses, here. From them this
// script knows which bridge reads a board, so that a change made in the
// console goes to that bridge (the daemon signs it and sends it there, and
// shows that bridge's answer), and since when a bridge is gone: a bridge
// whose offline status arrives while the page is open is gone since then;
// one already gone when the page opened is gone since it was last heard.
// The hall's list of bridges above its table says both. GPL-3.0-or-later.
'use strict';
window.ConsoleBridges = (() => {
  const B = Boardcast; // displays.js's (a global binding, not a window property)
  const bridges = new Map(); // id -> {status, since_ms, heard_ms, boards: Set}
  const owners = new Map(); // board name -> bridge id
  const $ = (id) => document.getElementById(id);
  const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : '');

  function bridgeOf(id) {
    if (!bridges.has(id)) bridges.set(id, { status: '', since_ms: 0, heard_ms: 0, boards: new Set() });
    return bridges.get(id);
  }

  // The list of bridges, each online or gone since when, with its boards.
  function render() {
    let list = $('hall-bridges');
    if (!list) {
      list = document.createElement('ul');
      list.id = 'hall-bridges';
      list.setAttribute('aria-label', 'Bridges');
      $('hall-boards').before(list);
    }
    list.textContent = '';
    list.hidden = bridges.size < 2 && ![...bridges.values()].some((b) => b.status === 'offline');
    for (const [id, b] of [...bridges].sort(([x], [y]) => x.localeCompare(y, undefined, { numeric: true }))) {
      const li = document.createElement('li');
      li.dataset.bridge = id;
      li.dataset.status = b.status || 'unknown';
      li.classList.toggle('gone', b.status === 'offline');
      const boards = [...b.boards].sort((x, y) => x.localeCompare(y, undefined, { numeric: true }));
      li.innerHTML = `<b>${B.esc(id)}</b> <span class="state">${B.esc(text(id))}</span>`
        + ` <span class="boards">${boards.length ? B.esc(boards.join(', ')) : 'no board'}</span>`;
      list.appendChild(li);
    }
  }

  // What is said of bridge `id`: online, or gone and since when.
  function text(id) {
    const b = bridges.get(id);
    if (!b || b.status !== 'offline') return b && b.status === 'online' ? 'online' : '';
    if (b.since_ms) return `gone since ${when(b.since_ms)}`;
    return b.heard_ms ? `gone, last heard at ${when(b.heard_ms)}` : 'gone';
  }

  return {
    // `m` on <root>/v1/bridges/<id>/status (`retained`: kept by the broker,
    // so not news of this moment).
    status(id, m, retained) {
      const b = bridgeOf(id);
      const was = b.status;
      b.status = m && m.status;
      if (b.status === 'offline') {
        if (was !== 'offline') b.since_ms = retained ? 0 : Date.now();
      } else {
        b.since_ms = 0;
        if (m && m.ts_ms) b.heard_ms = Math.max(b.heard_ms, m.ts_ms);
        b.boards = new Set((m && m.boards) || []);
        for (const name of b.boards) owners.set(name, id);
      }
      render();
    },
    // A board's status `m` from bridge `id`: that bridge reads the board.
    board(id, m) {
      if (!m || !m.board) return;
      const b = bridgeOf(id);
      b.boards.add(m.board);
      if (m.ts_ms) b.heard_ms = Math.max(b.heard_ms, m.ts_ms);
      owners.set(m.board, id);
      render();
    },
    // The bridge that reads `board`, if one said so.
    owner(board) {
      return owners.get(board);
    },
    // Whether bridge `id` is gone, and the words for it ('' when it is not).
    gone(id) {
      const b = bridges.get(id);
      return b && b.status === 'offline' ? text(id) : '';
    },
    // The ids of the bridges the page knows of, sorted.
    ids() {
      return [...bridges.keys()].sort((x, y) => x.localeCompare(y, undefined, { numeric: true }));
    },
    // How many bridges the page knows of.
    count() {
      return bridges.size;
    },
  };
})();
