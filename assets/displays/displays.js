// boardcast display pages: what the board page, the overview, the TV wall
// and the operator console share — where the broker is, the MQTT connection,
// the log-in for the live tree, dropping repeated or stale messages, a
// chessground board's settings, player cards, an engine's evaluation,
// clocks and piece letters. GPL-3.0-or-later.
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
      // An analysis cleared (an empty retained message: the engine gave
      // up on the position) must take the evaluation off the page; so must
      // a bridge's list of boards not assigned when the bridge stops, and a
      // board's status when its bridge no longer reads it (un-assigned).
      const cleared = topic.endsWith('/analysis') || topic.includes('/live/unassigned/')
        || /\/bridges\/[^/]+\/boards\/[^/]+\/status$/.test(topic);
      if (payload.length === 0 && cleared) {
        onMessage(topic, null, packet.retain);
        return;
      }
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

  // The settings of a view-only chessground for a position: `fen`, the
  // last move in UCI, whether its SAN gives check, White at the top when
  // `flip`. Chessground highlights the king of the side to move.
  function boardView(fen, { uci = null, san = '', flip = false, coordinates = true } = {}) {
    const turn = (fen || '').split(' ')[1] === 'b' ? 'black' : 'white';
    return {
      fen: fen || '8/8/8/8/8/8/8/8',
      orientation: flip ? 'black' : 'white',
      turnColor: turn,
      lastMove: uci ? [uci.slice(0, 2), uci.slice(2, 4)] : undefined,
      check: /[+#]$/.test(san || ''),
      coordinates,
      viewOnly: true,
      animation: { enabled: true, duration: 180 },
      drawable: { enabled: false, visible: true },
    };
  }

  // The arrow of an engine's best move (chessground's autoShapes).
  function bestArrow(analysis) {
    const uci = analysis?.best_uci;
    return uci && uci.length >= 4 ? [{ orig: uci.slice(0, 2), dest: uci.slice(2, 4), brush: 'paleBlue' }] : [];
  }

  // Whether `analysis` is of the position `fen` (placement and side to
  // move): an evaluation of another position is never shown.
  function analysisOf(analysis, fen) {
    if (!analysis || !fen || !analysis.fen || !analysis.score) return false;
    const key = (f) => f.split(' ').slice(0, 2).join(' ');
    return key(analysis.fen) === key(fen);
  }

  // An evaluation from White's side as text: +0.35, -1.20, #3, -#2.
  function scoreText(score) {
    if (!score) return '';
    if (score.mate !== undefined && score.mate !== null) return `${score.mate < 0 ? '-' : ''}#${Math.abs(score.mate)}`;
    const cp = score.cp ?? 0;
    return `${cp > 0 ? '+' : cp < 0 ? '−' : ''}${(Math.abs(cp) / 100).toFixed(2)}`;
  }

  // White's share of an evaluation bar, 0 to 100: the centipawns mapped
  // to a winning chance (the logistic curve lichess draws its bar with).
  function whiteShare(score) {
    if (!score) return 50;
    if (score.mate !== undefined && score.mate !== null) return score.mate > 0 || (score.mate === 0) ? 100 : 0;
    const cp = Math.max(-1500, Math.min(1500, score.cp ?? 0));
    return 50 + 50 * (2 / (1 + Math.exp(-0.00368208 * cp)) - 1);
  }

  // An engine's line in SAN with move numbers, from the position `fen`.
  function lineText(fen, pv, lang) {
    const fields = (fen || '').split(' ');
    let number = Number(fields[5]) || 1;
    let white = fields[1] !== 'b';
    const out = [];
    (pv || []).forEach((san, i) => {
      if (white) out.push(`${number}.`);
      else if (i === 0) out.push(`${number}…`);
      out.push(translate(san, lang));
      if (!white) number += 1;
      white = !white;
    });
    return out.join(' ');
  }

  // A player as a card's HTML: flag, title, name, rating. `player` is a
  // `players` entry of the feed (or null), `fallback` the name shown when
  // none is known.
  function playerHtml(player, fallback) {
    const p = player || {};
    const fed = p.fed && /^[A-Za-z]{3}$/.test(p.fed) ? p.fed.toUpperCase() : '';
    return `${fed ? `<img class="flag" src="/flags/${fed}.svg" alt="${fed}" title="${fed}">` : ''}`
      + `${p.title ? `<span class="title">${esc(p.title)}</span>` : ''}`
      + `<span class="name">${esc(p.name || fallback)}</span>`
      + `${p.rating ? `<span class="rating">${esc(p.rating)}</span>` : ''}`;
  }

  // Flags the daemon does not have (a federation it does not know): gone
  // rather than a broken image.
  document.addEventListener('error', (e) => {
    if (e.target instanceof HTMLImageElement && e.target.classList.contains('flag')) e.target.remove();
  }, true);

  // A time a move took: 4.2s under ten seconds, 0:42, 12:05, 1:02:03.
  function spentText(ms) {
    if (ms === null || ms === undefined) return '';
    if (ms < 10000) return `${(ms / 1000).toFixed(1)}s`;
    const s = Math.round(ms / 1000);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, '0');
    return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
  }

  // A result for people: ½ for a half point.
  const resultText = (result) => (result && result !== '*' ? result.replaceAll('1/2', '½') : '');

  return {
    params, config, connect, login, Seen, newer, pieces, drawBoard, translate, pgnMoves, left, clockText, esc,
    boardView, bestArrow, analysisOf, scoreText, whiteShare, lineText, playerHtml, spentText, resultText,
  };
})();
