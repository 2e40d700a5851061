package config

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// ServerEntry is the part of a server's entry in switchboard.yaml that
// the web console edits. Values are as written in the file: ${VAR}
// references stay references. Keys the console does not edit (timeouts,
// limits, docker, ...) are left as they are in the file.
type ServerEntry struct {
	Name        string
	Description string
	// Transport is stdio (also when empty), http, sse or websocket.
	Transport string
	Command   string
	Args      []string
	Env       []KeyValue
	URL       string
	Headers   []KeyValue
	// Disabled writes enabled: false.
	Disabled bool
}

// KeyValue is one entry of an env or headers map, in file order.
type KeyValue struct {
	Key, Value string
}

// editErr is a refusal to edit a file, with what to do instead.
func editErr(format string, args ...any) *fault.Error {
	return fault.New(fault.Config, format, args...).
		WithSuggestions("edit the file by hand (docs/configuration.md), then run switchboard reload")
}

// parseNative parses a native switchboard.yaml keeping its comments, and
// returns its root mapping (nil for an empty file).
func parseNative(data []byte) (*ast.File, *ast.MappingNode, error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("[")) {
		return nil, nil, editErr("the configuration file is JSON; the console edits only switchboard.yaml's native YAML")
	}
	f, err := parser.ParseBytes(data, parser.ParseComments)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Config, err, "parsing the configuration file to edit it").
			WithSuggestions("fix the YAML (switchboard config validate shows where), then try again")
	}
	if len(f.Docs) > 1 {
		return nil, nil, editErr("the configuration file holds %d YAML documents; the console edits a file with one", len(f.Docs))
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return f, nil, nil
	}
	if _, ok := f.Docs[0].Body.(*ast.CommentGroupNode); ok {
		return f, nil, nil // only comments
	}
	root, ok := f.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, nil, editErr("the configuration file is not a YAML mapping")
	}
	for _, mv := range root.Values {
		if k := mv.Key.String(); k == "mcpServers" || k == "tools" {
			return nil, nil, editErr("the configuration file is in another client's format (%s); the console edits only switchboard.yaml's native format (switchboard config import converts it)", k)
		}
	}
	return f, root, nil
}

// serversNode returns the servers: sequence of the root mapping, or nil
// when there is none (or it is empty in flow style).
func serversNode(root *ast.MappingNode) (*ast.SequenceNode, error) {
	if root == nil {
		return nil, nil
	}
	for _, mv := range root.Values {
		if mv.Key.String() != "servers" {
			continue
		}
		switch v := mv.Value.(type) {
		case *ast.SequenceNode:
			if v.IsFlowStyle {
				if len(v.Values) > 0 {
					return nil, editErr("servers: is written as a flow list ([...]); the console edits a block list (one - name: ... entry per server)")
				}
				return nil, nil // servers: []
			}
			return v, nil
		case *ast.NullNode:
			return nil, nil
		case *ast.MappingNode:
			return nil, editErr("servers: is a mapping (VS Code's format); the console edits servers: as a list")
		default:
			return nil, editErr("servers: is neither a list nor empty")
		}
	}
	return nil, nil
}

// parseServers parses a native file and finds its servers: list.
func parseServers(data []byte) (*ast.File, *ast.MappingNode, *ast.SequenceNode, error) {
	f, root, err := parseNative(data)
	if err != nil {
		return nil, nil, nil, err
	}
	seq, err := serversNode(root)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, root, seq, nil
}

// indent prefixes every line of text (its final newline dropped) and
// ends each with a newline.
func indent(text, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

// serverIndex finds a server's entry by name.
func serverIndex(seq *ast.SequenceNode, name string) (int, *ast.MappingNode) {
	if seq == nil {
		return -1, nil
	}
	for i, v := range seq.Values {
		m, ok := v.(*ast.MappingNode)
		if !ok {
			continue
		}
		for _, mv := range m.Values {
			if mv.Key.String() == "name" && scalarText(mv.Value) == name {
				return i, m
			}
		}
	}
	return -1, nil
}

// scalarText is a scalar node's value (unquoted), or its YAML text.
func scalarText(n ast.Node) string {
	if s, ok := n.(ast.ScalarNode); ok {
		return fmt.Sprint(s.GetValue())
	}
	return n.String()
}

// ReadServerEntry returns a server's entry as written in a native
// configuration file.
func ReadServerEntry(data []byte, name string) (ServerEntry, error) {
	_, _, seq, err := parseServers(data)
	if err != nil {
		return ServerEntry{}, err
	}
	_, m := serverIndex(seq, name)
	if m == nil {
		return ServerEntry{}, fault.New(fault.NotFound, "the configuration file has no server named %q", name)
	}
	e := ServerEntry{Name: name}
	for _, mv := range m.Values {
		v := mv.Value
		switch mv.Key.String() {
		case "description":
			e.Description = scalarText(v)
		case "transport":
			e.Transport = scalarText(v)
		case "command":
			e.Command = scalarText(v)
		case "url":
			e.URL = scalarText(v)
		case "enabled":
			e.Disabled = scalarText(v) == "false"
		case "args":
			if s, ok := v.(*ast.SequenceNode); ok {
				for _, a := range s.Values {
					e.Args = append(e.Args, scalarText(a))
				}
			}
		case "env", "headers":
			var kvs []KeyValue
			if mm, ok := v.(*ast.MappingNode); ok {
				for _, kv := range mm.Values {
					kvs = append(kvs, KeyValue{Key: kv.Key.String(), Value: scalarText(kv.Value)})
				}
			}
			if mv.Key.String() == "env" {
				e.Env = kvs
			} else {
				e.Headers = kvs
			}
		}
	}
	return e, nil
}

// yamlValue renders a Go value as YAML text for a node.
func yamlValue(v any) (string, error) {
	b, err := yaml.MarshalWithOptions(v, yaml.Flow(true))
	if err != nil {
		return "", fmt.Errorf("rendering a value for the configuration file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// kvMap renders key/value pairs as a YAML block mapping, in order.
func kvMap(kvs []KeyValue) (string, error) {
	var b strings.Builder
	for _, kv := range kvs {
		k, err := yamlValue(kv.Key)
		if err != nil {
			return "", err
		}
		v, err := yamlValue(kv.Value)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	return b.String(), nil
}

// entryFields are a server entry's edited keys with their YAML text (""
// removes the key), in the order a new entry is written.
func entryFields(e ServerEntry) ([][2]string, error) {
	str := func(s string) (string, error) {
		if s == "" {
			return "", nil
		}
		return yamlValue(s)
	}
	var out [][2]string
	add := func(k string, v string, err error) error {
		if err != nil {
			return err
		}
		out = append(out, [2]string{k, v})
		return nil
	}
	transport := e.Transport
	if transport == string(TransportStdio) {
		transport = "" // the default
	}
	args := ""
	if len(e.Args) > 0 {
		var err error
		if args, err = yamlValue(e.Args); err != nil {
			return nil, err
		}
	}
	env, err := kvMap(e.Env)
	if err != nil {
		return nil, err
	}
	headers, err := kvMap(e.Headers)
	if err != nil {
		return nil, err
	}
	enabled := ""
	if e.Disabled {
		enabled = "false"
	}
	name, err := yamlValue(e.Name)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		k string
		v func() (string, error)
	}{
		{"name", func() (string, error) { return name, nil }},
		{"description", func() (string, error) { return str(e.Description) }},
		{"transport", func() (string, error) { return str(transport) }},
		{"command", func() (string, error) { return str(e.Command) }},
		{"args", func() (string, error) { return args, nil }},
		{"env", func() (string, error) { return env, nil }},
		{"url", func() (string, error) { return str(e.URL) }},
		{"headers", func() (string, error) { return headers, nil }},
		{"enabled", func() (string, error) { return enabled, nil }},
	} {
		v, err := f.v()
		if err := add(f.k, v, err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SetServer returns the native configuration file data with a server's
// entry written: the entry named original is changed key by key (keys
// whose value did not change keep their text and comments; keys the
// console does not edit are kept), or, when original is "", a new entry
// is added at the end of servers:. Everything else in the file, comments
// included, stays as it was. The result is not validated: Parse it.
func SetServer(data []byte, original string, e ServerEntry) ([]byte, error) {
	f, root, seq, err := parseServers(data)
	if err != nil {
		return nil, err
	}
	fields, err := entryFields(e)
	if err != nil {
		return nil, err
	}
	if original == "" {
		if i, _ := serverIndex(seq, e.Name); i >= 0 {
			return nil, fault.New(fault.Validation, "a server named %q is already configured", e.Name).
				WithDetail("field", "name").WithSuggestions("choose another name, or edit that server")
		}
		var b strings.Builder
		for i, kv := range fields {
			if kv[1] == "" {
				continue
			}
			lead := "  "
			if i == 0 {
				lead = "- "
			}
			if strings.Contains(kv[1], "\n") { // a block mapping
				fmt.Fprintf(&b, "%s%s:\n%s", lead, kv[0], indent(kv[1], "    "))
				continue
			}
			fmt.Fprintf(&b, "%s%s: %s\n", lead, kv[0], kv[1])
		}
		entry := b.String()
		if seq == nil {
			return addServersKey(data, f, root, entry)
		}
		p, err := yaml.PathString("$.servers")
		if err != nil {
			return nil, err
		}
		if err := p.MergeFromReader(f, strings.NewReader(entry)); err != nil {
			return nil, fmt.Errorf("adding server %s to the configuration file: %w", e.Name, err)
		}
		return []byte(f.String()), nil
	}
	i, m := serverIndex(seq, original)
	if m == nil {
		return nil, fault.New(fault.NotFound, "the configuration file has no server named %q", original).
			WithSuggestions("reload the page: the file may have changed")
	}
	if e.Name != original {
		if j, _ := serverIndex(seq, e.Name); j >= 0 {
			return nil, fault.New(fault.Validation, "a server named %q is already configured", e.Name).
				WithDetail("field", "name").WithSuggestions("choose another name")
		}
	}
	for _, kv := range fields {
		key, text := kv[0], kv[1]
		idx := slices.IndexFunc(m.Values, func(mv *ast.MappingValueNode) bool { return mv.Key.String() == key })
		switch {
		case text == "" && idx >= 0:
			m.Values = slices.Delete(m.Values, idx, idx+1)
		case text == "":
		case idx >= 0:
			if sameValue(m.Values[idx].Value, text) {
				continue // unchanged: keep its text and comments
			}
			p, err := yaml.PathString("$.servers[" + strconv.Itoa(i) + "]." + pathKey(key))
			if err != nil {
				return nil, err
			}
			if err := p.ReplaceWithReader(f, strings.NewReader(text)); err != nil {
				return nil, fmt.Errorf("changing %s of server %s: %w", key, original, err)
			}
		default:
			p, err := yaml.PathString("$.servers[" + strconv.Itoa(i) + "]")
			if err != nil {
				return nil, err
			}
			frag := key + ": " + text + "\n"
			if strings.Contains(text, "\n") {
				frag = key + ":\n" + indent(text, "  ")
			}
			if err := p.MergeFromReader(f, strings.NewReader(frag)); err != nil {
				return nil, fmt.Errorf("adding %s to server %s: %w", key, original, err)
			}
		}
	}
	return []byte(f.String()), nil
}

// pathKey quotes a key for a YAML path when it needs it.
func pathKey(k string) string {
	if strings.ContainsAny(k, ".[]'\" ") {
		return "'" + k + "'"
	}
	return k
}

// sameValue reports whether a node already holds the value text renders.
func sameValue(n ast.Node, text string) bool {
	var a, b any
	if yaml.Unmarshal([]byte(n.String()), &a) != nil || yaml.Unmarshal([]byte(text), &b) != nil {
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// addServersKey adds servers: with one entry to a file that has none (or
// has servers: [] or servers: with no value).
func addServersKey(data []byte, f *ast.File, root *ast.MappingNode, entry string) ([]byte, error) {
	block := "servers:\n" + indent(entry, "  ")
	if root == nil {
		// An empty file (or only comments): keep them, then the servers.
		out := strings.TrimRight(string(data), "\n")
		if out != "" {
			out += "\n"
		}
		return []byte(out + block), nil
	}
	// servers: [] (or with no value) gives way to a block list, written
	// on the lines after the key so that comments around it stay.
	if idx := slices.IndexFunc(root.Values, func(mv *ast.MappingValueNode) bool { return mv.Key.String() == "servers" }); idx >= 0 {
		line := root.Values[idx].Key.GetToken().Position.Line
		lines := strings.SplitAfter(string(data), "\n")
		if line < 1 || line > len(lines) {
			return nil, fmt.Errorf("adding the first server: servers: is on line %d of %d", line, len(lines))
		}
		text := lines[line-1]
		head, tail, _ := strings.Cut(text, ":")
		comment := ""
		if i := strings.Index(tail, "#"); i >= 0 {
			comment = " " + strings.TrimRight(tail[i:], "\r\n")
		}
		lines[line-1] = head + ":" + comment + "\n"
		lines = slices.Insert(lines, line, indent(entry, "  "))
		return []byte(strings.Join(lines, "")), nil
	}
	p, err := yaml.PathString("$")
	if err != nil {
		return nil, err
	}
	if err := p.MergeFromReader(f, strings.NewReader(block)); err != nil {
		return nil, fmt.Errorf("adding servers: to the configuration file: %w", err)
	}
	return []byte(f.String()), nil
}

// RemoveServer returns the native configuration file data without a
// server's entry (and the comments right above it); everything else stays.
func RemoveServer(data []byte, name string) ([]byte, error) {
	f, _, seq, err := parseServers(data)
	if err != nil {
		return nil, err
	}
	i, _ := serverIndex(seq, name)
	if i < 0 {
		return nil, fault.New(fault.NotFound, "the configuration file has no server named %q", name).
			WithSuggestions("reload the page: the file may have changed")
	}
	seq.Values = slices.Delete(seq.Values, i, i+1)
	if i < len(seq.ValueHeadComments) {
		seq.ValueHeadComments = slices.Delete(seq.ValueHeadComments, i, i+1)
	}
	if i == 0 {
		// The first entry's head comment belongs to the list itself.
		seq.Comment = nil
	}
	return []byte(f.String()), nil
}
