package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// This file reads the native format: the document is checked against the
// schema of switchboard.yaml (internal/config/schema, where every rule a
// schema can say lives, on the Go types), each violation is placed at its
// file:line:col through the YAML tree, the values it concerns are taken
// out so that nothing downstream reports them again, and what remains is
// decoded into the schema's types. What a schema cannot say — names that
// refer to other entries, the launch policy, variables, files — is checked
// by the resolver.

// decodeNative reads a native file's root mapping.
func decodeNative(root *node, rc *rawConfig, ps *problems) {
	rc.root = root
	violations, err := schema.Validate(instance(root, nil))
	if err != nil {
		ps.add(root.pos, "", "checking the file against its schema: "+err.Error(), "", err)
		return
	}
	rc.violated = map[string]bool{}
	for _, v := range violations {
		addViolation(root, v, ps)
	}
	for _, v := range violations {
		for i := 1; i <= len(v.Path); i++ {
			rc.violated[strings.Join(v.Path[:i], "/")] = true
		}
		prune(root, v)
	}
	dropEmpty(root, nil)
	rc.file = &schema.File{}
	if err := decodeInto(root, rc.file); err != nil {
		ps.add(root.pos, "", "reading the file: "+err.Error(), "", err)
		rc.file = &schema.File{}
		return
	}
	p := root.get("servers")
	if p == nil || p.value.kind != kindSeq {
		return
	}
	for i, item := range p.value.items {
		if item.kind != kindMap {
			continue // reported against the schema
		}
		s := &rawServer{spec: nativeSpec, index: i, prefix: "servers", pos: item.pos, violated: func(key string) bool {
			return rc.violated["servers/"+strconv.Itoa(i)+"/"+key]
		}, typed: &schema.Server{}}
		if i < len(rc.file.Servers) {
			s.typed = &rc.file.Servers[i]
		}
		if np := item.get("name"); np != nil {
			s.name = np.value.text
			s.nameOK = checkName(s.name, np.value.pos, s.path("name"), ps)
		}
		for _, v := range violations {
			if v.Suggestion != "" && len(v.Path) == 3 && v.Path[0] == "servers" && v.Path[1] == strconv.Itoa(i) {
				s.typo(v.Suggestion, v.Unknown) // a required key misspelt is reported once, as misspelt
			}
		}
		collectFields(s, item, ps)
		rc.servers = append(rc.servers, s)
	}
}

// dropEmpty takes out the keys written with no value, as the schema saw
// them (see instance), so that readers of the tree see the same file.
func dropEmpty(n *node, path []string) {
	switch n.kind {
	case kindMap:
		keep := n.pairs[:0]
		for _, p := range n.pairs {
			if p.value.kind == kindNull && !schema.IsValueMap(path) {
				continue
			}
			dropEmpty(p.value, append(path[:len(path):len(path)], p.key))
			keep = append(keep, p)
		}
		n.pairs = keep
	case kindSeq:
		for i, it := range n.items {
			dropEmpty(it, append(path[:len(path):len(path)], strconv.Itoa(i)))
		}
	}
}

// block returns the mapping under a top-level key of a native file, or
// nil: absent, taken out as wrong, or not a native file.
func (rc *rawConfig) block(key string) *node {
	if rc.root == nil {
		return nil
	}
	if p := rc.root.get(key); p != nil && p.value.kind == kindMap {
		return p.value
	}
	return nil
}

// instance converts a tree into the value JSON decoding would give (numbers
// as json.Number), for the schema. A key written with no value means the
// key is absent, except in a mapping of names to values (env, headers),
// where it is a value that is missing. path is where n is.
func instance(n *node, path []string) any {
	switch n.kind {
	case kindMap:
		m := make(map[string]any, len(n.pairs))
		for _, p := range n.pairs {
			sub := append(path[:len(path):len(path)], p.key)
			if p.value.kind == kindNull && !schema.IsValueMap(path) {
				continue
			}
			m[p.key] = instance(p.value, sub)
		}
		return m
	case kindSeq:
		l := make([]any, len(n.items))
		for i, it := range n.items {
			l[i] = instance(it, append(path[:len(path):len(path)], strconv.Itoa(i)))
		}
		return l
	case kindString:
		return n.text
	case kindBool:
		return n.text == "true"
	case kindInt:
		if v, err := strconv.ParseInt(n.text, 0, 64); err == nil {
			return json.Number(strconv.FormatInt(v, 10))
		}
		return n.text // out of range: let the schema say it is no number
	case kindFloat:
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.text, "_", ""), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return n.text
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return nil
}

// decodeInto decodes a (checked) tree into v.
func decodeInto(n *node, v any) error { return decodeValue(instance(n, nil), v) }

// decodeValue decodes a (checked) instance, as instance makes it, into v.
func decodeValue(doc, v any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// locate finds the node at path, the pair holding it (nil for a list
// item or the root) and its parent.
func locate(root *node, path []string) (n *node, holder *pair, parent *node) {
	n = root
	for _, tok := range path {
		parent, holder = n, nil
		switch n.kind {
		case kindMap:
			holder = n.get(tok)
			if holder == nil {
				return nil, nil, parent
			}
			n = holder.value
		case kindSeq:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.items) {
				return nil, nil, parent
			}
			n = n.items[i]
		default:
			return nil, nil, parent
		}
	}
	return n, holder, parent
}

// addViolation records a schema violation at its place in the file.
func addViolation(root *node, v schema.Violation, ps *problems) {
	field := fieldPath(root, v.Path)
	var pos Pos
	switch {
	case v.Missing:
		obj, holder, _ := locate(root, v.Path[:len(v.Path)-1])
		switch {
		case holder != nil:
			pos = holder.keyPos
		case obj != nil:
			pos = obj.pos
		}
	case v.AtKey:
		_, holder, _ := locate(root, v.Path)
		if holder != nil {
			pos = holder.keyPos
		}
	default:
		if n, _, _ := locate(root, v.Path); n != nil {
			pos = n.pos
		}
	}
	if pos.File == "" {
		pos.File = root.pos.File
	}
	if n, _, _ := locate(root, v.Path); n != nil && n.kind == kindFloat && strings.HasSuffix(v.Message, "not a string") {
		// .nan and .inf, which JSON has no number for
		v.Message = fmt.Sprintf("%s is not a usable number", n.text)
		if v.Fix == "" {
			v.Fix = "write a number such as 0.15"
		}
	}
	if n, _, _ := locate(root, v.Path); n != nil && n.kind == kindString && len(v.Path) == 3 && v.Path[0] == "servers" && v.Path[2] == "name" {
		// The schema's pattern refused the name; nameProblem words it for
		// this name, with a valid one to rename it to.
		if msg, fix := nameProblem(n.text); msg != "" {
			v.Message, v.Fix = msg, fix
		}
	}
	var err error
	switch {
	case v.Unknown != "":
		err = &UnknownFieldError{Field: field, Suggestion: v.Suggestion}
	case v.Missing && strings.HasSuffix(field, ".docker.image"):
		err = &MissingFieldError{Field: field, Transport: TransportStdio}
	}
	ps.add(pos, field, v.Message, v.Fix, err)
}

// prune takes out of the tree what a violation concerns: an unknown key,
// a wrong value (a wrong list item becomes empty, which readers skip). An
// entry that lacks a required key is left: readers skip what is missing.
func prune(root *node, v schema.Violation) {
	if v.Missing || len(v.Path) == 0 {
		return
	}
	path := v.Path
	n, holder, parent := locate(root, path)
	if n == nil || parent == nil {
		return
	}
	if holder != nil {
		for i := range parent.pairs {
			if &parent.pairs[i] == holder {
				parent.pairs = append(parent.pairs[:i:i], parent.pairs[i+1:]...)
				return
			}
		}
		return
	}
	i, _ := strconv.Atoi(path[len(path)-1])
	parent.items[i] = &node{kind: kindNull, pos: n.pos}
}

// fieldPath renders a path the way messages name fields: dotted keys,
// [i] for list items, and a server or hook by its name when it has a
// valid one (servers.github.url).
func fieldPath(root *node, path []string) string {
	var b strings.Builder
	n := root
	for i, tok := range path {
		var next *node
		if n != nil {
			next, _, _ = locate(n, []string{tok})
		}
		if idx, err := strconv.Atoi(tok); err == nil && n != nil && n.kind == kindSeq {
			name := ""
			if i == 1 && next != nil && (path[0] == "servers" || path[0] == "hooks") {
				if p := next.get("name"); p != nil && p.value.kind == kindString {
					name = p.value.text
				}
				if path[0] == "servers" {
					if msg, _ := nameProblem(name); msg != "" {
						name = ""
					}
				} else if !hookNamePattern().MatchString(name) || len(name) > MaxHookNameLen || earlierHookNamed(n, idx, name) {
					name = "" // a hook is named by its name only when that is valid and its own
				}
			}
			if name != "" {
				b.WriteString("." + name)
			} else {
				fmt.Fprintf(&b, "[%d]", idx)
			}
		} else {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		}
		n = next
	}
	return b.String()
}

// keyPath converts a path of keys (strings) and list indexes (ints).
func keyPath(path []any) []string {
	out := make([]string, len(path))
	for i, p := range path {
		out[i] = fmt.Sprint(p)
	}
	return out
}

// at returns the node at path in the native file, or nil: absent, taken
// out as wrong, or not a native file.
func (r *resolver) at(path ...any) *node {
	if r.tree == nil {
		return nil
	}
	n, _, _ := locate(r.tree, keyPath(path))
	if n == nil || n.kind == kindNull {
		return nil
	}
	return n
}

// keyAt returns the position of the key at path, or the zero Pos.
func (r *resolver) keyAt(path ...any) Pos {
	if r.tree == nil {
		return Pos{}
	}
	_, h, _ := locate(r.tree, keyPath(path))
	if h == nil {
		return Pos{}
	}
	return h.keyPos
}

// name is the dotted field name of path, for messages.
func (r *resolver) name(path ...any) string {
	if r.tree == nil {
		return strings.Join(keyPath(path), ".")
	}
	return fieldPath(r.tree, keyPath(path))
}

// textAt expands the string at path. It reports false when there is none
// or it is unusable (a problem was recorded).
func (r *resolver) textAt(path ...any) (string, bool) {
	n := r.at(path...)
	if n == nil {
		return "", false
	}
	return r.expandNode(n, r.name(path...))
}

// item is one present value of a list.
type item struct {
	n     *node
	field string
}

// itemsAt returns the present items of the list at path with their
// field names; items taken out as wrong are skipped.
func (r *resolver) itemsAt(path ...any) []item {
	list := r.at(path...)
	if list == nil || list.kind != kindSeq {
		return nil
	}
	var out []item
	for i, it := range list.items {
		if it.kind != kindNull {
			out = append(out, item{n: it, field: r.name(append(path[:len(path):len(path)], i)...)})
		}
	}
	return out
}

// set copies a value that is present.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// setDur copies a duration that is present.
func setDur[D ~int64](dst *time.Duration, v *D) {
	if v != nil {
		*dst = time.Duration(*v)
	}
}

// violatedUnder reports whether the schema found a problem at or under
// path.
func (r *resolver) violatedUnder(path ...any) bool {
	return r.violated[strings.Join(keyPath(path), "/")]
}

// earlierHookNamed reports whether a hook before index i of the list
// hooks has the given name.
func earlierHookNamed(hooks *node, i int, name string) bool {
	for _, it := range hooks.items[:i] {
		if p := it.get("name"); p != nil && p.value.text == name {
			return true
		}
	}
	return false
}
