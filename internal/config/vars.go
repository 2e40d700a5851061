package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// varName is the form of an environment variable name in ${NAME}.
var varName = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// refKind classifies a ${...} reference.
type refKind int

const (
	refEnv           refKind = iota // ${NAME}, ${env:NAME}
	refWorkspace                    // ${workspaceFolder}
	refWorkspaceBase                // ${workspaceFolderBasename}
	refInput                        // ${input:id}: a VS Code input
	refIdentity                     // ${identity.user}, ${identity.session}: kept in headers
	refUserHome                     // ${userHome}
	refPathSep                      // ${pathSeparator}, ${/}
	refFile                         // ${file:PATH}: the file's contents (Windsurf)
	refSecret                       // ${{ secrets.NAME }}, ${{ inputs.NAME }} (Continue)
	refInvalid                      // anything else
	refUnterminated                 // "${" with no closing brace
)

// segment is one piece of a string that may hold variable references:
// either literal text or a reference.
type segment struct {
	lit string
	ref *varRef
}

// varRef is one ${...} reference.
type varRef struct {
	raw    string // the whole reference as written, e.g. ${A:-x}
	kind   refKind
	name   string    // variable name (refEnv, refSecret), input id (refInput) or path (refFile)
	hasDef bool      // written with :-
	def    []segment // the default, itself possibly holding references
}

// varSyntax is the reference syntax a file format adds to the common one.
type varSyntax struct {
	// bareDollar expands $NAME as well as ${NAME} (Gemini CLI).
	bareDollar bool
	// templates reads ${{ secrets.NAME }} and ${{ inputs.NAME }}
	// (Continue).
	templates bool
}

// scanVars splits s into literal text and ${...} references. "$$" is a
// literal "$"; a "$" not followed by "{" or "$" is literal too.
func scanVars(s string) []segment { return scanVarsWith(s, varSyntax{}) }

// scanVarsWith is scanVars with a format's own additions.
func scanVarsWith(s string, syn varSyntax) []segment {
	var out []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, segment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 >= len(s) {
			lit.WriteByte(s[i])
			i++
			continue
		}
		switch c := s[i+1]; {
		case c == '$':
			lit.WriteByte('$')
			i += 2
			continue
		case c == '{' && syn.templates && i+2 < len(s) && s[i+2] == '{':
			end := strings.Index(s[i+3:], "}}")
			flush()
			if end < 0 {
				out = append(out, segment{ref: &varRef{raw: s[i:], kind: refUnterminated}})
				return out
			}
			raw := s[i : i+3+end+2]
			out = append(out, segment{ref: parseTemplate(raw, s[i+3:i+3+end])})
			i += 3 + end + 2
			continue
		case c == '{':
		case syn.bareDollar && (c == '_' || isAlpha(c)):
			j := i + 2
			for j < len(s) && (s[j] == '_' || isAlpha(s[j]) || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			flush()
			out = append(out, segment{ref: &varRef{raw: s[i:j], kind: refEnv, name: s[i+1 : j]}})
			i = j
			continue
		default:
			lit.WriteByte('$')
			i++
			continue
		}
		end := closingBrace(s, i+2)
		flush()
		if end < 0 {
			out = append(out, segment{ref: &varRef{raw: s[i:], kind: refUnterminated}})
			return out
		}
		out = append(out, segment{ref: parseRef(s[i:end+1], s[i+2:end])})
		i = end + 1
	}
	flush()
	return out
}

// parseTemplate classifies the body of a Continue ${{ ... }} template:
// secrets.NAME and inputs.NAME are supported.
func parseTemplate(raw, body string) *varRef {
	body = strings.TrimSpace(body)
	for _, prefix := range []string{"secrets.", "inputs."} {
		if name, ok := strings.CutPrefix(body, prefix); ok && varName().MatchString(name) {
			return &varRef{raw: raw, kind: refSecret, name: name}
		}
	}
	return &varRef{raw: raw, kind: refInvalid}
}

// closingBrace returns the index of the "}" closing a reference whose body
// starts at i, allowing nested ${...} in defaults, or -1.
func closingBrace(s string, i int) int {
	depth := 1
	for j := i; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '$':
			j++
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			depth++
			j++
		case s[j] == '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// parseRef classifies the body of a ${...} reference.
func parseRef(raw, body string) *varRef {
	r := &varRef{raw: raw, kind: refInvalid}
	if id, ok := strings.CutPrefix(body, "input:"); ok {
		r.kind, r.name = refInput, id
		return r
	}
	if raw == IdentityUser || raw == IdentitySession {
		r.kind = refIdentity
		return r
	}
	switch body {
	case "userHome":
		r.kind = refUserHome
		return r
	case "pathSeparator", "/":
		r.kind = refPathSep
		return r
	}
	if p, ok := strings.CutPrefix(body, "file:"); ok && p != "" {
		r.kind, r.name = refFile, p
		return r
	}
	name, def, hasDef := strings.Cut(body, ":-")
	env := false
	if n, ok := strings.CutPrefix(name, "env:"); ok {
		name, env = n, true
	}
	switch {
	case !env && name == "workspaceFolder":
		r.kind = refWorkspace
	case !env && name == "workspaceFolderBasename":
		r.kind = refWorkspaceBase
	case varName().MatchString(name):
		r.kind = refEnv
	default:
		return r
	}
	r.name, r.hasDef = name, hasDef
	if hasDef {
		r.def = scanVars(def)
	}
	return r
}

// varProblem is a reference that could not be expanded.
type varProblem struct {
	msg, fix string
	err      error // *UnresolvedVariableError for unset variables
}

// expander expands variable references.
type expander struct {
	lookup    func(string) (string, bool)
	workspace string // the value of ${workspaceFolder}
	home      string // the value of ${userHome}; "" means os.UserHomeDir
	dir       string // the folder relative ${file:...} paths start at
	syntax    varSyntax
	// input resolves a VS Code ${input:id}; nil means the file declares
	// no inputs.
	input func(id, field string) (string, *varProblem)
	// secret looks up a Continue ${{ secrets.NAME }}; nil means lookup.
	secret func(name string) (string, bool)
}

// expand expands every reference in s. field names the field, for
// UnresolvedVariableError. Problems are returned, not recorded; the
// expanded value then holds "" for each failed reference. Identity
// placeholders are problems here: they are only valid in headers.
func (x *expander) expand(s, field string) (string, []varProblem) {
	return x.expandWith(s, field, false)
}

// expandHeader is expand for a server's header values, where the identity
// placeholders (IdentityUser, IdentitySession) are kept as written, to be
// filled per request by the upstream transport.
func (x *expander) expandHeader(s, field string) (string, []varProblem) {
	return x.expandWith(s, field, true)
}

func (x *expander) expandWith(s, field string, identity bool) (string, []varProblem) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var probs []varProblem
	x.expandSegs(&b, scanVarsWith(s, x.syntax), field, identity, &probs)
	return b.String(), probs
}

func (x *expander) expandSegs(b *strings.Builder, segs []segment, field string, identity bool, probs *[]varProblem) {
	for _, sg := range segs {
		if sg.ref == nil {
			b.WriteString(sg.lit)
			continue
		}
		r := sg.ref
		switch r.kind {
		case refEnv:
			if v, ok := x.lookup(r.name); ok && (v != "" || !r.hasDef) {
				b.WriteString(v)
			} else if r.hasDef {
				x.expandSegs(b, r.def, field, identity, probs)
			} else {
				*probs = append(*probs, varProblem{
					msg: fmt.Sprintf("variable %s is not set", r.name),
					fix: fmt.Sprintf("set it in the environment, or give a default: ${%s:-value}", r.name),
					err: &UnresolvedVariableError{Variable: r.name, Field: field},
				})
			}
		case refWorkspace:
			b.WriteString(x.workspace)
		case refWorkspaceBase:
			b.WriteString(filepath.Base(x.workspace))
		case refInput:
			if x.input == nil {
				*probs = append(*probs, varProblem{
					msg: fmt.Sprintf("%s refers to a VS Code input, but this file declares no inputs", r.raw),
					fix: fmt.Sprintf("set the environment variable %s and use ${%s}", InputEnvName(r.name), InputEnvName(r.name)),
				})
				continue
			}
			v, p := x.input(r.name, field)
			if p != nil {
				*probs = append(*probs, *p)
				continue
			}
			b.WriteString(v)
		case refUserHome:
			b.WriteString(x.userHome())
		case refPathSep:
			b.WriteString(string(filepath.Separator))
		case refFile:
			v, p := x.file(r.name)
			if p != nil {
				*probs = append(*probs, *p)
				continue
			}
			b.WriteString(v)
		case refSecret:
			look := x.secret
			if look == nil {
				look = x.lookup
			}
			if v, ok := look(r.name); ok {
				b.WriteString(v)
			} else {
				*probs = append(*probs, varProblem{
					msg: fmt.Sprintf("secret %s (%s) is not set", r.name, strings.TrimSpace(r.raw)),
					fix: fmt.Sprintf("set %s in the environment, or in ~/.continue/.env", r.name),
					err: &UnresolvedVariableError{Variable: r.name, Field: field},
				})
			}
		case refIdentity:
			if identity {
				b.WriteString(r.raw)
			} else {
				*probs = append(*probs, varProblem{
					msg: fmt.Sprintf("%s is only valid in the headers of http, sse and websocket servers", r.raw),
					fix: "move it to a header value, or write $$ for a literal $",
				})
			}
		case refUnterminated:
			*probs = append(*probs, varProblem{
				msg: fmt.Sprintf("unterminated variable reference %q", r.raw),
				fix: "close it with }, or write $$ for a literal $",
			})
		default:
			*probs = append(*probs, varProblem{
				msg: fmt.Sprintf("invalid variable reference %q", r.raw),
				fix: "use ${NAME} or ${NAME:-default}, and $$ for a literal $",
			})
		}
	}
}

// rewriteCtx is what rewriting a string for a native file needs.
type rewriteCtx struct {
	workspace string           // the value of ${workspaceFolder}
	dir       string           // the folder relative ${file:...} paths start at
	syntax    varSyntax        // the source format's variable syntax
	inputs    map[string]Input // the source's VS Code inputs, for their defaults
}

// rewriteVars returns s with references rewritten for a native file:
// ${env:X}, a bare $X and ${{ secrets.X }} become ${X}, ${workspaceFolder}
// the folder (with $ escaped), a relative ${file:...} path an absolute
// one, and ${input:id} a reference to the environment variable
// InputEnvName(id), with the input's default if it has one. Everything
// else is kept as written. It returns a note for each rewrite the reader
// should know of.
func rewriteVars(s string, rc rewriteCtx) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var notes []string
	rewriteSegs(&b, scanVarsWith(s, rc.syntax), rc, &notes)
	return b.String(), notes
}

func rewriteSegs(b *strings.Builder, segs []segment, rc rewriteCtx, notes *[]string) {
	for _, sg := range segs {
		if sg.ref == nil {
			b.WriteString(strings.ReplaceAll(sg.lit, "$", "$$"))
			continue
		}
		r := sg.ref
		switch r.kind {
		case refEnv:
			b.WriteString("${" + r.name)
			if r.hasDef {
				b.WriteString(":-")
				rewriteSegs(b, r.def, rc, notes)
			}
			b.WriteString("}")
		case refSecret:
			*notes = append(*notes, fmt.Sprintf("%s is now ${%s}: set %s in the environment (a native file does not read Continue's .env files)", strings.TrimSpace(r.raw), r.name, r.name))
			b.WriteString("${" + r.name + "}")
		case refWorkspace:
			b.WriteString(strings.ReplaceAll(rc.workspace, "$", "$$"))
		case refWorkspaceBase:
			b.WriteString(strings.ReplaceAll(filepath.Base(rc.workspace), "$", "$$"))
		case refFile:
			p := r.name
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") && rc.dir != "" {
				p = filepath.Join(rc.dir, p)
			}
			b.WriteString("${file:" + strings.ReplaceAll(p, "$", "$$") + "}")
		case refInput:
			name := InputEnvName(r.name)
			*notes = append(*notes, fmt.Sprintf("${input:%s} is now ${%s}: set %s in the environment", r.name, name, name))
			b.WriteString("${" + name)
			if in, ok := rc.inputs[r.name]; ok && in.Default != "" {
				b.WriteString(":-" + strings.ReplaceAll(strings.ReplaceAll(in.Default, "$", "$$"), "}", ""))
			}
			b.WriteString("}")
		default:
			b.WriteString(r.raw)
		}
	}
}

// InputEnvPrefix starts the name of every variable InputEnvName gives.
const InputEnvPrefix = "SWITCHBOARD_INPUT_"

// InputEnvName is the environment variable that gives a VS Code input its
// value: SWITCHBOARD_INPUT_ and the id in upper case with every character
// other than a letter or digit as _, so "github-token" is
// SWITCHBOARD_INPUT_GITHUB_TOKEN. The prefix keeps an input id from
// meaning an unrelated variable (an input named "path" is not PATH).
func InputEnvName(id string) string {
	var b strings.Builder
	b.WriteString(InputEnvPrefix)
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// userHome is the value of ${userHome}.
func (x *expander) userHome() string {
	if x.home != "" {
		return x.home
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return ""
}

// file reads the file a ${file:PATH} reference names: an absolute path,
// one starting with ~/, or a path relative to the configuration file's
// folder. One trailing line break is dropped.
func (x *expander) file(p string) (string, *varProblem) {
	fix := "create the file, or fix the path"
	if !strings.HasPrefix(p, "~/") && !filepath.IsAbs(p) {
		fix += " (relative paths start at the configuration file's folder)"
	}
	switch {
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(x.userHome(), p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(x.dir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", &varProblem{
			msg: fmt.Sprintf("cannot read %s for ${file:...}: %v", p, errors.Unwrap(err)),
			fix: fix,
			err: err,
		}
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	return v, nil
}

// workspaceFolder is the value of ${workspaceFolder} for a file in a
// project: the folder holding its client folder (.vscode, .cursor, ...;
// see projectClientDirs), or else the file's own folder.
func workspaceFolder(filename string) string {
	dir := filepath.Dir(filename)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if contains(projectClientDirs, filepath.Base(dir)) {
		return filepath.Dir(dir)
	}
	// .continue/mcpServers/x.yaml
	if filepath.Base(dir) == "mcpServers" && filepath.Base(filepath.Dir(dir)) == ".continue" {
		return filepath.Dir(filepath.Dir(dir))
	}
	return dir
}

// lookupOrEnv returns the lookup function, defaulting to os.LookupEnv.
func lookupOrEnv(f func(string) (string, bool)) func(string) (string, bool) {
	if f == nil {
		return os.LookupEnv
	}
	return f
}
