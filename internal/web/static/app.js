// Switchboard console: the event stream, the stop switch and the servers
// page. Every string from the daemon is set with textContent, never as HTML.
'use strict';
(function () {
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : '';
  const handlers = {};

  // api sends a request with the session's CSRF token and returns
  // {ok, status, data} (data is the decoded JSON body, or null).
  async function api(method, path, body) {
    const opts = { method, headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let resp;
    try {
      resp = await fetch(path, opts);
    } catch (e) {
      return { ok: false, status: 0, data: { error_type: 'connection_error', message: 'the daemon cannot be reached: ' + e.message } };
    }
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    return { ok: resp.ok, status: resp.status, data };
  }

  // faultText renders a seed 002 error as one line of text.
  function faultText(d) {
    if (!d) return 'the request failed';
    let s = (d.error_type ? d.error_type + ': ' : '') + (d.message || 'the request failed');
    if (Array.isArray(d.suggestions) && d.suggestions.length) s += ' (' + d.suggestions.join('; ') + ')';
    return s;
  }

  function announce(msg) {
    const el = document.getElementById('announce');
    if (el) el.textContent = msg;
  }

  function onEvent(name, fn) {
    (handlers[name] = handlers[name] || []).push(fn);
  }

  function connect() {
    if (document.body.dataset.page === 'login' || typeof EventSource === 'undefined') return;
    const es = new EventSource('/ui/events');
    ['hello', 'server', 'catalog', 'stop', 'call', 'resource', 'protocol', 'task'].forEach(function (name) {
      es.addEventListener(name, function (ev) {
        let d;
        try { d = JSON.parse(ev.data); } catch (e) { return; }
        (handlers[name] || []).forEach(function (fn) { fn(d); });
      });
    });
  }

  // dispatch hands d to the handlers of event name, as if it had come
  // over the event stream (a page that polled for it).
  function dispatch(name, d) {
    (handlers[name] || []).forEach(function (fn) { fn(d); });
  }

  window.sb = { csrf, api, faultText, announce, onEvent, dispatch };

  // The stop switch.
  const stopBtn = document.getElementById('stop-button');
  const banner = document.getElementById('stopped-banner');
  const resumeBtn = document.getElementById('resume-button');
  function setStopped(stopped) {
    if (banner) banner.hidden = !stopped;
    if (stopBtn) stopBtn.hidden = stopped;
  }
  if (stopBtn) {
    stopBtn.addEventListener('click', async function () {
      stopBtn.disabled = true;
      const r = await api('POST', '/ui/api/stop');
      stopBtn.disabled = false;
      if (r.ok) {
        setStopped(true);
        announce('Stopped: ' + r.data.cancelled + ' calls cancelled.');
        if (resumeBtn) resumeBtn.focus();
      } else {
        announce(faultText(r.data));
      }
    });
  }
  if (resumeBtn) {
    resumeBtn.addEventListener('click', async function () {
      resumeBtn.disabled = true;
      const r = await api('POST', '/ui/api/resume');
      resumeBtn.disabled = false;
      if (r.ok) {
        setStopped(false);
        announce('Resumed: calls run again.');
        if (stopBtn) stopBtn.focus();
      } else {
        announce(faultText(r.data));
      }
    });
  }
  onEvent('stop', function (d) { setStopped(!!d.stopped); });

  // The servers page.
  const table = document.getElementById('servers');
  if (table) {
    let reloading = false;
    const findRow = function (name) {
      for (const tr of table.tBodies[0].rows) {
        if (tr.dataset.server === name) return tr;
      }
      return null;
    };
    const updateBanner = function () {
      const names = [];
      for (const tr of table.tBodies[0].rows) {
        if (tr.classList.contains('state-auto-disabled')) names.push(tr.dataset.server);
      }
      const b = document.getElementById('autodisabled');
      const list = document.getElementById('autodisabled-list');
      if (b && list) {
        list.textContent = names.join(', ');
        b.hidden = names.length === 0;
      }
    };
    const updateRow = function (s) {
      const tr = findRow(s.server);
      if (!tr) {
        // A server added by a reload: render the page again, once.
        if (!reloading) { reloading = true; location.reload(); }
        return;
      }
      tr.querySelectorAll('[data-field]').forEach(function (el) {
        const k = el.dataset.field;
        if (k in s) el.textContent = s[k] === null || s[k] === undefined ? '' : String(s[k]);
      });
      tr.className = 'state-' + s.label;
      const reason = tr.querySelector('[data-field="disabled_reason"]');
      if (reason) reason.hidden = !s.disabled_reason || s.enabled;
      const stderr = tr.querySelector('details.stderr');
      if (stderr) stderr.hidden = !s.stderr;
      const hint = tr.querySelector('[data-field="hint"]');
      if (hint) hint.hidden = !s.hint;
      const enable = tr.querySelector('button[data-action="enable"]');
      if (enable) {
        const label = s.auto_disabled ? 'Re-enable' : 'Enable';
        enable.textContent = label;
        enable.setAttribute('aria-label', label + ' ' + s.server);
        enable.hidden = s.enabled;
      }
      tr.querySelectorAll('button[data-action="disable"], button[data-action="refresh"]').forEach(function (b) { b.hidden = !s.enabled; });
      const signin = tr.querySelector('button[data-action="signin"]');
      if (signin) signin.hidden = !s.sign_in;
      updateBanner();
    };
    table.addEventListener('click', async function (ev) {
      const b = ev.target.closest('button[data-action]');
      if (!b) return;
      const tr = b.closest('tr');
      const errEl = tr.querySelector('.row-error');
      const server = b.dataset.server, action = b.dataset.action;
      b.disabled = true;
      if (errEl) errEl.hidden = true;
      const r = await api('POST', '/ui/api/servers/' + encodeURIComponent(server) + '/' + encodeURIComponent(action));
      b.disabled = false;
      if (r.ok && action === 'signin' && r.data && r.data.url) {
        // The sign-in page opens in a new tab; it comes back to
        // Switchboard, and the row turns connected by itself.
        const w = window.open(r.data.url, '_blank');
        if (w) w.opener = null;
        if (errEl && !w) {
          errEl.textContent = '';
          const a = document.createElement('a');
          a.href = r.data.url; a.target = '_blank'; a.rel = 'noopener';
          a.textContent = 'Open the sign-in page for ' + server;
          errEl.appendChild(a);
          errEl.hidden = false;
        }
        announce(server + ': sign-in page opened.');
      } else if (r.ok) {
        let msg = server + ': ' + action + ' done';
        if (action === 'refresh' && r.data) msg += ' (' + r.data.tools + ' tools)';
        announce(msg + '.');
      } else if (errEl) {
        errEl.textContent = faultText(r.data);
        errEl.hidden = false;
      }
    });
    onEvent('server', updateRow);
    onEvent('catalog', function (d) {
      const tr = findRow(d.server);
      if (!tr) return;
      ['tools', 'prompts', 'resources'].forEach(function (k) {
        const el = tr.querySelector('[data-field="' + k + '"]');
        if (el) el.textContent = String(d[k]);
      });
    });
    // On every (re)connect, catch up with what happened meanwhile.
    onEvent('hello', async function () {
      const r = await api('GET', '/ui/api/servers');
      if (r.ok && r.data) {
        (r.data.servers || []).forEach(updateRow);
        setStopped(!!r.data.stopped);
      }
    });
  }

  // A server's page: its state updates live; enable, disable, refresh.
  const serverState = document.getElementById('server-state');
  if (serverState) {
    const name = serverState.dataset.server;
    const historyList = document.getElementById('state-history');
    let lastLabel = '';
    const apply = function (s) {
      if (s.server !== name) return;
      document.querySelectorAll('[data-field]').forEach(function (el) {
        const k = el.dataset.field;
        if (k in s) el.textContent = s[k] === null || s[k] === undefined ? '' : String(s[k]);
      });
      const label = serverState.querySelector('[data-field="label"]');
      if (label) label.className = 'badge state state-' + s.label;
      const reason = serverState.querySelector('[data-field="disabled_reason"]');
      if (reason) reason.hidden = !s.disabled_reason || s.enabled;
      const hint = serverState.querySelector('[data-field="hint"]');
      if (hint) hint.hidden = !s.hint;
      const enable = serverState.querySelector('button[data-action="enable"]');
      if (enable) { enable.textContent = s.auto_disabled ? 'Re-enable' : 'Enable'; enable.hidden = s.enabled; }
      serverState.querySelectorAll('button[data-action="disable"], button[data-action="refresh"]').forEach(function (b) { b.hidden = !s.enabled; });
      const signin = serverState.querySelector('button[data-action="signin"]');
      if (signin) signin.hidden = !s.sign_in;
      if (historyList && s.label !== lastLabel && lastLabel !== '') {
        const li = document.createElement('li');
        const t = document.createElement('time');
        t.textContent = new Date().toISOString().replace('T', ' ').slice(0, 19);
        const b = document.createElement('span');
        b.className = 'badge';
        b.textContent = s.label;
        li.append(t, ' ', b, ' ', s.status || '');
        historyList.insertBefore(li, historyList.firstChild);
      }
      lastLabel = s.label;
    };
    const initial = serverState.querySelector('[data-field="label"]');
    lastLabel = initial ? initial.textContent : '';
    onEvent('server', apply);
    onEvent('hello', async function () {
      const r = await api('GET', '/ui/api/servers');
      if (r.ok && r.data) (r.data.servers || []).forEach(apply);
    });
    const errEl = document.getElementById('action-error');
    serverState.addEventListener('click', async function (ev) {
      const b = ev.target.closest('button[data-action]');
      if (!b) return;
      b.disabled = true;
      errEl.hidden = true;
      const r = await api('POST', '/ui/api/servers/' + encodeURIComponent(name) + '/' + encodeURIComponent(b.dataset.action));
      b.disabled = false;
      if (r.ok && b.dataset.action === 'signin' && r.data && r.data.url) {
        const w = window.open(r.data.url, '_blank');
        if (w) {
          w.opener = null;
        } else {
          errEl.textContent = '';
          const a = document.createElement('a');
          a.href = r.data.url; a.target = '_blank'; a.rel = 'noopener';
          a.textContent = 'Open the sign-in page for ' + name;
          errEl.appendChild(a);
          errEl.hidden = false;
        }
        announce(name + ': sign-in page opened.');
      } else if (r.ok) {
        announce(name + ': ' + b.dataset.action + ' done.');
      } else {
        errEl.textContent = faultText(r.data);
        errEl.hidden = false;
      }
    });
  }

  // Copy buttons: data-copy holds the text (set by the template, so it is
  // exactly what the page shows). The clipboard API needs a secure
  // context (loopback counts); elsewhere the text is selected and copied
  // the old way.
  document.addEventListener('click', async function (ev) {
    const b = ev.target.closest('button.copy');
    if (!b) return;
    // data-copy holds the text; data-copy-pre copies the text of the pre
    // beside the button (large results are not held twice in the page).
    let text = b.dataset.copy || '';
    if (b.hasAttribute('data-copy-pre')) {
      const scope = b.closest('.copyscope');
      const pre = scope && scope.querySelector('pre');
      text = pre ? pre.textContent : '';
    }
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch (e) { ok = false; }
    if (!ok) {
      const ta = document.createElement('textarea');
      ta.value = text;
      ta.setAttribute('readonly', '');
      ta.className = 'offscreen';
      document.body.appendChild(ta);
      ta.select();
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      ta.remove();
    }
    const label = b.dataset.label || b.textContent;
    b.dataset.label = label;
    b.textContent = ok ? 'Copied' : 'Copy failed: select the text';
    announce(ok ? 'Copied to the clipboard.' : 'Copying failed; select the text and copy it.');
    setTimeout(function () { b.textContent = label; }, 1500);
  });

  // JSON folding: each pre.json[data-fold] gets a tree view whose objects
  // and arrays fold (details/summary, so the keyboard and screen readers
  // know them), and a button to switch to the text. Built with DOM calls
  // and textContent only.
  const foldLimit = 5000; // nodes; past this the text stays
  function jsonTree(v, depth, budget) {
    budget.n++;
    if (v !== null && typeof v === 'object') {
      const isArr = Array.isArray(v);
      const keys = isArr ? v.map(function (_, i) { return i; }) : Object.keys(v);
      const d = document.createElement('details');
      d.open = depth < 2;
      const sum = document.createElement('summary');
      sum.textContent = isArr ? '[…] ' + keys.length + (keys.length === 1 ? ' item' : ' items')
        : '{…} ' + keys.length + (keys.length === 1 ? ' key' : ' keys');
      d.appendChild(sum);
      const ul = document.createElement('ul');
      keys.forEach(function (k) {
        if (budget.n > foldLimit) return;
        const li = document.createElement('li');
        const key = document.createElement('span');
        key.className = 'jkey';
        key.textContent = isArr ? String(k) : JSON.stringify(k);
        li.appendChild(key);
        li.appendChild(document.createTextNode(': '));
        li.appendChild(jsonTree(v[k], depth + 1, budget));
        ul.appendChild(li);
      });
      d.appendChild(ul);
      return d;
    }
    const span = document.createElement('span');
    span.className = 'j' + (v === null ? 'null' : typeof v);
    span.textContent = JSON.stringify(v);
    return span;
  }
  function foldAll(root) {
    root.querySelectorAll('pre.json[data-fold]').forEach(function (pre) {
      if (pre.dataset.folded) return;
      pre.dataset.folded = '1';
      let v;
      try { v = JSON.parse(pre.textContent); } catch (e) { return; }
      if (v === null || typeof v !== 'object') return;
      const budget = { n: 0 };
      const tree = document.createElement('div');
      tree.className = 'jsontree';
      tree.appendChild(jsonTree(v, 0, budget));
      if (budget.n > foldLimit) return;
      const toggle = document.createElement('button');
      toggle.type = 'button';
      toggle.className = 'fold-toggle';
      toggle.textContent = 'Show as text';
      toggle.setAttribute('aria-pressed', 'false');
      toggle.addEventListener('click', function () {
        const text = pre.hidden;
        pre.hidden = !text;
        tree.hidden = text;
        toggle.textContent = text ? 'Show as tree' : 'Show as text';
        toggle.setAttribute('aria-pressed', text ? 'true' : 'false');
      });
      pre.hidden = true;
      pre.parentNode.insertBefore(tree, pre);
      pre.parentNode.insertBefore(toggle, tree);
    });
  }
  foldAll(document);

  window.sb.foldAll = foldAll;
  connect();
})();
