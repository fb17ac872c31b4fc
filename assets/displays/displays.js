// boardcast display pages: what the board page, the overview and the
// arbiter console share — where the broker is, the MQTT connection, the
// log-in for the live tree, dropping repeated or stale messages, drawing a
// board, clocks and piece letters. GPL-3.0-or-later.
'use strict';

const Boardcast = (() => {
  const params = new URLSearchParams(location.search);
  const GLYPHS = { K: '♔', Q: '♕', R: '♖', B: '♗', N: '♘', P: '♙', k: '♚', q: '♛', r: '♜', b: '♝', n: '♞', p: '♟' };
  // King, queen, rook, bishop, knight, as the daemon renders them.
  const LETTERS = { en: 'KQRBN', nl: 'KDTLP', de: 'KDTLS', af: 'KDTLR', fr: 'RDTFC' };

  async function config() {
    const response = await fetch('/config.json', { cache: 'no-store' });
    return response.json();
  }

  // The broker's WebSocket address for this page.
  function brokerUrl(cfg) {
    if (cfg.broker.url) return cfg.broker.url;
    // wss when the broker serves TLS, or when the page itself came over
    // https (a browser refuses ws:// from an https page).
    const scheme = cfg.broker.tls || location.protocol === 'https:' ? 'wss' : 'ws';
    return `${scheme}://${cfg.broker.host || location.hostname}:${cfg.broker.port}/mqtt`;
  }

  // User name and password for the live tree: asked once per browser tab
  // and kept in sessionStorage (never in the address, never on disk).
  function login() {
    const saved = sessionStorage.getItem('boardcast-login');
    if (saved) return Promise.resolve(JSON.parse(saved));
    return new Promise((resolve) => {
      const form = document.createElement('form');
      form.id = 'login';
      form.innerHTML = `<h2>Arbiters' log-in</h2>
        <label>User name <input name="username" autocomplete="username"></label>
        <label>Password <input name="password" type="password" autocomplete="current-password"></label>
        <button type="submit">Log in</button>`;
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        const login = { username: form.username.value, password: form.password.value };
        sessionStorage.setItem('boardcast-login', JSON.stringify(login));
        form.remove();
        resolve(login);
      });
      document.body.appendChild(form);
    });
  }

  // Connects and subscribes to `topics`; every message goes to
  // `onMessage(topic, json, retained)`, every change of the link to
  // `onLink('connected' | 'disconnected')`. Reconnects by itself.
  async function connect(cfg, tree, topics, onMessage, onLink) {
    const options = {
      clientId: `boardcast-page-${Math.random().toString(16).slice(2, 12)}`,
      clean: true,
      reconnectPeriod: 2000,
      connectTimeout: 5000,
      protocolVersion: 4,
    };
    if (tree === 'live') Object.assign(options, await login());
    const client = mqtt.connect(brokerUrl(cfg), options);
    client.on('connect', () => {
      onLink('connected');
      client.subscribe(topics, { qos: 0 });
    });
    for (const event of ['close', 'offline']) client.on(event, () => onLink('disconnected'));
    client.on('error', (e) => {
      // A refused log-in: ask again.
      if (e && (e.code === 4 || e.code === 5) && tree === 'live') {
        sessionStorage.removeItem('boardcast-login');
        client.end(true);
        connect(cfg, tree, topics, onMessage, onLink);
      }
    });
    client.on('message', (topic, payload, packet) => {
      let json;
      try {
        json = JSON.parse(new TextDecoder().decode(payload));
      } catch {
        return;
      }
      if (json) onMessage(topic, json, packet.retain);
    });
    return client;
  }

  // Drops repeated messages: a message is (board, session, game, seq);
  // QoS 1 may bring one twice, a reconnection brings retained ones again.
  class Seen {
    constructor(limit = 5000) {
      this.keys = new Set();
      this.order = [];
      this.limit = limit;
    }
    first(m) {
      const key = `${m.board}|${m.session}|${m.game}|${m.seq}|${m.kind || ''}`;
      if (this.keys.has(key)) return false;
      this.keys.add(key);
      this.order.push(key);
      if (this.order.length > this.limit) this.keys.delete(this.order.shift());
      return true;
    }
  }

  // Whether `m` (a retained state or clock) is not older than `shown`:
  // within one run of the daemon and one recording session, a lower game or
  // seq is a late duplicate; a new boot (daemon restart) or session (board
  // replaced, or its capture begun again) always wins.
  function newer(m, shown) {
    if (!shown) return true;
    if (m.boot !== shown.boot || m.session !== shown.session) return true;
    if ((m.game ?? 0) !== (shown.game ?? 0)) return (m.game ?? 0) > (shown.game ?? 0);
    return (m.seq ?? 0) >= (shown.seq ?? 0);
  }

  // Pieces of a FEN's placement by square name ("e4" -> "P").
  function pieces(fen) {
    const out = {};
    if (!fen) return out;
    const ranks = fen.split(' ')[0].split('/');
    ranks.forEach((row, r) => {
      let file = 0;
      for (const c of row) {
        if (/\d/.test(c)) file += Number(c);
        else {
          out[`${'abcdefgh'[file]}${8 - r}`] = c;
          file += 1;
        }
      }
    });
    return out;
  }

  // Draws `placement` (square -> piece letter) into `el`, White at the
  // bottom unless `flip`; `marks` are squares given the class `last`, `hot`
  // the ones given `hot` (an alert's squares).
  function drawBoard(el, placement, { flip = false, marks = [], hot = [] } = {}) {
    if (!el.firstChild) {
      for (let i = 0; i < 64; i++) {
        const sq = document.createElement('div');
        el.appendChild(sq);
      }
    }
    el.classList.add('board');
    [...el.children].forEach((sq, i) => {
      let file = i % 8;
      let rank = 7 - Math.floor(i / 8);
      if (flip) {
        file = 7 - file;
        rank = 7 - rank;
      }
      const name = `${'abcdefgh'[file]}${rank + 1}`;
      const piece = placement[name] || '';
      sq.className = `sq ${(file + rank) % 2 ? 'light' : 'dark'}`;
      if (marks.includes(name)) sq.classList.add('last');
      if (hot.includes(name)) sq.classList.add('hot');
      sq.dataset.square = name;
      sq.dataset.piece = piece;
      sq.textContent = piece ? GLYPHS[piece] : '';
      if (piece) sq.classList.add(piece === piece.toUpperCase() ? 'white' : 'black');
    });
  }

  // A SAN in a language's piece letters.
  function translate(san, lang) {
    const letters = LETTERS[lang] || LETTERS.en;
    return san.replace(/[KQRBN]/g, (c) => letters['KQRBN'.indexOf(c)]);
  }

  // The SAN moves of a PGN's main line.
  function pgnMoves(pgn) {
    const text = (pgn || '')
      .split('\n')
      .filter((l) => !l.startsWith('['))
      .join(' ')
      .replace(/\{[^}]*\}/g, ' ')
      .replace(/;[^\n]*/g, ' ');
    let depth = 0;
    let main = '';
    for (const c of text) {
      if (c === '(') depth += 1;
      else if (c === ')') depth -= 1;
      else if (depth === 0) main += c;
    }
    return main
      .split(/\s+/)
      .map((t) => t.replace(/^\d+\.+/, ''))
      .filter((t) => t && !/^(\$\d+|1-0|0-1|1\/2-1\/2|\*)$/.test(t));
  }

  // A clock's time left for `color` now, in milliseconds: a running clock
  // counts down from when it was read.
  function left(clock, color, now = Date.now()) {
    if (!clock) return null;
    const ms = clock[`${color}_ms`];
    return Math.max(0, clock.running === color ? ms - (now - clock.read_at_ms) : ms);
  }

  // 1:23:45, 12:34, or 0:09.3 in the last ten seconds.
  function clockText(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 10000) return `0:0${Math.floor(ms / 1000)}.${Math.floor((ms % 1000) / 100)}`;
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, '0');
    return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
  }

  // Escapes text for innerHTML.
  const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

  return { params, config, connect, login, Seen, newer, pieces, drawBoard, translate, pgnMoves, left, clockText, esc };
})();
