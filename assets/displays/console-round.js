// boardcast display pages: the operator console's tournament panel. It
// shows the event as the daemon has it (/api/tournament) and each board's
// round and players as its live state says; reads a pairings file (TRF16
// or CSV) in the browser and has the daemon parse it (/api/pairings) into a
// preview, which changes nothing; starts a round with the preview's
// `next_round`, or the next one, and edits a board's players (`set_tags`),
// each after a confirmation, through /api/command, where the daemon signs
// it exactly as `boardcast ctl` would. It also lists the PGN address of
// the round the boards play (and earlier rounds'), with a copy button, and
// the lichess push's state per round. In a hall of several bridges it lists
// every bridge's boards (each labelled with its bridge, as the hall is),
// sends a round to every bridge (one signed command each; a bridge already
// in that round changes nothing) and says which applied it and which did
// not answer; a board's players go to the bridge that reads it.
// GPL-3.0-or-later.
'use strict';
(async () => {
  const B = Boardcast;
  const $ = (id) => document.getElementById(id);
  const post = (path, body) => fetch(path, {
    method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });

  // The console script logs in; this one starts once the console shows.
  await new Promise((resolve) => {
    if (!$('console').hidden) return resolve();
    new MutationObserver((_, observer) => {
      if ($('console').hidden) return;
      observer.disconnect();
      resolve();
    }).observe($('console'), { attributes: true, attributeFilter: ['hidden'] });
  });
  const cfg = await B.config();
  const root = `${cfg.root}/v1`;
  const who = await (await fetch('/api/session', { credentials: 'same-origin', cache: 'no-store' })).json();
  const bridge = B.params.get('bridge') || who.bridge || cfg.bridges[0];
  let tournament = await (await fetch('/api/tournament', { credentials: 'same-origin', cache: 'no-store' })).json();
  const states = new Map(); // board name -> its latest live state
  const labels = new Map(); // board name -> its label (the topic's board level), any bridge's
  const hall = () => window.ConsoleBridges;
  // The bridge that reads a board: this one's own, or the one that said so.
  const bridgeOf = (name) => (tournament.boards.some((b) => b.name === name) ? bridge : hall().owner(name) || bridge);
  const numberOf = (label) => {
    const digits = /(\d+)$/.exec(label || '');
    return digits && Number(digits[1]) > 0 ? Number(digits[1]) : null;
  };
  // Every board of the hall: this daemon's (also those assigned since it
  // started) and every other bridge's whose live state the page has seen.
  function hallBoards() {
    const boards = new Map(tournament.boards.map((b) => [b.name, { ...b, bridge }]));
    for (const [name, label] of labels) {
      if (!boards.has(name)) boards.set(name, { name, label, number: numberOf(label), bridge: bridgeOf(name) });
    }
    return [...boards.values()].sort((x, y) => (x.number ?? 1e9) - (y.number ?? 1e9) || x.name.localeCompare(y.name));
  }
  // The bridges a round goes to: every bridge the hall knows, this one
  // first.
  const allBridges = () => [...new Set([bridge, ...hall().ids()])];
  let preview = null; // the last good preview of the uploaded file
  let fileText = null; // the uploaded file's text

  const section = document.createElement('section');
  section.id = 'tournament';
  section.innerHTML = `<h2>Tournament</h2>
    <dl id="tournament-facts"></dl>
    <p id="why-no-round" class="why" hidden></p>
    <p class="note">White and Black: the game on the board; <i>in italics</i> those of its next game, while the board waits for it (a round just started).</p>
    <table id="round-boards">
      <thead><tr><th>Board</th><th>Bridge</th><th>No.</th><th>Round</th><th>White</th><th>Black</th><th>Players</th></tr></thead>
      <tbody></tbody>
    </table>
    <form id="pairings-form">
      <label>Pairings (TRF16 or CSV) <input type="file" name="file" accept=".trf,.txt,.csv,text/plain,text/csv"></label>
      <label>Round <input name="round" size="5" inputmode="numeric" autocomplete="off"></label>
      <button type="button" id="next-round">Next round</button>
    </form>
    <p id="pairings-problem" class="why" role="alert" hidden></p>
    <div id="preview" hidden>
      <p id="preview-summary"></p>
      <table id="preview-pairings">
        <thead><tr><th>Board</th><th>Hall board</th><th>White</th><th>Black</th></tr></thead><tbody></tbody>
      </table>
      <p id="preview-left-over"></p>
      <button type="button" id="start-round"></button>
    </div>
    <ol id="round-replies"></ol>
    <h3>Delivery</h3>
    <ul id="delivery"></ul>`;
  $('hall').after(section);

  if (!who.may_change) {
    for (const control of section.querySelectorAll('input, button')) control.disabled = true;
    const note = $('why-no-round');
    note.hidden = false;
    note.textContent = `${who.account} is a ${who.role} account: it may not start rounds or change players (an operator account may)`;
  }

  const numeric = (round) => (/^\d+$/.test(String(round ?? '').trim()) ? Number(round) : null);
  // The round this daemon's boards play now: the highest a board's live
  // state names, else the configured one.
  function currentRound() {
    const rounds = [...states.values()].map((s) => s.round).filter((r) => r != null);
    const numbers = rounds.map(numeric).filter((n) => n != null);
    if (numbers.length) return String(Math.max(...numbers));
    return rounds[0] ?? tournament.round;
  }

  function facts() {
    const rounds = [...new Set([...states.values()].map((s) => s.round).filter((r) => r != null))];
    const rows = [
      ['Event', tournament.event], ['Site', tournament.site], ['Time control', tournament.time_control],
      ['Rules', tournament.rules || 'from the time control'],
      ['Round', rounds.length ? rounds.sort().join(', ') : tournament.round],
    ];
    $('tournament-facts').innerHTML = rows
      .map(([name, value]) => `<div><dt>${B.esc(name)}</dt><dd class="${B.esc(name.toLowerCase().replace(' ', '-'))}">${B.esc(value || '–')}</dd></div>`)
      .join('');
  }

  const playerText = (p, fallback) => {
    if (!p && !fallback) return '–';
    if (!p) return fallback;
    return [p.title, p.name || fallback, p.rating ? `(${p.rating})` : ''].filter(Boolean).join(' ');
  };

  function boardsTable() {
    const tbody = $('round-boards').querySelector('tbody');
    for (const board of hallBoards()) {
      let tr = tbody.querySelector(`tr[data-board="${CSS.escape(board.name)}"]`);
      if (!tr) {
        tr = document.createElement('tr');
        tr.dataset.board = board.name;
        tbody.append(tr);
      }
      if (tr.classList.contains('editing')) continue;
      const s = states.get(board.name) || {};
      // No game on the board (a round started, its game not begun): the
      // players of its next game, as the daemon publishes them at once.
      const waiting = !s.players && !!s.next_players;
      const players = s.players || s.next_players || {};
      tr.classList.toggle('next', waiting);
      tr.title = waiting ? 'the players of the board\'s next game: it has not begun' : '';
      tr.dataset.bridge = board.bridge;
      tr.innerHTML = `<td class="label" data-label="Board">${B.esc(board.name)}</td>
        <td class="bridge" data-label="Bridge">${B.esc(board.bridge)}</td>
        <td class="number" data-label="No.">${B.esc(board.number ?? '–')}</td>
        <td class="round" data-label="Round">${B.esc(s.round ?? '–')}</td>
        <td class="white" data-label="White">${B.esc(playerText(players.white, s.white))}</td>
        <td class="black" data-label="Black">${B.esc(playerText(players.black, s.black))}</td>
        <td class="actions"><button type="button" class="edit">Edit players</button></td>`;
      const edit = tr.querySelector('button.edit');
      edit.disabled = !who.may_change;
      edit.addEventListener('click', () => editPlayers(tr, board.name));
    }
    if (preview?.pairings && !$('preview').hidden) drawPlacement(preview);
  }

  // The players of a board, edited in its row: names, Elo, titles; sent as
  // `set_tags` (the game in progress and the board's next games).
  function editPlayers(tr, name) {
    const s = states.get(name) || {};
    const p = s.players || s.next_players || {};
    const value = (colour, field, fallback) => B.esc(p[colour]?.[field] ?? fallback ?? '');
    tr.classList.add('editing');
    tr.innerHTML = `<td class="label" data-label="Board">${B.esc(name)}</td>
      <td colspan="4" class="edit-players"><form class="players">
        <label>White <input name="White" value="${value('white', 'name', s.white)}"></label>
        <label>Elo <input name="WhiteElo" size="5" value="${value('white', 'rating')}"></label>
        <label>Title <input name="WhiteTitle" size="4" value="${value('white', 'title')}"></label>
        <label>Black <input name="Black" value="${value('black', 'name', s.black)}"></label>
        <label>Elo <input name="BlackElo" size="5" value="${value('black', 'rating')}"></label>
        <label>Title <input name="BlackTitle" size="4" value="${value('black', 'title')}"></label>
      </form></td>
      <td class="actions"><button type="button" class="save">Save</button> <button type="button" class="cancel">Cancel</button></td>`;
    const form = tr.querySelector('form');
    const done = () => {
      tr.classList.remove('editing');
      boardsTable();
    };
    tr.querySelector('.cancel').addEventListener('click', done);
    const save = async () => {
      // Only what the operator changed: a field left as it was (empty
      // before a game, when the live state has no players yet) must not
      // remove a tag the pairings set.
      const tags = Object.fromEntries([...form.elements]
        .filter((i) => i.value.trim() !== i.defaultValue.trim())
        .map((i) => [i.name, i.value.trim()]));
      if (!Object.keys(tags).length) return done();
      const said = Object.entries(tags).map(([k, v]) => `${k} ${v || '(removed)'}`).join(', ');
      if (!confirm(`Board ${name}: ${said}? This changes the game on it and its next games.`)) return;
      done();
      await send({ board: name, command: 'set_tags', tags }, `${name}: players`, bridgeOf(name));
    };
    tr.querySelector('.save').addEventListener('click', save);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      save();
    });
  }

  // Sends a command through the daemon (signed there) and shows its answer:
  // done, or refused and why, per board as the daemon says it.
  async function send(request, what, to = bridge) {
    const li = document.createElement('li');
    li.dataset.status = 'sent';
    li.dataset.bridge = to;
    li.textContent = `${what}: sent…`;
    $('round-replies').prepend(li);
    let status, reason;
    try {
      const response = await post('/api/command', { ...request, bridge: to });
      const type = response.headers.get('Content-Type') || '';
      ({ status, reason } = type.startsWith('application/json') ? await response.json() : { status: 'refused', reason: await response.text() });
    } catch {
      [status, reason] = ['no_answer', 'the daemon cannot be reached'];
    }
    show(li, what, status, reason);
    return status;
  }

  // A round for every bridge of the hall: one signed command each, sent
  // together; each bridge's answer under one line that says which applied
  // it and which did not. A bridge known gone is not waited for: it missed
  // the round, and Next round (or Start round) sends it again when it is
  // back (a bridge already in the round changes nothing).
  async function sendAll(request, what) {
    const to = allBridges();
    if (to.length < 2) return send(request, what);
    const li = document.createElement('li');
    li.dataset.status = 'sent';
    li.className = 'hall-round';
    li.textContent = `${what}: sent to ${to.join(', ')}…`;
    $('round-replies').prepend(li);
    const answers = await Promise.all(to.map(async (id) => {
      const gone = hall().gone(id);
      if (gone) return { id, status: 'no_answer', reason: `${gone}: it missed this round; send it again when it is back` };
      try {
        const response = await post('/api/command', { ...request, bridge: id });
        const type = response.headers.get('Content-Type') || '';
        const a = type.startsWith('application/json') ? await response.json() : { status: 'refused', reason: await response.text() };
        return { id, ...a };
      } catch {
        return { id, status: 'no_answer', reason: 'the daemon cannot be reached' };
      }
    }));
    const applied = answers.filter((a) => a.status === 'done').map((a) => a.id);
    const refused = answers.filter((a) => a.status === 'refused').map((a) => a.id);
    const silent = answers.filter((a) => a.status !== 'done' && a.status !== 'refused').map((a) => a.id);
    const status = applied.length === answers.length ? 'done' : 'partly';
    li.dataset.status = status;
    li.classList.toggle('refused', status !== 'done');
    const said = [`applied by ${applied.join(', ') || 'no bridge'}`];
    if (refused.length) said.push(`refused by ${refused.join(', ')}`);
    if (silent.length) said.push(`no answer from ${silent.join(', ')}`);
    li.innerHTML = `<strong>${B.esc(what)}: ${B.esc(said.join('; '))}</strong>`;
    const list = document.createElement('ul');
    // Each bridge names the pairings it has no board for, which in a hall
    // are mostly the other bridges' boards: only those no bridge that
    // applied the round has are said, once.
    const unplaced = applied.length
      ? answers.filter((a) => a.status === 'done').map((a) => {
        const m = /no board here for the pairings of board\(s\) ([\d, ]+)/.exec(a.reason || '');
        return new Set(m ? m[1].split(',').map((n) => n.trim()) : []);
      }).reduce((x, y) => new Set([...x].filter((n) => y.has(n))))
      : new Set();
    for (const a of answers) {
      const item = document.createElement('li');
      item.dataset.bridge = a.id;
      const reason = String(a.reason || '').replace(/(; )?no board here for the pairings of board\(s\) [\d, ]+$/, '');
      show(item, `bridge ${a.id}`, a.status, reason);
      list.append(item);
    }
    if (unplaced.size) {
      const item = document.createElement('li');
      item.className = 'unplaced';
      item.textContent = `no board in the hall for the pairings of board(s) ${[...unplaced].join(', ')}`;
      list.append(item);
    }
    li.append(list);
    return status;
  }

  // One bridge's answer in `li`: done, refused or no answer, and the
  // bridge's words per board.
  function show(li, what, status, reason) {
    li.dataset.status = status;
    li.classList.toggle('refused', status !== 'done');
    const word = { done: 'done', refused: 'refused', no_answer: 'no answer' }[status] ?? status;
    li.innerHTML = `<strong>${B.esc(what)}: ${B.esc(word)}</strong>`;
    // A `*` command's answer is one part per board (`b1: …`), `; `
    // between, and the pairings no board has; a board's own part may hold
    // `; ` too.
    const parts = document.createElement('ul');
    const starts = hallBoards().map((b) => `${b.name}: `).concat(['no board here']);
    const said = [];
    for (const piece of String(reason || '').split('; ').filter(Boolean)) {
      if (!said.length || starts.some((s) => piece.startsWith(s))) said.push(piece);
      else said[said.length - 1] += `; ${piece}`;
    }
    for (const part of said) {
      const item = document.createElement('li');
      item.textContent = part;
      item.classList.toggle('refused', /: refused:/.test(part));
      item.classList.toggle('unplaced', part.startsWith('no board here'));
      parts.append(item);
    }
    li.append(parts);
  }

  // The uploaded file's preview for `round` (or the file's last round).
  async function ask(round) {
    const problem = $('pairings-problem');
    let answer;
    try {
      const response = await post('/api/pairings', { text: fileText, round: round || null });
      answer = await response.json();
      answer.ok = response.ok;
    } catch {
      answer = { ok: false, error: 'the daemon cannot be reached' };
    }
    if (!answer.ok) {
      preview = answer.rounds ? { ...answer, pairings: null } : null;
      $('preview').hidden = true;
      problem.hidden = false;
      problem.dataset.line = answer.line ?? '';
      problem.textContent = answer.line != null
        ? `The pairings file, line ${answer.line}: ${answer.problem}. Nothing was sent.`
        : `The pairings file: ${answer.problem || answer.error}. Nothing was sent.`;
      return null;
    }
    problem.hidden = true;
    preview = answer;
    showPreview(answer);
    // The hall's Assign offers these board numbers and players.
    window.dispatchEvent(new CustomEvent('boardcast:pairings', { detail: answer }));
    return answer;
  }

  function showPreview(p) {
    const form = $('pairings-form');
    if (p.round) form.round.value = p.round;
    else if (!form.round.value) form.round.value = String((numeric(currentRound()) ?? 0) + 1);
    const round = form.round.value;
    const kind = p.format === 'trf' ? 'a FIDE tournament report (TRF16)' : 'a CSV';
    const rounds = p.rounds.length ? `rounds ${p.rounds.join(', ')}` : 'one round, its number not given';
    $('preview-summary').textContent = `${kind} with ${rounds}; round ${round}, ${p.pairings.length} pairings. Nothing changes until you start the round.`;
    drawPlacement(p);
    $('start-round').textContent = `Start round ${round}`;
    $('preview').hidden = false;
  }

  // The preview's pairings and where they go. Drawn again whenever the
  // hall's boards change while the preview is open (a board assigned from
  // the pairings takes its pairing at once, not at the next upload).
  function drawPlacement(p) {
    place(p);
    const player = (x) => [x.title, x.name, x.elo && `(${x.elo})`, x.fed].filter(Boolean).join(' ');
    $('preview-pairings').querySelector('tbody').innerHTML = p.pairings
      .map((row) => `<tr data-board="${B.esc(row.board)}" class="${row.on ? '' : 'unplaced'}"><td>${B.esc(row.board)}</td>
        <td class="on">${B.esc(row.on || 'no board here')}</td><td class="white">${B.esc(player(row.white))}</td>
        <td class="black">${B.esc(player(row.black))}</td></tr>`)
      .join('');
    const left = [];
    if (p.boards_without_pairing.length) left.push(`boards here without a pairing (they keep their players): ${p.boards_without_pairing.join(', ')}`);
    if (p.pairings_without_board.length) left.push(`pairings of boards not here: ${p.pairings_without_board.join(', ')}`);
    $('preview-left-over').textContent = left.join('; ');
  }

  // The preview's pairings placed on every board of the hall (the daemon
  // knows only its own): each pairing's board, with its bridge.
  function place(p) {
    const boards = hallBoards();
    for (const row of p.pairings) {
      const on = boards.filter((b) => b.number === row.board);
      row.on = on.length ? on.map((b) => (allBridges().length > 1 ? `${b.name} (${b.bridge})` : b.name)).join(', ') : null;
    }
    const paired = p.pairings.map((row) => row.board);
    p.boards_without_pairing = boards.filter((b) => !paired.includes(b.number)).map((b) => b.name);
    p.pairings_without_board = paired.filter((n) => !boards.some((b) => b.number === n));
  }

  // Starts `round` with the preview's pairings: the command the preview
  // made, as `ctl next-round N --pairings FILE` sends it.
  async function start(p, round) {
    const count = hallBoards().length;
    const where = allBridges().join(', ');
    if (!confirm(`Start round ${round} on the ${count} board(s) of ${where}? The games on them are closed and their players set from the pairings.`)) return;
    // Started: the preview is put away so that it is not started twice;
    // the file stays for Next round.
    if ((await sendAll({ ...p.command, round }, `round ${round}`)) === 'done') $('preview').hidden = true;
  }

  $('pairings-form').file.addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    fileText = await file.text();
    $('pairings-form').round.value = '';
    await ask(null);
  });
  // A round typed by the operator (not one a preview filled in) is the
  // round Next round starts: a round named otherwise than by a number
  // ("5b", a play-off) has no other way.
  let typed = false;
  $('pairings-form').round.addEventListener('input', () => { typed = true; });
  $('pairings-form').round.addEventListener('change', (e) => {
    if (fileText != null) ask(e.target.value.trim());
  });
  $('pairings-form').addEventListener('submit', (e) => e.preventDefault());
  $('start-round').addEventListener('click', () => {
    if (preview?.pairings) start(preview, $('pairings-form').round.value.trim());
  });
  $('next-round').addEventListener('click', async () => {
    const now = numeric(currentRound());
    const asked = typed ? $('pairings-form').round.value.trim() : '';
    typed = false;
    if (now == null && !asked) {
      $('pairings-problem').hidden = false;
      $('pairings-problem').textContent = `The boards play round ${currentRound()}, not a number: type the next round in Round.`;
      return;
    }
    const next = asked || String(now + 1);
    $('pairings-form').round.value = next;
    if (fileText != null && preview?.rounds?.includes(next)) {
      const p = await ask(next);
      if (p) await start(p, next);
      return;
    }
    if (!confirm(`The uploaded pairings have no round ${next}: start round ${next} without pairings? The boards keep their players.`)) return;
    await sendAll({ board: '*', command: 'next_round', round: next }, `round ${next}`);
  });

  // The delivery: the PGN address of the round the boards play now (it
  // switches with the round; served once its first game is public, the
  // public delay behind the boards), earlier rounds' below, each with a
  // copy button; and the lichess push per round, as the daemon keeps it.
  let lastTournament = tournament;
  async function delivery() {
    try {
      lastTournament = await (await fetch('/api/tournament', { credentials: 'same-origin', cache: 'no-store' })).json();
    } catch {
      // Shown as it was.
    }
    const t = lastTournament;
    // This daemon's boards as they are now: a board assigned since the
    // page opened is listed too.
    if (t.boards) {
      tournament = { ...tournament, boards: t.boards };
      boardsTable();
    }
    const link = (path, served) => {
      const url = new URL(path, location.href).href;
      const note = served ? '' : ' <small>(not served yet: once its first game is public)</small>';
      return `<a href="${B.esc(url)}">${B.esc(url)}</a>${note} <button type="button" class="copy" data-url="${B.esc(url)}">Copy</button>`;
    };
    const now = [...new Set([...states.values()].map((s) => `/pgn/${s.event}/round-${s.round}/games.pgn`))].sort();
    const items = now.map((path) => `<li class="pgn current" data-round-path="${B.esc(path)}">Round now: ${link(path, t.pgn.includes(path))}</li>`);
    const earlier = t.pgn.filter((path) => !now.includes(path));
    if (!now.length && !earlier.length) items.push('<li>No PGN served yet (a round appears here once its first game is public).</li>');
    for (const path of now.length ? earlier : t.pgn) items.push(`<li class="pgn${now.length ? ' earlier' : ''}">${link(path, true)}</li>`);
    const report = t.lichess || { rounds: {} };
    if (report.token_refused) {
      items.push(`<li class="lichess token-refused refused">lichess: token refused (${B.esc(report.token_refused)}) at ${B.esc(when(report.token_refused_ms))}: make a new token with study:write and write it to the token file; nothing is pushed until then (the bridge notices say more)</li>`);
    }
    for (const [round, id] of Object.entries(t.lichess_rounds || {})) {
      const r = report.rounds?.[id];
      const said = [];
      if (!r || r.last_push_ms == null) said.push('not pushed yet');
      else said.push(`last push ${when(r.last_push_ms)}`, `${r.games_accepted} game(s) accepted`);
      if (r?.games_refused) said.push(`${r.games_refused} refused in the last push`);
      if (r?.retrying) said.push(`failing for now (${r.retrying}), tried again`);
      const refusals = (r?.refusals || []).map((x) => `<li>${B.esc(x)}</li>`).join('');
      items.push(`<li class="lichess" data-id="${B.esc(id)}">lichess: round ${B.esc(round)} → broadcast round ${B.esc(id)}: <span class="said">${B.esc(said.join(', '))}</span>${
        refusals ? `<details><summary>${B.esc(r.refusals_told)} refusal(s)</summary><ul class="refusals">${refusals}</ul></details>` : ''}</li>`);
    }
    $('delivery').innerHTML = items.join('');
  }
  const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : '');
  $('delivery').addEventListener('click', async (e) => {
    const button = e.target.closest('button.copy');
    if (!button) return;
    try {
      await navigator.clipboard.writeText(button.dataset.url);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy by hand';
    }
  });

  facts();
  boardsTable();
  delivery();
  setInterval(delivery, 5000);
  await B.connect(cfg, 'live', [`${root}/live/+/+/+/state`], (t, m) => {
    if (m.board) labels.set(m.board, t.split('/').at(-2));
    // The newest state wins, whatever its round: each round's state is
    // retained on its own topic, and after a restart the old rounds' come
    // back too, in no particular order.
    const shown = states.get(m.board);
    if (shown && (m.ts_ms ?? 0) < (shown.ts_ms ?? 0)) return;
    const moved = !shown || shown.round !== m.round || shown.event !== m.event;
    states.set(m.board, m);
    facts();
    boardsTable();
    if (moved) delivery();
  }, () => {});
})();
