// Switchboard console: resource subscriptions and the protocol log. Text
// from the daemon is set with textContent only.
'use strict';
(function () {
  const sb = window.sb;
  if (!sb) return;

  // The resource page: subscribe, and show each update as it arrives.
  const sub = document.getElementById('subscription');
  if (sub) {
    const server = sub.dataset.server, uri = sub.dataset.resource;
    const subBtn = document.getElementById('subscribe-button');
    const unsubBtn = document.getElementById('unsubscribe-button');
    const status = document.getElementById('sub-status');
    const list = document.getElementById('updates');
    async function change(unsubscribe) {
      subBtn.disabled = unsubBtn.disabled = true;
      const r = await sb.api('POST', '/ui/api/subscriptions', { server, uri, unsubscribe });
      subBtn.disabled = unsubBtn.disabled = false;
      if (!r.ok) {
        status.textContent = sb.faultText(r.data);
        return;
      }
      subBtn.hidden = !unsubscribe;
      unsubBtn.hidden = unsubscribe;
      status.textContent = unsubscribe ? 'Not subscribed.' : 'Subscribed: updates appear below as they arrive.';
      (unsubscribe ? subBtn : unsubBtn).focus();
    }
    subBtn.addEventListener('click', function () { change(false); });
    unsubBtn.addEventListener('click', function () { change(true); });
    sb.onEvent('resource', function (d) {
      if (d.server !== server || d.uri !== uri) return;
      const li = document.createElement('li');
      const t = document.createElement('time');
      t.textContent = d.time;
      li.appendChild(t);
      li.appendChild(document.createTextNode(' '));
      const body = document.createElement(d.error ? 'span' : 'code');
      if (d.error) body.className = 'error-text';
      body.textContent = d.error ? 'reading it again failed: ' + d.error : (d.text || '(empty)');
      li.appendChild(body);
      list.insertBefore(li, list.firstChild);
      sb.announce('Resource updated.');
    });
  }

  // The protocol log page: new messages arrive over the event stream.
  const log = document.getElementById('protocol-log');
  if (log) {
    const follow = document.getElementById('follow');
    const status = document.getElementById('protocol-status');
    let last = 0;
    log.querySelectorAll('li[data-seq]').forEach(function (li) { last = Math.max(last, Number(li.dataset.seq)); });
    function add(e) {
      if (e.seq <= last) return;
      last = e.seq;
      const li = document.createElement('li');
      li.className = 'msg dir-' + e.dir + ' kind-' + e.kind;
      li.dataset.seq = String(e.seq);
      const det = document.createElement('details');
      const sum = document.createElement('summary');
      const arrow = document.createElement('span');
      arrow.className = 'arrow';
      arrow.textContent = e.dir === 'out' ? '→' : '←';
      arrow.setAttribute('aria-label', e.dir === 'out' ? 'sent' : 'received');
      const time = document.createElement('time');
      time.textContent = e.time;
      const kind = document.createElement('span');
      kind.className = 'badge';
      kind.textContent = e.kind;
      const method = document.createElement('code');
      method.className = 'method';
      method.textContent = e.method || '';
      sum.append(arrow, ' ', time, ' ', kind, ' ', method);
      if (e.id) {
        const id = document.createElement('span');
        id.className = 'muted';
        id.textContent = ' id ' + e.id;
        sum.appendChild(id);
      }
      const pre = document.createElement('pre');
      pre.className = 'json';
      pre.dataset.fold = '';
      pre.textContent = e.json;
      det.append(sum, pre);
      li.appendChild(det);
      log.appendChild(li);
      sb.foldAll(li);
      if (follow.checked) li.scrollIntoView({ block: 'nearest' });
    }
    sb.onEvent('protocol', add);
    sb.onEvent('hello', async function () {
      const r = await sb.api('GET', '/ui/api/protocol');
      if (r.ok && r.data) (r.data.entries || []).forEach(add);
    });
    document.getElementById('ping-button').addEventListener('click', async function () {
      const r = await sb.api('POST', '/ui/api/protocol/ping');
      status.textContent = r.ok ? 'Session open; ping answered.' : sb.faultText(r.data);
    });
  }
})();
