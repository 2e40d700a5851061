// Switchboard console: what a server asks during a call started from the
// page — a form, a URL to open, a completion by the model — shown in the
// page of that call, in place, and answered there. The questions arrive
// in the call's state over the event stream; each answer is posted to
// the call's own question. Nothing navigates by itself: a URL opens only
// from its link, in a new tab. Every string from the server is set with
// textContent.
'use strict';
(function () {
  const root = document.getElementById('tryit');
  const box = document.getElementById('asks');
  if (!root || !box || !window.sb || !window.sb.schemaForm) return;
  const sb = window.sb;
  const shown = {}; // question id -> its pane
  const versions = {}; // call id -> the newest asks_version seen

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function button(text, cls, fn) {
    const b = el('button', cls, text);
    b.type = 'button';
    b.addEventListener('click', fn);
    return b;
  }

  sb.onEvent('call', function (d) {
    if (!d) return;
    // A call's questions are shown while the page follows it; when it
    // ends they are gone (form.js may have stopped following it first).
    if (d.id !== root.dataset.current && !d.done) return;
    // A poll answered late carries an older state than the event stream
    // gave: it is ignored.
    if (!d.done && (versions[d.id] || 0) > d.asks_version) return;
    versions[d.id] = d.asks_version;
    const live = {};
    (d.done ? [] : (d.asks || [])).forEach(function (a) {
      live[a.id] = true;
      if (!shown[a.id]) show(d.id, a);
    });
    Object.keys(shown).forEach(function (id) {
      if (shown[id].dataset.call === d.id && !live[id]) withdraw(id);
    });
  });

  // withdraw removes a question's pane: answered, or its call ended.
  function withdraw(id) {
    const pane = shown[id];
    delete shown[id];
    const hadFocus = pane.contains(document.activeElement);
    pane.remove();
    if (hadFocus) {
      const next = box.querySelector('.ask h2');
      const cancel = document.getElementById('cancel-button');
      if (next) next.focus();
      else if (cancel && !cancel.closest('[hidden]')) cancel.focus();
    }
  }

  // show builds the pane of question a of call, and moves the focus to
  // it.
  function show(call, a) {
    const pane = el('section', 'ask');
    pane.dataset.ask = a.id;
    pane.dataset.call = call;
    pane.dataset.kind = a.kind;
    const h = el('h2', '', heading(a));
    h.id = 'ask-h-' + a.id;
    h.tabIndex = -1;
    pane.setAttribute('aria-labelledby', h.id);
    pane.appendChild(h);
    if (a.message) pane.appendChild(el('p', 'ask-message', a.message));
    const errs = el('div', 'fault');
    errs.setAttribute('role', 'alert');
    errs.hidden = true;
    const status = el('p', 'muted');
    status.setAttribute('role', 'status');
    const buttons = el('div', 'buttons');
    let busy = false;

    // send posts an answer; the pane stays, saying so, until the
    // question leaves the call's state.
    async function send(action, content, sending) {
      if (busy) return;
      busy = true;
      errs.hidden = true;
      buttons.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
      const body = { action };
      if (content !== undefined) body.content = content;
      const r = await sb.api('POST', '/ui/api/calls/' + encodeURIComponent(call) + '/asks/' + encodeURIComponent(a.id), body);
      busy = false;
      if (r.ok) {
        status.textContent = sending || 'Answer sent.';
        return;
      }
      buttons.querySelectorAll('button').forEach(function (b) { b.disabled = false; });
      const d = r.data || {};
      const fields = d.details && Array.isArray(d.details.fields) ? d.details.fields : [];
      if (fields.length && pane.form) {
        pane.form.show(fields.map(function (f) { return { path: f.field === '(arguments)' ? '' : f.field, message: f.message }; }), 'The daemon refused this answer:');
        return;
      }
      errs.textContent = sb.faultText(d);
      errs.hidden = false;
      errs.focus();
    }

    switch (a.kind) {
      case 'form': formBody(pane, a, buttons, send); break;
      case 'url': urlBody(pane, a, buttons, send); break;
      case 'urls': urlsBody(pane, a, buttons, send); break;
      case 'sampling': samplingBody(pane, a, buttons, send); break;
      case 'sampled': sampledBody(pane, a, buttons, send); break;
    }
    errs.tabIndex = -1;
    pane.appendChild(errs);
    pane.appendChild(buttons);
    pane.appendChild(status);
    box.appendChild(pane);
    shown[a.id] = pane;
    h.focus();
  }

  function heading(a) {
    switch (a.kind) {
      case 'url': return a.server + ' asks you to open a page';
      case 'urls': return a.server + ' needs you to finish ' + ((a.urls || []).length === 1 ? 'a step' : (a.urls || []).length + ' steps') + ' before it answers';
      case 'sampling': return a.server + ' asks for a completion by the model';
      case 'sampled': return (a.model || 'The model') + ' answered ' + a.server + '\u2019s request';
    }
    return a.server + ' asks you';
  }

  // formBody: the requested schema's form (the renderer of the Try-it
  // form), its fields in the order the server wrote them, checked here and
  // again by the daemon.
  function formBody(pane, a, buttons, send) {
    const F = sb.schemaForm(a.schema || {}, { asWritten: true });
    const form = el('form', 'ask-form');
    form.noValidate = true;
    form.appendChild(el('p', 'muted', 'Fields marked * are required.'));
    const ed = F.build(a.schema || {}, '', 'answer', true, false);
    form.appendChild(ed.el);
    const errs = el('div', 'fault');
    errs.setAttribute('role', 'alert');
    errs.tabIndex = -1;
    errs.hidden = true;
    form.appendChild(errs);
    pane.appendChild(form);
    const show = function (problems, title) {
      F.showErrors(errs, problems, title || 'Fix these before accepting:', '(answer)', true);
    };
    pane.form = { show };
    // A field edited after a refusal loses its mark.
    form.addEventListener('input', function (ev) {
      Object.keys(F.fieldErrors).forEach(function (p) {
        if (!F.fieldErrors[p].el.hidden && F.fieldErrors[p].wrap.contains(ev.target)) F.clearField(p);
      });
      // The list of problems goes with the last of them.
      if (Object.keys(F.fieldErrors).every(function (p) { return F.fieldErrors[p].el.hidden; })) errs.hidden = true;
    });
    const accept = function () {
      const r = ed.get();
      const problems = (r.problems || []).slice();
      if (!problems.length) F.validate(r.value || {}).forEach(function (e) { problems.push(e); });
      if (problems.length) { show(problems); return; }
      errs.hidden = true;
      send('accept', r.value || {});
    };
    form.addEventListener('submit', function (ev) { ev.preventDefault(); accept(); });
    buttons.appendChild(button('Accept', 'primary', accept));
    buttons.appendChild(button('Decline', '', function () { send('decline'); }));
    buttons.appendChild(button('Cancel', '', function () { send('cancel'); }));
  }

  // showURL appends a page to open to parent: its host shown plainly, the
  // whole URL, and a link that opens it in a new tab only when the person
  // follows it.
  function showURL(parent, host, url) {
    const p = el('p', 'ask-host', 'The page is on ');
    p.appendChild(el('strong', 'host', host));
    p.appendChild(document.createTextNode(':'));
    parent.appendChild(p);
    parent.appendChild(el('code', 'ask-url', url));
    const open = el('p');
    const link = el('a', 'button', 'Open ' + host);
    link.href = url;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    link.setAttribute('aria-label', 'Open ' + url + ' in a new tab');
    open.appendChild(link);
    parent.appendChild(open);
  }

  // urlBody: a URL-mode elicitation's page, and its answers.
  function urlBody(pane, a, buttons, send) {
    showURL(pane, a.host, a.url);
    buttons.appendChild(button('Accept (I\u2019ve opened it)', 'primary', function () { send('accept'); }));
    buttons.appendChild(button('Decline', '', function () { send('decline'); }));
    buttons.appendChild(button('Cancel', '', function () { send('cancel'); }));
  }

  // urlsBody: the pages a server requires before it answers the call
  // (error -32042), each with its host shown plainly and a link that opens
  // it in a new tab only when followed. The call is made again when the
  // server says they are complete (the question then goes by itself) or
  // when the person says they are done.
  function urlsBody(pane, a, buttons, send) {
    const ol = el('ol', 'ask-urls');
    (a.urls || []).forEach(function (u) {
      const li = el('li');
      li.appendChild(el('p', 'ask-message', u.message));
      showURL(li, u.host, u.url);
      ol.appendChild(li);
    });
    pane.appendChild(ol);
    pane.appendChild(el('p', 'muted', 'Waiting for ' + a.server + ' to say it is done; the call is then made again. Or say you are done yourself.'));
    buttons.appendChild(button('Done \u2014 call again', 'primary', function () { send('done', undefined, 'Calling ' + a.server + ' again\u2026'); }));
    buttons.appendChild(button('Decline', '', function () { send('decline'); }));
  }

  // samplingBody: what would be sent to the model, for approval.
  function samplingBody(pane, a, buttons, send) {
    const s = a.sampling || {};
    const dl = el('dl', 'details');
    const row = function (k, v) { dl.appendChild(el('dt', '', k)); dl.appendChild(el('dd', '', v)); };
    if (s.system_prompt) row('System prompt', s.system_prompt);
    row('Max tokens', String(s.max_tokens));
    if (s.temperature) row('Temperature', String(s.temperature));
    const mp = s.model_preferences;
    if (mp) {
      const hints = (mp.hints || []).map(function (h) { return h && h.name; }).filter(Boolean);
      const prio = [];
      if (mp.costPriority) prio.push('cost ' + mp.costPriority);
      if (mp.speedPriority) prio.push('speed ' + mp.speedPriority);
      if (mp.intelligencePriority) prio.push('intelligence ' + mp.intelligencePriority);
      row('Model preferences', 'hints: ' + (hints.length ? hints.join(', ') : 'none') + (prio.length ? '; priorities: ' + prio.join(', ') : ''));
    }
    if (s.include_context && s.include_context !== 'none') row('Include context', s.include_context + ' (Switchboard sends none)');
    pane.appendChild(dl);
    pane.appendChild(el('h3', '', 'Messages'));
    const ol = el('ol', 'ask-messages');
    (s.messages || []).forEach(function (m, i) {
      const li = el('li');
      li.appendChild(el('strong', '', m.role + ': '));
      if (m.type === 'image' && m.data) {
        const img = el('img');
        img.src = 'data:' + m.mime + ';base64,' + m.data;
        img.alt = 'image ' + (i + 1) + ' of the request (' + m.mime + ')';
        li.appendChild(img);
      } else {
        li.appendChild(el('pre', 'ask-text', m.text));
      }
      ol.appendChild(li);
    });
    pane.appendChild(ol);
    if (a.no_model) {
      const warn = el('p', 'banner warn', 'No model is configured to answer it: ' + a.no_model + '. Set llm.base_url and llm.model in the configuration to approve such requests; this one can only be declined.');
      pane.appendChild(warn);
      buttons.appendChild(button('Decline (no model)', 'primary', function () { send('decline'); }));
      return;
    }
    pane.appendChild(el('p', 'muted', 'Approving sends these messages to ' + a.model + '; you see its answer before it is returned.'));
    buttons.appendChild(button('Send to ' + a.model, 'primary', function () { send('approve', undefined, 'Sent to ' + a.model + '; waiting for its answer\u2026'); }));
    buttons.appendChild(button('Decline', '', function () { send('decline'); }));
  }

  // sampledBody: the model's answer, for a second approval.
  function sampledBody(pane, a, buttons, send) {
    pane.appendChild(el('pre', 'ask-text', a.answer));
    buttons.appendChild(button('Return it to ' + a.server, 'primary', function () { send('approve'); }));
    buttons.appendChild(button('Decline', '', function () { send('decline'); }));
  }
})();
