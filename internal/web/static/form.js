// Switchboard console: the "Try it" form of a tool page. It builds a form
// from the tool's JSON Schema, validates it with the engine's rules (the
// daemon validates again), starts the call, follows its progress and lets
// the user cancel it. Names and descriptions from the MCP server are set
// with textContent only.
'use strict';
(function () {
  const root = document.getElementById('tryit');
  if (!root || !window.sb) return;
  const sb = window.sb;
  let schemaRoot = {};
  try { schemaRoot = JSON.parse(root.dataset.schema || '{}'); } catch (e) { schemaRoot = {}; }
  let initialArgs = {};
  try { initialArgs = JSON.parse(root.dataset.args || '{}'); } catch (e) { initialArgs = {}; }

  const form = document.getElementById('call-form');
  const fieldsEl = document.getElementById('form-fields');
  const rawWrap = document.getElementById('raw-wrap');
  const raw = document.getElementById('raw-json');
  const rawToggle = document.getElementById('raw-toggle');
  const errorsEl = document.getElementById('form-errors');
  const callBtn = document.getElementById('call-button');
  const panel = document.getElementById('progress-panel');
  const progress = document.getElementById('call-progress');
  const progressText = document.getElementById('progress-text');
  const cancelBtn = document.getElementById('cancel-button');

  const F = sb.schemaForm(schemaRoot);
  const build = F.build, isObject = F.isObject;

  const rootEditor = build(isObject(schemaRoot) ? schemaRoot : {}, '', 'arguments', true, false);
  fieldsEl.appendChild(rootEditor.el);
  if (isObject(initialArgs) && Object.keys(initialArgs).length) rootEditor.set(initialArgs);

  let rawMode = false;

  function clearErrors() { F.clearErrors(errorsEl); }

  // showErrors marks each problem at its field (not in JSON mode), lists
  // them all at the top and moves the focus to the first.
  function showErrors(errs, heading) {
    F.showErrors(errorsEl, errs, heading || 'Fix these before calling:', '(arguments)', !rawMode);
  }

  function currentArgs() {
    if (rawMode) {
      let v;
      try { v = JSON.parse(raw.value.trim() === '' ? '{}' : raw.value); } catch (e) {
        return { problems: [{ path: '', message: 'the arguments are not valid JSON: ' + e.message }] };
      }
      if (!isObject(v)) return { problems: [{ path: '', message: 'the arguments must be a JSON object' }] };
      return { value: v, problems: [] };
    }
    const r = rootEditor.get();
    return { value: r.value || {}, problems: r.problems || [] };
  }

  rawToggle.addEventListener('click', function () {
    clearErrors();
    if (!rawMode) {
      const r = currentArgs();
      raw.value = JSON.stringify(r.value || {}, null, 2);
      rawMode = true;
      fieldsEl.hidden = true;
      rawWrap.hidden = false;
      raw.focus();
    } else {
      const r = currentArgs();
      if (r.problems.length) { showErrors(r.problems); return; }
      rootEditor.set(r.value);
      rawMode = false;
      fieldsEl.hidden = false;
      rawWrap.hidden = true;
    }
    rawToggle.setAttribute('aria-pressed', String(rawMode));
    rawToggle.textContent = rawMode ? 'Edit as form' : 'Edit as JSON';
  });

  // ---- calls ---------------------------------------------------------

  let current = '';
  let poller = 0;

  function showRunning(on) {
    panel.hidden = !on;
    callBtn.disabled = on;
  }

  function update(d) {
    if (!d || d.id !== current) return;
    if (d.done) {
      current = '';
      delete root.dataset.current;
      if (poller) { clearInterval(poller); poller = 0; }
      location.assign(d.view + '#result');
      return;
    }
    const secs = (d.elapsed_ms / 1000).toFixed(1) + ' s';
    const p = d.progress;
    if (p && p.total > 0) {
      progress.max = p.total;
      progress.value = p.processed;
      progressText.textContent = 'Progress ' + p.processed + ' of ' + p.total + (p.message ? ': ' + p.message : '') + ' (' + secs + ')';
    } else if (p) {
      progress.removeAttribute('value');
      progressText.textContent = 'Progress ' + p.processed + (p.message ? ': ' + p.message : '') + ' (' + secs + ')';
    } else {
      progressText.textContent = 'Running… (' + secs + ')';
    }
  }

  async function poll() {
    if (!current) return;
    const r = await sb.api('GET', '/ui/api/calls/' + encodeURIComponent(current));
    if (r.ok) sb.dispatch('call', r.data);
  }

  function track(id) {
    current = id;
    root.dataset.current = id; // asks.js shows this call's questions
    showRunning(true);
    progress.removeAttribute('value');
    poll();
    // The event stream delivers progress at once; this poll covers a
    // stream that is reconnecting.
    poller = setInterval(poll, 1000);
    cancelBtn.focus();
  }

  sb.onEvent('call', update);
  sb.onEvent('hello', poll);

  cancelBtn.addEventListener('click', async function () {
    if (!current) return;
    cancelBtn.disabled = true;
    progressText.textContent = 'Cancelling…';
    const r = await sb.api('POST', '/ui/api/calls/' + encodeURIComponent(current) + '/cancel');
    cancelBtn.disabled = false;
    if (!r.ok) sb.announce(sb.faultText(r.data));
  });

  form.addEventListener('submit', async function (ev) {
    ev.preventDefault();
    clearErrors();
    const args = currentArgs();
    const errs = args.problems.slice();
    if (!errs.length) F.validate(args.value).forEach(function (e) { errs.push(e); });
    if (errs.length) { showErrors(errs); return; }
    callBtn.disabled = true;
    const asTask = document.getElementById('as-task');
    const r = await sb.api('POST', '/ui/api/calls', { server: root.dataset.server, tool: root.dataset.tool, arguments: args.value, task: !!(asTask && asTask.checked) });
    callBtn.disabled = false;
    if (r.status === 202 && r.data) { track(r.data.id); return; }
    const d = r.data || {};
    const fields = d.details && Array.isArray(d.details.fields) ? d.details.fields : [];
    if (fields.length) {
      showErrors(fields.map(function (f) {
        return { path: f.field === '(arguments)' ? '' : f.field, message: f.message };
      }), 'The daemon refused these arguments:');
      return;
    }
    showErrors([{ path: '', message: sb.faultText(d) }], 'The call could not start:');
  });

  if (root.dataset.call && root.dataset.running === 'true') track(root.dataset.call);
})();
