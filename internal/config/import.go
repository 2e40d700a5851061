package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Import converts a configuration file in any supported format into native
// switchboard.yaml text, for `switchboard config import FILE >
// switchboard.yaml`.
//
// ${VAR} references are kept as written, never expanded, so no secret is
// baked into the output; ${env:VAR} (and Gemini CLI's $VAR, Continue's
// ${{ secrets.VAR }}) becomes ${VAR}, ${workspaceFolder} the folder it
// stands for, and a VS Code ${input:id} a reference to the environment
// variable InputEnvName(id) (noted in a comment). Relative env_file, cwd
// and roots paths become absolute. A command beyond the allowlist is kept: when
// the source file is trusted (see Trust) it is listed under
// security.allowed_commands, else listed there commented out, for the
// user to approve. Variables and inputs that have no value do not stop the
// import, nor does a server's env file or working directory that does not
// exist (see ImportReport); any other problem does, as a
// *ValidationError. The output is checked to parse back.
func Import(path string, opts Options) ([]byte, error) {
	out, _, err := ImportReport(path, opts)
	return out, err
}

// ImportReport is Import, and also returns the warnings the user must
// see: a server whose env file or working directory does not exist (a
// Cursor ${workspaceFolder}/.env imported from a folder without one) is
// imported as written, and named with the missing path, as loading the
// imported file shows that server unable to start until the path exists.
func ImportReport(path string, opts Options) ([]byte, []Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		fe := fault.Wrap(fault.Config, err, "reading configuration file %s", path)
		if errors.Is(err, fs.ErrNotExist) {
			fe.WithSuggestions("check the path; 'switchboard client list' shows where each client keeps its file")
		}
		return nil, nil, fe
	}
	p := parse(path, data, opts)
	if errs := importBlocking(p.ps.errs); len(errs) > 0 {
		return nil, nil, &ValidationError{Problems: sortProblems(errs, path)}
	}
	var warnings []Problem
	for _, e := range sortProblems(p.ps.errs, path) {
		if mp := missingPath(e); mp != nil {
			e.Message = fmt.Sprintf("server %s: %s %s does not exist", mp.Server, mp.What, mp.Path)
			e.Fix = fmt.Sprintf("imported as written: create it, or change the path in the imported file; until then switchboard shows server %s as cannot_start and runs the others", mp.Server)
			warnings = append(warnings, e)
		}
	}
	out := emitImport(path, p)
	// The output is native YAML, whatever the source's format: check it
	// under a native name in the same folder.
	check := parse(filepath.Join(filepath.Dir(path), FileName), out, opts)
	if errs := importBlocking(check.ps.errs); len(errs) > 0 {
		return nil, nil, fault.Wrap(fault.Internal, &ValidationError{Problems: errs}, "imported configuration of %s does not parse back", path)
	}
	return out, warnings, nil
}

// missingPath returns the problem's *MissingPathError, or nil.
func missingPath(p Problem) *MissingPathError {
	var mp *MissingPathError
	if errors.As(p.Err, &mp) {
		return mp
	}
	return nil
}

// SchemaComment is the first line of the files `config import` writes:
// it tells editors with the YAML language server (VS Code's YAML
// extension, JetBrains IDEs) where the file's schema is, so that they
// complete and check it as it is typed.
const SchemaComment = "# yaml-language-server: $schema=" + schema.ID

// importBlocking returns the problems that stop an import: all but unset
// variables, VS Code inputs, commands that the user can still allow and
// servers' env files and working directories that do not exist.
func importBlocking(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		var uv *UnresolvedVariableError
		var iv *InputUnsetError
		var na *CommandNotAllowedError
		switch {
		case errors.As(p.Err, &uv), errors.As(p.Err, &iv), missingPath(p) != nil:
		case errors.As(p.Err, &na) && na.Command != "" && trustWouldAllow(na.Command):
		default:
			out = append(out, p)
		}
	}
	return out
}

// importer writes the native form of a parsed file.
type importer struct {
	w     *yamlWriter
	dir   string // absolute folder relative env_file, cwd and roots paths start at
	rw    rewriteCtx
	notes []string
}

func emitImport(path string, p *parsed) []byte {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	if p.raw.format != FormatNative && p.raw.format != FormatToolsV1 {
		dir = p.workspace // as parse resolves a client file's relative paths
	}
	body := &yamlWriter{}
	im := &importer{w: body, dir: dir, rw: rewriteCtx{workspace: p.workspace, dir: filepath.Dir(path), syntax: p.raw.syntax, inputs: p.raw.inputs}}
	if abs, err := filepath.Abs(im.rw.dir); err == nil {
		im.rw.dir = abs
	}

	// Commands beyond the allowlist: allowed when the source is trusted,
	// else left for the user to approve. A trusted source's commands
	// raise no problem, so they are found in its servers.
	var pending, trusted []string
	if p.trust.applies && p.trust.state == Trusted {
		for _, srv := range p.cfg.Servers {
			if srv.Transport == TransportStdio && srv.Docker == nil && srv.Command != "" &&
				CheckCommand(srv.Command, nil, p.cfg.AllowedCommands) != nil && !contains(trusted, srv.Command) {
				trusted = append(trusted, srv.Command)
			}
		}
	}
	for _, e := range p.ps.errs {
		if mp := missingPath(e); mp != nil {
			im.notes = append(im.notes, fmt.Sprintf("server %s: %s %s does not exist: create it (or change %s below); until then switchboard shows %s as cannot_start and runs the others", mp.Server, mp.What, mp.Path, mp.Server, mp.Server))
		}
		var na *CommandNotAllowedError
		if errors.As(e.Err, &na) && !contains(pending, na.Command) {
			pending = append(pending, na.Command)
			note := fmt.Sprintf("command %q is not allowed yet: review %s, then uncomment it under security.allowed_commands", na.Command, e.Field)
			if na.File != "" {
				note += fmt.Sprintf(" (or trust %s and import it again)", na.File)
			}
			im.notes = append(im.notes, note)
		}
	}

	rc, shown := p.raw, fileOf(p.cfg)
	if rc.block("defaults") != nil && shown.Defaults != nil {
		im.w.block(0, "defaults", shown.Defaults)
	}
	if rc.block("limits") != nil && shown.Limits != nil {
		im.w.block(0, "limits", shown.Limits)
	}
	if h := rc.block("history"); h != nil {
		im.history(h, p.cfg.History)
	}
	if rc.block("gateway") != nil && shown.Gateway != nil {
		// Native files only; tokens keep their token_env / token_sha256,
		// never a secret.
		im.w.block(0, "gateway", shown.Gateway)
	}
	var allowed []string
	if sec := rc.block("security"); sec != nil {
		if ac := sec.get("allowed_commands"); ac != nil {
			for _, it := range ac.value.items {
				allowed = append(allowed, im.rewrite(it.text))
			}
		}
	}
	if len(allowed) > 0 || len(pending) > 0 || len(trusted) > 0 {
		body.line(0, "security:")
		body.line(1, "allowed_commands:")
		for _, a := range allowed {
			body.line(2, "- "+quoteYAML(a))
		}
		if len(trusted) > 0 {
			body.line(2, "# allowed because you trust "+strings.ReplaceAll(p.trust.abs, "\n", " "))
		}
		for _, c := range trusted {
			body.line(2, "- "+quoteYAML(strings.ReplaceAll(c, "$", "$$")))
		}
		for _, c := range pending {
			body.line(2, "# - "+quoteYAML(strings.ReplaceAll(c, "$", "$$")))
		}
	}
	if len(p.cfg.Servers) == 0 {
		body.line(0, "servers: []")
	} else {
		// Each server as read, by name: reading skips Switchboard's own
		// entry in a client's file (with a warning, which becomes a note),
		// so the file's servers and the read ones do not pair by position.
		read := make(map[string]Server, len(p.cfg.Servers))
		for _, srv := range p.cfg.Servers {
			read[srv.Name] = srv
		}
		body.line(0, "servers:")
		for _, s := range rc.servers {
			if srv, ok := read[s.name]; ok {
				im.server(s, srv)
			}
		}
	}

	head := &yamlWriter{}
	head.line(0, SchemaComment)
	head.line(0, fmt.Sprintf("# Imported from %s (%s format) by switchboard config import.", path, rc.format))
	head.line(0, "# Review it before use: docs/configuration.md describes every field.")
	for _, w := range p.cfg.Warnings {
		im.notes = append(im.notes, w.String())
	}
	for _, n := range im.notes {
		head.line(0, "# note: "+strings.ReplaceAll(n, "\n", " "))
	}
	return append(head.bytes(), body.bytes()...)
}

// rewrite converts a string as written into native form (see rewriteVars),
// noting the rewrites the reader should know of.
func (im *importer) rewrite(s string) string {
	out, notes := rewriteVars(s, im.rw)
	for _, note := range notes {
		if !contains(im.notes, note) {
			im.notes = append(im.notes, note)
		}
	}
	return out
}

// passwordKeys are the env and header keys of s whose values refer to a
// VS Code password input (usesPassword), which are not named like
// credentials: the import lists them under secrets, so that the native
// file keeps them secret as the source does.
func (im *importer) passwordKeys(s *rawServer) []string {
	var keys []string
	for _, name := range []string{"env", "headers"} {
		f := s.field(name)
		if f == nil || f.val.kind != kindMap {
			continue
		}
		for _, p := range f.val.pairs {
			if !IsSecretKey(p.key) && usesPassword(p.value.text, im.rw.syntax, im.rw.inputs) {
				keys = append(keys, p.key)
			}
		}
	}
	return keys
}

// path rewrites a path and makes a relative one absolute.
func (im *importer) path(s string) string {
	v := im.rewrite(s)
	if v == "" || strings.HasPrefix(v, "$") || filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(strings.ReplaceAll(im.dir, "$", "$$"), v)
}

// history writes the history: block: the store as written (its variables
// kept, a relative file path made absolute), the rest resolved.
func (im *importer) history(n *node, h History) {
	w := im.w
	w.line(0, "history:")
	if p := n.get("store"); p != nil && p.value.isScalar() {
		v := p.value.text
		if isDSN(v) {
			v = im.rewrite(v)
		} else {
			v = im.path(v)
		}
		w.kv(1, "store", quoteYAML(v))
	}
	w.kv(1, "record_values", strconv.FormatBool(h.RecordValues))
	w.kv(1, "keep", strconv.Itoa(h.Keep))
}

// server writes one server in native form, from its fields as written
// (srv is its resolved form, for the values a client writes in other
// units).
func (im *importer) server(s *rawServer, srv Server) {
	w := im.w
	const in = 2
	w.line(1, "- name: "+quoteYAML(s.name))
	if f := s.field("description"); f != nil && f.val.isScalar() {
		w.kv(in, "description", quoteYAML(im.rewrite(f.val.text)))
	} else if f := s.field(fieldServer); f != nil && f.val.isScalar() {
		w.kv(in, "description", quoteYAML(im.rewrite(f.val.text)))
	}
	w.kv(in, "transport", string(s.transport))
	passwords := im.passwordKeys(s)
	typed := reflect.ValueOf(cmp.Or(s.typed, &schema.Server{})).Elem()
	for _, sf := range serverFields {
		f := s.field(sf.name)
		v := typed.FieldByIndex(sf.index)
		if v.Kind() == reflect.Map {
			im.stringMap(s, sf.name, f)
			continue
		}
		if f == nil || v.IsZero() || slices.Contains([]string{"name", "description", "transport"}, sf.name) {
			continue
		}
		switch x := v.Interface().(type) {
		case *string:
			if sf.name == "env_file" || sf.name == "cwd" {
				w.kv(in, sf.name, quoteYAML(im.path(f.val.text)))
			} else {
				w.kv(in, sf.name, quoteYAML(im.rewrite(f.val.text)))
			}
		case []string, []schema.Text:
			if sf.name == "secrets" {
				keys := texts(f.val.items)
				for _, k := range passwords {
					if !slices.Contains(keys, k) {
						keys = append(keys, k)
					}
				}
				w.kv(in, sf.name, "["+strings.Join(quoteAll(keys), ", ")+"]")
			} else if sf.name == "roots" {
				w.kv(in, sf.name, im.roots(f.val.items))
			} else {
				w.kv(in, sf.name, im.list(f.val.items))
			}
		case *bool:
			w.kv(in, sf.name, strconv.FormatBool(*x))
		case *int:
			w.kv(in, sf.name, strconv.Itoa(*x))
		case *schema.Duration:
			w.kv(in, sf.name, formatDuration(x.Std()))
		case *schema.Docker:
			im.docker(f.val, x)
		case *schema.Launch:
			if x.Allow != nil {
				w.kv(in, "launch", "{allow: ["+strings.Join(quoteAll(x.Allow), ", ")+"]}")
			}
		}
	}
	if s.field("secrets") == nil && len(passwords) > 0 {
		w.kv(in, "secrets", "["+strings.Join(quoteAll(passwords), ", ")+"]")
	}
	if s.field("timeout") == nil && (s.field(fieldConnectTimeoutS) != nil || s.field(fieldConnectTimeoutMS) != nil) {
		w.kv(in, "timeout", formatDuration(srv.ConnectTimeout))
	}
	if s.field("request_timeout") == nil && (s.field(fieldRequestTimeoutS) != nil || s.field(fieldRequestTimeoutMS) != nil) {
		w.kv(in, "request_timeout", formatDuration(srv.RequestTimeout))
	}
	if f := s.field(fieldDisabled); f != nil && f.val.text == "true" || s.disabledBy != "" {
		w.kv(in, "enabled", "false")
	}
	if s.spec.format == FormatToolsV1 && s.field("request_timeout") == nil {
		w.kv(in, "request_timeout", formatDuration(toolsRequestTimeout))
	}
}

// stringMap writes env or headers: the entries as written, and those a
// client takes from the environment (Codex's env_vars, env_http_headers
// and bearer_token_env_var) as variable references.
func (im *importer) stringMap(s *rawServer, name string, f *rawField) {
	type kv struct{ k, v string }
	var out []kv
	if f != nil && f.val.kind == kindMap {
		for _, p := range f.val.pairs {
			v := im.rewrite(p.value.text)
			out = append(out, kv{quoteYAML(p.key), quoteYAML(v)})
			if p.value.text != "" && !strings.Contains(v, "${") && IsSecretKey(p.key) {
				im.notes = append(im.notes, fmt.Sprintf("%s.%s.%s was written as a literal value and is copied as it is: "+
					"if it is a secret, keep it out of this file: set it in an environment variable and write ${VARIABLE} here",
					s.name, name, p.key))
			}
		}
	}
	has := func(k string) bool {
		return slices.ContainsFunc(out, func(e kv) bool { return e.k == quoteYAML(k) })
	}
	fromEnv := func(k, v string) {
		if !has(k) && varName().MatchString(v) {
			out = append(out, kv{quoteYAML(k), quoteYAML("${" + v + ":-}")})
			note := fmt.Sprintf("%s.%s is now ${%s:-}: empty rather than absent when %s is not set", s.name, k, v, v)
			im.notes = append(im.notes, note)
		}
	}
	switch name {
	case "env":
		if e := s.field(fieldEnvVars); e != nil {
			for _, it := range e.val.items {
				fromEnv(it.text, it.text)
			}
		}
	case "headers":
		if e := s.field(fieldEnvHeaders); e != nil {
			for _, p := range e.val.pairs {
				fromEnv(p.key, p.value.text)
			}
		}
		if b := s.field(fieldBearerEnv); b != nil && b.val.isScalar() && varName().MatchString(b.val.text) && !has("Authorization") {
			out = append(out, kv{quoteYAML("Authorization"), quoteYAML("Bearer ${" + b.val.text + "}")})
		}
	}
	if len(out) == 0 {
		return
	}
	im.w.line(2, name+":")
	for _, e := range out {
		im.w.kv(3, e.k, e.v)
	}
}

// docker writes a server's docker: block: the strings as written, the
// ports as read.
func (im *importer) docker(n *node, d *schema.Docker) {
	const in = 3
	w := im.w
	w.line(in-1, "docker:")
	for _, p := range n.pairs {
		switch p.key {
		case "image", "container_name":
			w.kv(in, p.key, quoteYAML(im.rewrite(p.value.text)))
		case "command":
			w.kv(in, p.key, im.list(p.value.items))
		case "ports":
			if len(p.value.pairs) == 0 {
				continue
			}
			w.line(in, "ports:")
			for _, pp := range p.value.pairs {
				w.kv(in+1, quoteYAML(pp.key), strconv.Itoa(d.Ports[pp.key]))
			}
		}
	}
}

func (im *importer) list(items []*node) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = quoteYAML(im.rewrite(it.text))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// roots writes a server's roots as written, relative paths made absolute
// as the resolver reads them (from dir); a file:// URI and a ~/ path are
// kept, each meaning the same wherever the output is.
func (im *importer) roots(items []*node) string {
	out := make([]string, len(items))
	for i, it := range items {
		v := im.rewrite(it.text)
		if !strings.Contains(v, "://") && !strings.HasPrefix(v, "~/") {
			v = im.path(it.text)
		}
		out[i] = quoteYAML(v)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func texts(items []*node) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return out
}
