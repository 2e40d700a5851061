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
