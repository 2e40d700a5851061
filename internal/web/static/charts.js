// Switchboard console: charts of the call history, drawn as inline SVG
// from /ui/api/stats (no library, no inline script or style: the CSP
// forbids both). Refreshed every 5 seconds. Text is set with textContent.
'use strict';
(function () {
  const root = document.getElementById('stats');
  if (!root || !window.sb) return;
  const NS = 'http://www.w3.org/2000/svg';
  const W = 600, H = 170, L = 48, R = 8, T = 10, B = 24;
  let seq = 0;

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(v) {
    if (v >= 100) return String(Math.round(v));
    if (v >= 10) return v.toFixed(1);
    return v.toFixed(2).replace(/\.?0+$/, '') || '0';
  }
  function clock(ms) {
    const d = new Date(ms);
    return String(d.getHours()).padStart(2, '0') + ':' + String(d.getMinutes()).padStart(2, '0');
  }

  // draw replaces a figure's chart: bars for the first series when
  // kind is "bar", lines otherwise.
  function draw(fig, buckets, series, kind, unit) {
    const old = fig.querySelector('svg');
    if (old) old.remove();
    const cap = fig.querySelector('figcaption');
    if (!cap.id) cap.id = 'chart-cap-' + (++seq);
    let max = 0;
    buckets.forEach(function (b) { series.forEach(function (s) { max = Math.max(max, s.get(b)); }); });
    const top = max > 0 ? max * 1.1 : 1;
    const svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-labelledby': cap.id + ' ' + cap.id + '-d', class: 'chart-svg' });
    const desc = el('desc', { id: cap.id + '-d' }, svg);
    const last = buckets.length ? buckets[buckets.length - 1] : null;
    desc.textContent = series.map(function (s) {
      return s.label + ': highest ' + fmt(buckets.reduce(function (m, b) { return Math.max(m, s.get(b)); }, 0)) + unit +
        (last ? ', latest ' + fmt(s.get(last)) + unit : '');
    }).join('; ') + '.';
    const pw = W - L - R, ph = H - T - B;
    const x = function (i) { return L + (buckets.length ? i * pw / buckets.length : 0); };
    const y = function (v) { return T + ph - (v / top) * ph; };
    // Grid and axis labels.
    [0, 0.5, 1].forEach(function (f) {
      const v = top * f / 1.1 * (max > 0 ? 1 : 0);
      const yy = T + ph - f / 1.1 * ph * (max > 0 ? 1 : 0);
      el('line', { x1: L, x2: W - R, y1: yy, y2: yy, class: 'grid' }, svg);
      const t = el('text', { x: L - 4, y: yy + 4, class: 'label', 'text-anchor': 'end' }, svg);
      t.textContent = fmt(v);
    });
    if (buckets.length) {
      const t0 = el('text', { x: L, y: H - 6, class: 'label' }, svg);
      t0.textContent = clock(buckets[0].t);
      const t1 = el('text', { x: W - R, y: H - 6, class: 'label', 'text-anchor': 'end' }, svg);
      t1.textContent = clock(buckets[buckets.length - 1].t);
    }
    const bw = buckets.length ? pw / buckets.length : 0;
    series.forEach(function (s, si) {
      if (kind === 'bar' && si === 0) {
        buckets.forEach(function (b, i) {
          const v = s.get(b);
          if (v <= 0) return;
          const r = el('rect', { x: x(i) + 0.5, y: y(v), width: Math.max(1, bw - 1), height: T + ph - y(v), class: 'bar ' + s.cls }, svg);
          el('title', {}, r).textContent = clock(b.t) + ': ' + fmt(v) + unit;
        });
        return;
      }
      const pts = buckets.map(function (b, i) { return (x(i) + bw / 2).toFixed(1) + ',' + y(s.get(b)).toFixed(1); });
      if (pts.length) el('polyline', { points: pts.join(' '), class: 'line ' + s.cls }, svg);
    });
    // Legend.
    let lx = L + 4;
    series.forEach(function (s) {
      el('rect', { x: lx, y: T, width: 10, height: 10, class: 'key ' + s.cls }, svg);
      const t = el('text', { x: lx + 14, y: T + 9, class: 'label' }, svg);
      t.textContent = s.label;
      lx += 14 + 8 * s.label.length + 12;
    });
    fig.insertBefore(svg, cap);
  }

  function cell(tr, text, header) {
    const c = document.createElement(header ? 'th' : 'td');
    if (header) c.scope = 'row';
    c.textContent = text;
    tr.appendChild(c);
    return c;
  }
  function table(id, rows, withTool) {
    const t = document.getElementById(id);
    if (!t) return;
    const body = t.tBodies[0];
    while (body.firstChild) body.removeChild(body.firstChild);
    if (!rows.length) {
      const tr = document.createElement('tr');
      const td = cell(tr, 'No calls in this window.');
      td.colSpan = withTool ? 7 : 6;
      body.appendChild(tr);
      return;
    }
    rows.forEach(function (r) {
      const tr = document.createElement('tr');
      if (withTool) {
        cell(tr, r.tool, true);
        cell(tr, r.server);
      } else {
        cell(tr, r.server, true);
      }
      cell(tr, String(r.calls));
      cell(tr, String(r.errors));
      cell(tr, (r.error_rate * 100).toFixed(1) + ' %');
      cell(tr, fmt(r.p50_ms));
      cell(tr, fmt(r.p95_ms));
      body.appendChild(tr);
    });
  }
  function render(st) {
    const b = st.buckets || [];
    root.querySelectorAll('figure.chart').forEach(function (fig) {
      switch (fig.dataset.chart) {
        case 'calls':
          draw(fig, b, [{ label: 'calls/min', cls: 's-calls', get: function (x) { return x.per_minute; } }], 'bar', '/min');
          break;
        case 'errors':
          draw(fig, b, [{ label: 'error %', cls: 's-errors', get: function (x) { return x.error_rate * 100; } }], 'bar', ' %');
          break;
        case 'latency':
          draw(fig, b, [{ label: 'p50', cls: 's-p50', get: function (x) { return x.p50_ms; } },
            { label: 'p95', cls: 's-p95', get: function (x) { return x.p95_ms; } }], 'line', ' ms');
          break;
      }
    });
    const set = function (id, v) { const e = document.getElementById(id); if (e) e.textContent = v; };
    if (st.total) {
      set('total-calls', String(st.total.calls));
      set('total-errors', String(st.total.errors));
      set('total-p50', fmt(st.total.p50_ms) + ' ms');
      set('total-p95', fmt(st.total.p95_ms) + ' ms');
    }
    table('stats-servers', st.servers || [], false);
    table('stats-tools', st.tools || [], true);
    root.dataset.updated = String(Date.now());
  }
  try { render(JSON.parse(root.dataset.stats)); } catch (e) { /* the first refresh draws them */ }
  async function refresh() {
    let q = '?window=' + encodeURIComponent(root.dataset.window || '1h');
    if (root.dataset.server) q += '&server=' + encodeURIComponent(root.dataset.server);
    const r = await window.sb.api('GET', '/ui/api/stats' + q);
    if (r.ok && r.data) render(r.data);
  }
  setInterval(refresh, 5000);
})();
