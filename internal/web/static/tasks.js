// Switchboard console, Tasks page: "Fetch result" waits for the task's
// result as a tracked call (POST /ui/api/tasks/result), so that what the
// server asks meanwhile (a task that is input_required) is asked in this
// page by asks.js, as during a tool call; when the result comes, the page
// shows it (the call's view). Without script the button posts the form.
'use strict';
(function () {
  const root = document.getElementById('tryit');
  const waiting = document.getElementById('task-waiting');
  if (!root || !window.sb) return;
  const sb = window.sb;
  let timer = null;

  sb.onEvent('call', function (d) {
    if (!d || d.id !== root.dataset.current || !d.done) return;
    if (timer) clearInterval(timer);
    window.location.href = d.view;
  });

  document.querySelectorAll('button[data-op="result"]').forEach(function (b) {
    b.addEventListener('click', async function (ev) {
      ev.preventDefault();
      const form = b.closest('form');
      const task = form.querySelector('input[name="task"]').value;
      b.disabled = true;
      waiting.textContent = 'Waiting for the result of task ' + task + '\u2026 A question the server asks meanwhile appears here.';
      const r = await sb.api('POST', '/ui/api/tasks/result', { server: root.dataset.server, task });
      if (!r.ok) {
        b.disabled = false;
        waiting.textContent = sb.faultText(r.data || {});
        return;
      }
      root.dataset.current = r.data.id;
      sb.dispatch('call', r.data);
      // The event stream carries the call's state; polling is the
      // fallback when it is down.
      timer = setInterval(async function () {
        const s = await sb.api('GET', '/ui/api/calls/' + encodeURIComponent(r.data.id));
        if (s.ok) sb.dispatch('call', s.data);
      }, 2000);
    });
  });
})();

// Following the listed tasks: while one has not ended, its status is
// asked again (GET /ui/api/tasks/status) as often as the server's
// pollInterval says (never more than once a second; every 2 s when the
// server suggests nothing), and a "task" event (the server's own
// notifications/tasks/status, passed on by the daemon) shows a change at
// once. Following stops when every task has ended, and pauses while the
// page is hidden.
(function () {
  const root = document.getElementById('tryit');
  if (!root || !window.sb) return;
  const sb = window.sb;
  const server = root.dataset.server;
  const minPoll = 1000, defaultPoll = 2000, maxBackoff = 30000;
  const due = new Map();      // task id -> when to ask next (ms)
  const inflight = new Set(); // task ids being asked
  const backoff = new Map();  // task id -> wait after a failed ask
  let timer = null;

  const ended = function (s) { return s === 'completed' || s === 'failed' || s === 'cancelled'; };
  const elementsOf = function (id) {
    return document.querySelectorAll('[data-task="' + CSS.escape(id) + '"]');
  };
  const pending = function () {
    return Array.from(document.querySelectorAll('#tasks tr[data-task]')).filter(function (tr) {
      return !ended(tr.dataset.status);
    });
  };
  const intervalOf = function (tr) {
    const p = Number(tr.dataset.poll);
    return Math.max(p > 0 ? p : defaultPoll, minPoll);
  };

  // show puts a task's state in its row (and the state paragraph); a
  // task that has ended stays ended, whatever a late answer says.
  function show(t) {
    let changed = '';
    elementsOf(t.taskId).forEach(function (el) {
      if (ended(el.dataset.status)) return;
      if (el.dataset.status !== t.status) changed = t.status;
      el.dataset.status = t.status;
      if (t.pollInterval > 0) el.dataset.poll = String(t.pollInterval);
      const badge = el.querySelector('[data-field="status"]');
      if (badge) {
        badge.textContent = t.status;
        badge.className = 'badge status-' + t.status;
      }
      const msg = el.querySelector('[data-field="statusMessage"]');
      if (msg) msg.textContent = t.statusMessage || '';
      const up = el.querySelector('[data-field="lastUpdatedAt"]');
      if (up && t.lastUpdatedAt) up.textContent = t.lastUpdatedAt;
    });
    if (changed) sb.announce('Task ' + t.taskId + ' is ' + changed + (t.statusMessage ? ': ' + t.statusMessage : '') + '.');
  }

  async function ask(tr) {
    const id = tr.dataset.task;
    inflight.add(id);
    const r = await sb.api('GET', '/ui/api/tasks/status?server=' + encodeURIComponent(server) + '&task=' + encodeURIComponent(id));
    inflight.delete(id);
    if (r.ok && r.data) {
      backoff.delete(id);
      show(r.data);
      due.set(id, Date.now() + intervalOf(tr));
    } else {
      // Say why, and ask again later, less often (the daemon may be
      // restarting).
      const msg = tr.querySelector('[data-field="statusMessage"]');
      if (msg) msg.textContent = sb.faultText(r.data);
      const wait = Math.min((backoff.get(id) || intervalOf(tr)) * 2, maxBackoff);
      backoff.set(id, wait);
      due.set(id, Date.now() + wait);
    }
    schedule();
  }

  // tick asks about every task that is due, then sleeps until the next.
  function tick(all) {
    timer = null;
    if (document.hidden) return;
    const now = Date.now();
    pending().forEach(function (tr) {
      const id = tr.dataset.task;
      if (inflight.has(id)) return;
      if (all || !due.has(id) || due.get(id) <= now) ask(tr);
    });
    schedule();
  }

  function schedule() {
    if (timer) clearTimeout(timer);
    timer = null;
    if (document.hidden) return;
    let next = Infinity;
    pending().forEach(function (tr) {
      if (!inflight.has(tr.dataset.task)) next = Math.min(next, due.get(tr.dataset.task) || Date.now());
    });
    if (next === Infinity) return; // every task has ended, or is being asked
    timer = setTimeout(function () { tick(false); }, Math.max(next - Date.now(), 0));
  }

  sb.onEvent('task', function (d) {
    if (!d || d.server !== server || !d.taskId) return;
    show(d);
    schedule();
  });
  // The stream (re)opened: catch up with what changed meanwhile.
  sb.onEvent('hello', function () { tick(true); });
  document.addEventListener('visibilitychange', function () {
    if (document.hidden) {
      if (timer) clearTimeout(timer);
      timer = null;
    } else {
      tick(true);
    }
  });
  // The first ask waits one interval: the page was just rendered.
  pending().forEach(function (tr) { due.set(tr.dataset.task, Date.now() + intervalOf(tr)); });
  schedule();
})();
