package web_test

import (
	"context"
	"testing"
)

// a11yAudit is a focused accessibility audit of the page, run in the
// browser: every form control has a label, every button and link a name,
// every image a text alternative, ids are unique, the page has one h1 and
// the banner, navigation, main and contentinfo landmarks, every table
// header cell is a th, and the focus ring is visible (a focused control
// gets an outline). It returns the problems found.
const a11yAudit = `(function () {
  const problems = [];
  const visible = el => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const text = el => (el.textContent || '').replace(/\s+/g, ' ').trim();
  const byIds = ids => (ids || '').split(/\s+/).filter(Boolean).map(id => document.getElementById(id)).filter(Boolean);
  const name = el => {
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label').trim();
    const lb = byIds(el.getAttribute('aria-labelledby')).map(text).join(' ').trim();
    if (lb) return lb;
    if (el.labels && el.labels.length) return Array.from(el.labels).map(text).join(' ').trim();
    if (el.tagName === 'IMG') return (el.getAttribute('alt') || '').trim();
    if (el.title) return el.title.trim();
    return text(el);
  };
  const where = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.name ? '[name=' + el.name + ']' : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '');
  document.querySelectorAll('input, select, textarea').forEach(el => {
    if (el.type === 'hidden' || el.classList.contains('offscreen')) return;
    if (!name(el)) problems.push('unlabelled control ' + where(el));
  });
  document.querySelectorAll('button, [role=button]').forEach(el => {
    if (!name(el)) problems.push('button without a name ' + where(el));
  });
  document.querySelectorAll('a[href]').forEach(el => {
    if (visible(el) && !name(el)) problems.push('link without a name ' + where(el));
  });
  document.querySelectorAll('img').forEach(el => {
    if (!el.hasAttribute('alt')) problems.push('image without alt ' + where(el));
  });
  document.querySelectorAll('svg[role=img]').forEach(el => {
    if (!name(el)) problems.push('chart without a name ' + where(el));
  });
  const seen = {};
  document.querySelectorAll('[id]').forEach(el => {
    if (seen[el.id]) problems.push('duplicate id ' + el.id);
    seen[el.id] = true;
  });
  document.querySelectorAll('[aria-labelledby], [aria-describedby]').forEach(el => {
    ['aria-labelledby', 'aria-describedby'].forEach(a => {
      (el.getAttribute(a) || '').split(/\s+/).filter(Boolean).forEach(id => {
        if (!document.getElementById(id)) problems.push(a + ' of ' + where(el) + ' names a missing id ' + id);
      });
    });
  });
  if (document.querySelectorAll('h1').length !== 1) problems.push(document.querySelectorAll('h1').length + ' h1 elements, want 1');
  if (!document.documentElement.lang) problems.push('no lang on html');
  if (!document.title) problems.push('no title');
  if (!document.querySelector('header')) problems.push('no banner landmark (header)');
  if (!document.querySelector('main')) problems.push('no main landmark');
  if (!document.querySelector('footer')) problems.push('no contentinfo landmark (footer)');
  if (document.body.dataset.page !== 'login' && !document.querySelector('nav')) problems.push('no navigation landmark');
  document.querySelectorAll('thead td').forEach(el => problems.push('a td in a table head ' + where(el.closest('table'))));
  // Focus is visible: the first focusable control in main gets an outline
  // when focused from the keyboard.
  const f = document.querySelector('main a[href], main button:not([hidden]), main input:not([type=hidden]), main select, main textarea');
  if (f && visible(f)) {
    f.focus({ focusVisible: true });
    const cs = getComputedStyle(f);
    if (document.activeElement !== f) problems.push('cannot focus ' + where(f));
    else if (f.matches(':focus-visible') && (cs.outlineStyle === 'none' || parseFloat(cs.outlineWidth) < 2)) problems.push('no visible focus ring on ' + where(f));
    f.blur();
  }
  // And the style sheet draws one for keyboard focus.
  let ring = false;
  for (const sheet of document.styleSheets) {
    let rules = [];
    try { rules = sheet.cssRules; } catch (e) { continue; }
    for (const r of rules) {
      if (r.selectorText && r.selectorText.includes(':focus-visible') && r.style && /outline:\s*[1-9]/.test(r.style.cssText)) ring = true;
    }
  }
  if (!ring) problems.push('no :focus-visible outline in the style sheets');
  return problems;
})()`

// audit runs the accessibility audit on the page the tab shows and
// reports each problem as a test error.
func audit(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	waitJS(t, ctx, page+" loaded, with its style sheet", `document.readyState === "complete" && document.styleSheets.length > 0`)
	for _, p := range eval[[]string](t, ctx, a11yAudit) {
		t.Errorf("accessibility, %s: %s", page, p)
	}
}
