// Switchboard console: forms generated from a JSON Schema. The "Try it"
// form of a tool page (form.js) and the form a server asks for during a
// call (asks.js) are built by this one renderer: defaults pre-filled,
// enums as choices, required fields marked, and values checked with the
// engine's rules (the daemon checks them again). Names and descriptions
// from the MCP server are set with textContent only.
'use strict';
(function () {
  if (!window.sb) return;
  // uid numbers the fields of every form on the page, so that two forms
  // never share an id.
  let uid = 0;

  // schemaForm returns the renderer of the schema schemaRoot (local $refs
  // resolve against it; opts.asWritten keeps an object's fields in the
  // order its properties are written, where they otherwise come required
  // first): build(schema, path, name, required, inArray)
  // returns an editor {el, get, set}; validate(value) the problems of a
  // value, as {path, message}; fieldErrors maps a field's path to its
  // {wrap, el, input}, where its problem is shown.
  function schemaForm(schemaRoot, opts) {
    const asWritten = !!(opts && opts.asWritten);
    // ---- JSON Schema helpers -------------------------------------------

    function isObject(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }

    // resolve follows local $refs ("#/$defs/x", "#/definitions/x").
    function resolve(s) {
      for (let i = 0; i < 32 && isObject(s) && typeof s.$ref === 'string'; i++) {
        if (!s.$ref.startsWith('#')) return {};
        let t = schemaRoot;
        for (const part of s.$ref.slice(1).split('/').filter(Boolean)) {
          const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
          t = isObject(t) || Array.isArray(t) ? t[key] : undefined;
        }
        s = t === undefined ? {} : t;
      }
      return s === undefined ? {} : s;
    }

    function types(s) {
      if (!isObject(s) || s.type === undefined) return null;
      return Array.isArray(s.type) ? s.type : [s.type];
    }

    // allowsString reports whether a schema accepts a string: by its type,
    // or by one of its anyOf / oneOf branches.
    function allowsString(s) {
      s = resolve(s);
      if (!isObject(s)) return false;
      const t = types(s);
      if (t) return t.indexOf('string') >= 0;
      return ['anyOf', 'oneOf'].some(function (k) {
        return Array.isArray(s[k]) && s[k].some(function (b) { const bt = types(resolve(b)); return !!bt && bt.indexOf('string') >= 0; });
      });
    }

    // choicesOf returns the choices of an enum schema, {value, title}:
    // enum (titled by enumNames, the legacy form), or a oneOf / anyOf
    // of titled consts. null when the schema is no enum.
    function choicesOf(s) {
      s = resolve(s);
      if (!isObject(s)) return null;
      if (Array.isArray(s.enum) && s.enum.length) {
        return s.enum.map(function (v, i) { return { value: v, title: Array.isArray(s.enumNames) && typeof s.enumNames[i] === 'string' ? s.enumNames[i] : null }; });
      }
      for (const k of ['oneOf', 'anyOf']) {
        if (Array.isArray(s[k]) && s[k].length && s[k].every(function (b) { b = resolve(b); return isObject(b) && 'const' in b; })) {
          return s[k].map(function (b) { b = resolve(b); return { value: b.const, title: typeof b.title === 'string' ? b.title : null }; });
        }
      }
      return null;
    }

    function choiceText(c) {
      const v = typeof c.value === 'string' ? c.value : JSON.stringify(c.value);
      return c.title && c.title !== v ? c.title + ' (' + v + ')' : v;
    }

    // kindOf picks the editor for a schema.
    function kindOf(s) {
      s = resolve(s);
      if (!isObject(s)) return 'json';
      if (choicesOf(s)) return 'enum';
      let t = types(s);
      if (t) {
        t = t.filter(function (x) { return x !== 'null'; });
        if (t.length !== 1) return 'json';
        t = t[0];
      } else if (s.properties) {
        t = 'object';
      } else if (s.items) {
        t = 'array';
      } else {
        return 'json';
      }
      if (t === 'array' && isObject(s.items) && choicesOf(s.items)) return 'multi';
      if (s.anyOf || s.oneOf || s.allOf) return t === 'object' && s.properties ? 'object' : 'json';
      return ['string', 'number', 'integer', 'boolean', 'object', 'array'].indexOf(t) >= 0 ? t : 'json';
    }

    function jsonType(v) {
      if (v === null) return 'null';
      if (Array.isArray(v)) return 'array';
      if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
      return typeof v;
    }

    function isType(v, t) {
      switch (t) {
        case 'null': return v === null;
        case 'boolean': return typeof v === 'boolean';
        case 'string': return typeof v === 'string';
        case 'number': return typeof v === 'number' && isFinite(v);
        case 'integer': return typeof v === 'number' && Number.isInteger(v);
        case 'array': return Array.isArray(v);
        case 'object': return isObject(v);
      }
      return true;
    }

    function equal(a, b) {
      if (a === b) return true;
      if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
      if (Array.isArray(a) !== Array.isArray(b)) return false;
      const ka = Object.keys(a), kb = Object.keys(b);
      if (ka.length !== kb.length) return false;
      return ka.every(function (k) { return Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]); });
    }

    function join(path, key) { return path === '' ? String(key) : path + '.' + key; }

    // validate checks v against s, pushing {path, message} for each problem.
    // The keywords it applies: type, enum, const, required, properties,
    // additionalProperties, minProperties, maxProperties, items,
    // prefixItems, minItems, maxItems, uniqueItems, minLength, maxLength,
    // pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
    // multipleOf, allOf, anyOf, oneOf, not and local $ref. Anything else
    // (format, if/then/else, dependent*, remote $ref) is left to the daemon.
    function validate(s, v, path, errs) {
      s = resolve(s);
      if (s === true || s === undefined) return;
      if (s === false) { errs.push({ path, message: 'no value is allowed here' }); return; }
      if (!isObject(s)) return;
      const t = types(s);
      if (t && !t.some(function (x) { return isType(v, x); })) {
        errs.push({ path, message: 'got ' + jsonType(v) + ', want ' + t.join(' or ') });
        return;
      }
      if ('const' in s && !equal(v, s.const)) errs.push({ path, message: 'must be ' + JSON.stringify(s.const) });
      if (Array.isArray(s.enum) && !s.enum.some(function (e) { return equal(e, v); })) {
        errs.push({ path, message: 'must be one of ' + s.enum.map(function (e) { return JSON.stringify(e); }).join(', ') });
      }
      if (typeof v === 'string') {
        const n = Array.from(v).length;
        if (typeof s.minLength === 'number' && n < s.minLength) errs.push({ path, message: 'at least ' + s.minLength + ' characters, got ' + n });
        if (typeof s.maxLength === 'number' && n > s.maxLength) errs.push({ path, message: 'at most ' + s.maxLength + ' characters, got ' + n });
        if (typeof s.pattern === 'string') {
          let re = null;
          try { re = new RegExp(s.pattern, 'u'); } catch (e) { re = null; }
          if (re && !re.test(v)) errs.push({ path, message: 'does not match the pattern ' + s.pattern });
        }
      }
      if (typeof v === 'number') {
        if (typeof s.minimum === 'number' && v < s.minimum) errs.push({ path, message: 'must be >= ' + s.minimum });
        if (typeof s.maximum === 'number' && v > s.maximum) errs.push({ path, message: 'must be <= ' + s.maximum });
        if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum) errs.push({ path, message: 'must be > ' + s.exclusiveMinimum });
        if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum) errs.push({ path, message: 'must be < ' + s.exclusiveMaximum });
        if (s.exclusiveMinimum === true && typeof s.minimum === 'number' && v <= s.minimum) errs.push({ path, message: 'must be > ' + s.minimum });
        if (s.exclusiveMaximum === true && typeof s.maximum === 'number' && v >= s.maximum) errs.push({ path, message: 'must be < ' + s.maximum });
        if (typeof s.multipleOf === 'number' && s.multipleOf > 0) {
          const q = v / s.multipleOf;
          if (Math.abs(q - Math.round(q)) > 1e-9) errs.push({ path, message: 'must be a multiple of ' + s.multipleOf });
        }
      }
      if (Array.isArray(v)) {
        if (typeof s.minItems === 'number' && v.length < s.minItems) errs.push({ path, message: 'at least ' + s.minItems + ' items, got ' + v.length });
        if (typeof s.maxItems === 'number' && v.length > s.maxItems) errs.push({ path, message: 'at most ' + s.maxItems + ' items, got ' + v.length });
        if (s.uniqueItems === true) {
          for (let i = 0; i < v.length; i++) {
            for (let j = i + 1; j < v.length; j++) {
              if (equal(v[i], v[j])) { errs.push({ path, message: 'items ' + i + ' and ' + j + ' are equal' }); i = j = v.length; }
            }
          }
        }
        const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : (Array.isArray(s.items) ? s.items : []);
        v.forEach(function (item, i) {
          if (i < prefix.length) validate(prefix[i], item, join(path, i), errs);
          else if (s.items !== undefined && !Array.isArray(s.items)) validate(s.items, item, join(path, i), errs);
        });
      }
      if (isObject(v)) {
        if (Array.isArray(s.required)) {
          s.required.forEach(function (k) {
            if (!Object.prototype.hasOwnProperty.call(v, k)) errs.push({ path: join(path, k), message: 'required, but missing' });
          });
        }
        const props = isObject(s.properties) ? s.properties : {};
        const n = Object.keys(v).length;
        if (typeof s.minProperties === 'number' && n < s.minProperties) errs.push({ path, message: 'at least ' + s.minProperties + ' properties' });
        if (typeof s.maxProperties === 'number' && n > s.maxProperties) errs.push({ path, message: 'at most ' + s.maxProperties + ' properties' });
        Object.keys(v).forEach(function (k) {
          if (Object.prototype.hasOwnProperty.call(props, k)) {
            validate(props[k], v[k], join(path, k), errs);
          } else if (s.additionalProperties === false) {
            errs.push({ path, message: 'additional property ' + JSON.stringify(k) + ' is not allowed' });
          } else if (isObject(s.additionalProperties)) {
            validate(s.additionalProperties, v[k], join(path, k), errs);
          }
        });
      }
      if (Array.isArray(s.allOf)) s.allOf.forEach(function (sub) { validate(sub, v, path, errs); });
      const passes = function (sub) { const e = []; validate(sub, v, path, e); return e.length === 0; };
      if (Array.isArray(s.anyOf) && !s.anyOf.some(passes)) errs.push({ path, message: 'matches none of the allowed forms (anyOf)' });
      if (Array.isArray(s.oneOf)) {
        const k = s.oneOf.filter(passes).length;
        if (k !== 1) errs.push({ path, message: 'must match exactly one allowed form (oneOf), matches ' + k });
      }
      if (s.not !== undefined && passes(s.not)) errs.push({ path, message: 'matches a form that is not allowed (not)' });
    }

    // ---- the form ------------------------------------------------------

    const fieldErrors = {}; // path -> {wrap, el}

    function el(tag, cls, text) {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    }

    // labelFor builds a field's label, help and error line.
    function decorate(wrap, input, s, name, required, path) {
      const id = 'f' + (++uid);
      input.id = id;
      const label = el('label', '', name);
      label.htmlFor = id;
      if (required) {
        const star = el('span', 'req', '*');
        star.setAttribute('aria-hidden', 'true');
        label.appendChild(star);
        input.setAttribute('aria-required', 'true');
      }
      wrap.appendChild(label);
      const described = [];
      const desc = s.description || s.title;
      if (desc && desc !== name) {
        const help = el('p', 'help', desc);
        help.id = id + '-help';
        described.push(help.id);
        wrap.appendChild(help);
      }
      wrap.appendChild(input);
      const err = el('p', 'field-error');
      err.id = id + '-err';
      err.hidden = true;
      described.push(err.id);
      wrap.appendChild(err);
      input.setAttribute('aria-describedby', described.join(' '));
      fieldErrors[path] = { wrap, el: err, input };
    }

    // build returns an editor {el, get, set} for a schema. get() returns
    // {set, value, problem}; set is false when the field was left empty.
    function build(s0, path, name, required, inArray) {
      const s = resolve(s0);
      let kind = kindOf(s);
      // An object below the root with no properties is free-form: edit it
      // as JSON rather than as an empty group with nothing to fill in.
      if (kind === 'object' && path !== '' && !(isObject(s.properties) && Object.keys(s.properties).length)) kind = 'json';
      const wrap = el('div', 'field');
      wrap.dataset.path = path;
      const hasDefault = isObject(s) && 'default' in s;
      switch (kind) {
        case 'enum': {
          const sel = el('select');
          const choices = choicesOf(s);
          const opts = choices.map(function (c) { return c.value; });
          if (!required || !hasDefault) sel.appendChild(new Option(required ? '(choose)' : '(not set)', ''));
          choices.forEach(function (c, i) { sel.appendChild(new Option(choiceText(c), String(i))); });
          decorate(wrap, sel, s, name, required, path);
          const ed = {
            el: wrap,
            get: function () { return sel.value === '' ? { set: false } : { set: true, value: opts[Number(sel.value)] }; },
            set: function (v) { const i = opts.findIndex(function (o) { return equal(o, v); }); sel.value = i < 0 ? '' : String(i); },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        case 'multi': {
          // Several of a list of choices: a box per choice.
          const fs = el('fieldset', 'choices');
          fs.dataset.path = path;
          const legend = el('legend', '', name);
          if (required) { const star = el('span', 'req', '*'); star.setAttribute('aria-hidden', 'true'); legend.appendChild(star); }
          fs.appendChild(legend);
          if (s.description || s.title) fs.appendChild(el('p', 'help', s.description || s.title));
          const choices = choicesOf(s.items);
          const boxes = choices.map(function (c) {
            const lab = el('label', 'check');
            const box = el('input');
            box.type = 'checkbox';
            lab.appendChild(box);
            lab.appendChild(document.createTextNode(' ' + choiceText(c)));
            fs.appendChild(lab);
            return box;
          });
          const errP = el('p', 'field-error');
          errP.hidden = true;
          fs.appendChild(errP);
          fieldErrors[path] = { wrap: fs, el: errP, input: boxes[0] || fs };
          const ed = {
            el: fs,
            get: function () {
              const out = [];
              boxes.forEach(function (b, i) { if (b.checked) out.push(choices[i].value); });
              return { set: out.length > 0 || required, value: out };
            },
            set: function (v) {
              boxes.forEach(function (b, i) { b.checked = Array.isArray(v) && v.some(function (x) { return equal(x, choices[i].value); }); });
            },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        case 'boolean': {
          if (required || inArray) {
            const box = el('input');
            box.type = 'checkbox';
            wrap.className = 'field check';
            decorate(wrap, box, s, name, required, path);
            wrap.insertBefore(box, wrap.firstChild);
            const ed = {
              el: wrap,
              get: function () { return { set: true, value: box.checked }; },
              set: function (v) { box.checked = v === true; },
            };
            if (hasDefault) ed.set(s.default);
            return ed;
          }
          const sel = el('select');
          sel.appendChild(new Option('(not set)', ''));
          sel.appendChild(new Option('true', 'true'));
          sel.appendChild(new Option('false', 'false'));
          decorate(wrap, sel, s, name, required, path);
          const ed = {
            el: wrap,
            get: function () { return sel.value === '' ? { set: false } : { set: true, value: sel.value === 'true' }; },
            set: function (v) { sel.value = v === true ? 'true' : v === false ? 'false' : ''; },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        case 'number':
        case 'integer': {
          const inp = el('input');
          inp.type = 'number';
          inp.step = kind === 'integer' ? '1' : 'any';
          if (typeof s.minimum === 'number') inp.min = String(s.minimum);
          if (typeof s.maximum === 'number') inp.max = String(s.maximum);
          decorate(wrap, inp, s, name, required, path);
          const bounds = [];
          if (typeof s.minimum === 'number') bounds.push('min ' + s.minimum);
          if (typeof s.exclusiveMinimum === 'number') bounds.push('more than ' + s.exclusiveMinimum);
          if (typeof s.maximum === 'number') bounds.push('max ' + s.maximum);
          if (typeof s.exclusiveMaximum === 'number') bounds.push('less than ' + s.exclusiveMaximum);
          if (bounds.length || kind === 'integer') {
            const b = el('p', 'help', (kind === 'integer' ? 'Whole number' : 'Number') + (bounds.length ? ', ' + bounds.join(', ') : '') + '.');
            b.id = inp.id + '-bounds';
            wrap.insertBefore(b, inp.nextSibling);
            inp.setAttribute('aria-describedby', inp.getAttribute('aria-describedby') + ' ' + b.id);
          }
          const ed = {
            el: wrap,
            get: function () {
              if (inp.validity && inp.validity.badInput) return { set: true, problem: 'not a number' };
              if (inp.value.trim() === '') return inArray ? { set: true, value: null } : { set: false };
              const n = Number(inp.value);
              return isFinite(n) ? { set: true, value: n } : { set: true, problem: 'not a number' };
            },
            set: function (v) { inp.value = typeof v === 'number' ? String(v) : ''; },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        case 'string': {
          const long = (typeof s.maxLength === 'number' && s.maxLength > 200) || s.format === 'textarea';
          const inp = long ? el('textarea') : el('input');
          if (!long) inp.type = s.format === 'email' ? 'email' : s.format === 'uri' ? 'url' : 'text';
          if (long) inp.rows = 4;
          decorate(wrap, inp, s, name, required, path);
          const ed = {
            el: wrap,
            get: function () { return inp.value === '' && !inArray ? { set: false } : { set: true, value: inp.value }; },
            set: function (v) { inp.value = typeof v === 'string' ? v : ''; },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        case 'object': {
          const fs = el('fieldset');
          fs.dataset.path = path;
          if (path !== '') {
            const legend = el('legend', '', name);
            if (required) { const star = el('span', 'req', '*'); star.setAttribute('aria-hidden', 'true'); legend.appendChild(star); }
            fs.appendChild(legend);
            if (s.description) fs.appendChild(el('p', 'help', s.description));
          }
          const props = isObject(s.properties) ? s.properties : {};
          const req = Array.isArray(s.required) ? s.required : [];
          const kids = {};
          // Required fields first, in the schema's required order; then the
          // rest as listed. As written (a server's elicitation form, as its
          // other clients show it): as listed.
          const order = asWritten ? [] : req.filter(function (k) { return Object.prototype.hasOwnProperty.call(props, k); });
          Object.keys(props).forEach(function (k) { if (order.indexOf(k) < 0) order.push(k); });
          order.forEach(function (k) {
            const child = build(props[k], join(path, k), k, req.indexOf(k) >= 0, false);
            kids[k] = child;
            fs.appendChild(child.el);
          });
          const errP = el('p', 'field-error');
          errP.hidden = true;
          fs.appendChild(errP);
          if (path !== '') fieldErrors[path] = { wrap: fs, el: errP, input: fs };
          const ed = {
            el: path === '' ? fs : fs,
            get: function () {
              const out = {};
              const problems = [];
              let any = false;
              Object.keys(kids).forEach(function (k) {
                const r = kids[k].get();
                if (r.problems) r.problems.forEach(function (p) { problems.push(p); });
                if (r.problem) problems.push({ path: join(path, k), message: r.problem });
                if (r.set && !r.problem) { out[k] = r.value; any = true; } else if (r.set) { any = true; }
              });
              const set = any || required || path === '' || inArray;
              return { set, value: out, problems };
            },
            set: function (v) {
              if (!isObject(v)) v = {};
              Object.keys(kids).forEach(function (k) { kids[k].set(v[k]); });
            },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        case 'array': {
          const fs = el('fieldset');
          fs.dataset.path = path;
          const legend = el('legend', '', name);
          if (required) { const star = el('span', 'req', '*'); star.setAttribute('aria-hidden', 'true'); legend.appendChild(star); }
          fs.appendChild(legend);
          if (s.description) fs.appendChild(el('p', 'help', s.description));
          const list = el('div', 'array-items');
          fs.appendChild(list);
          const items = [];
          const itemSchema = Array.isArray(s.items) ? {} : (s.items === undefined ? {} : s.items);
          const add = function (v) {
            const idx = items.length;
            const row = el('div', 'array-item');
            const ed = build(itemSchema, join(path, idx), name + ' item ' + (idx + 1), false, true);
            row.appendChild(ed.el);
            const rm = el('button', '', 'Remove');
            rm.type = 'button';
            rm.setAttribute('aria-label', 'Remove ' + name + ' item ' + (idx + 1));
            rm.addEventListener('click', function () {
              const vals = items.map(function (it) { return it.get(); });
              vals.splice(items.indexOf(ed), 1);
              reset(vals.map(function (r) { return r.set ? r.value : undefined; }));
            });
            row.appendChild(rm);
            list.appendChild(row);
            items.push(ed);
            if (v !== undefined) ed.set(v);
            return ed;
          };
          const reset = function (vals) {
            items.length = 0;
            while (list.firstChild) list.removeChild(list.firstChild);
            vals.forEach(function (v) { add(v); });
          };
          const addBtn = el('button', '', 'Add item');
          addBtn.type = 'button';
          addBtn.setAttribute('aria-label', 'Add ' + name + ' item');
          addBtn.addEventListener('click', function () {
            const ed = add(undefined);
            const f = ed.el.querySelector('input, select, textarea');
            if (f) f.focus();
          });
          fs.appendChild(addBtn);
          const errP = el('p', 'field-error');
          errP.hidden = true;
          fs.appendChild(errP);
          fieldErrors[path] = { wrap: fs, el: errP, input: addBtn };
          const ed = {
            el: fs,
            get: function () {
              const problems = [];
              const out = items.map(function (it, i) {
                const r = it.get();
                if (r.problems) r.problems.forEach(function (p) { problems.push(p); });
                if (r.problem) problems.push({ path: join(path, i), message: r.problem });
                return r.set ? r.value : null;
              });
              return { set: out.length > 0 || required, value: out, problems };
            },
            set: function (v) { reset(Array.isArray(v) ? v : []); },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
        default: {
          const ta = el('textarea');
          ta.rows = 3;
          ta.spellcheck = false;
          decorate(wrap, ta, s, name, required, path);
          // Where a string is allowed, text that is not JSON is that string,
          // so a question can be typed without quotes.
          const textOK = allowsString(s);
          let help = 'Any JSON value.';
          if (isObject(s) && s.type === 'object') help = 'A JSON object.';
          else if (textOK) help = 'Plain text, or JSON.';
          wrap.insertBefore(el('p', 'help', help), ta);
          const ed = {
            el: wrap,
            get: function () {
              if (ta.value.trim() === '') return { set: false };
              try { return { set: true, value: JSON.parse(ta.value) }; } catch (e) {
                if (textOK) return { set: true, value: ta.value };
                return { set: true, problem: 'not valid JSON' };
              }
            },
            set: function (v) {
              if (v === undefined) { ta.value = ''; return; }
              if (textOK && typeof v === 'string') {
                // Shown as typed, unless the text would read back as JSON.
                let plain = true;
                try { JSON.parse(v); plain = false; } catch (e) { /* plain text */ }
                if (plain) { ta.value = v; return; }
              }
              ta.value = JSON.stringify(v, null, 2);
            },
          };
          if (hasDefault) ed.set(s.default);
          return ed;
        }
      }
    }

    // clearField removes the problem shown at a field.
    function clearField(path) {
      const f = fieldErrors[path];
      f.el.hidden = true;
      f.el.textContent = '';
      f.wrap.classList.remove('invalid');
      if (f.input.removeAttribute) f.input.removeAttribute('aria-invalid');
    }

    // clearErrors removes every problem shown, at the fields and in the
    // list errorsEl.
    function clearErrors(errorsEl) {
      Object.keys(fieldErrors).forEach(clearField);
      errorsEl.hidden = true;
      while (errorsEl.firstChild) errorsEl.removeChild(errorsEl.firstChild);
    }

    // showErrors lists the problems errs ({path, message}) in errorsEl
    // under heading (the root path named rootName), marks each at its
    // field when atFields, and moves the focus to the first.
    function showErrors(errorsEl, errs, heading, rootName, atFields) {
      clearErrors(errorsEl);
      errorsEl.appendChild(el('p', '', heading));
      const ul = el('ul');
      let first = null;
      errs.forEach(function (e) {
        ul.appendChild(el('li', '', (e.path === '' ? rootName : e.path) + ': ' + e.message));
        const f = atFields && fieldErrors[e.path];
        if (f) {
          f.el.textContent = e.message;
          f.el.hidden = false;
          f.wrap.classList.add('invalid');
          if (f.input.setAttribute) f.input.setAttribute('aria-invalid', 'true');
          if (!first) first = f.input;
        }
      });
      errorsEl.appendChild(ul);
      errorsEl.hidden = false;
      (first && first.focus ? first : errorsEl).focus();
    }

    return {
      build, fieldErrors, el, isObject, clearField, clearErrors, showErrors,
      validate: function (value) { const errs = []; validate(schemaRoot, value, '', errs); return errs; },
    };
  }

  window.sb.schemaForm = schemaForm;
  window.sbValidate = function (schema, value) { return schemaForm(schema).validate(value); };
})();
