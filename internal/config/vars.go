package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// varName is the form of an environment variable name in ${NAME}.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// refKind classifies a ${...} reference.
type refKind int

const (
	refEnv           refKind = iota // ${NAME}, ${env:NAME}
	refWorkspace                    // ${workspaceFolder}
	refWorkspaceBase                // ${workspaceFolderBasename}
	refInput                        // ${input:id}: not supported
	refIdentity                     // ${identity.user}, ${identity.session}: kept in headers
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
	name   string    // variable name (refEnv) or input id (refInput)
	hasDef bool      // written with :-
	def    []segment // the default, itself possibly holding references
}

// scanVars splits s into literal text and ${...} references. "$$" is a
// literal "$"; a "$" not followed by "{" or "$" is literal too.
func scanVars(s string) []segment {
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
		switch s[i+1] {
		case '$':
			lit.WriteByte('$')
			i += 2
			continue
		case '{':
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
	case varName.MatchString(name):
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

// inputVariableError marks a ${input:id} reference, which Import rewrites.
type inputVariableError struct{ id string }

// Error names the input.
func (e *inputVariableError) Error() string {
	return "VS Code input variable ${input:" + e.id + "} is not supported"
}

// expander expands variable references.
type expander struct {
	lookup    func(string) (string, bool)
	workspace string // the value of ${workspaceFolder}
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
	x.expandSegs(&b, scanVars(s), field, identity, &probs)
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
			*probs = append(*probs, varProblem{
				msg: fmt.Sprintf("VS Code input variables are not supported (%s)", r.raw),
				fix: fmt.Sprintf("set an environment variable and use ${%s}", inputEnvName(r.name)),
				err: &inputVariableError{id: r.name},
			})
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

// rewriteVars returns s with references rewritten for a native file:
// ${env:X} becomes ${X}, ${workspaceFolder} the folder (with $ escaped),
// and ${input:id} a reference to an environment variable named after the
// id. Everything else is kept as written. It reports the inputs replaced.
func rewriteVars(s, workspace string) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var inputs []string
	rewriteSegs(&b, scanVars(s), workspace, &inputs)
	return b.String(), inputs
}

func rewriteSegs(b *strings.Builder, segs []segment, workspace string, inputs *[]string) {
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
				rewriteSegs(b, r.def, workspace, inputs)
			}
			b.WriteString("}")
		case refWorkspace:
			b.WriteString(strings.ReplaceAll(workspace, "$", "$$"))
		case refWorkspaceBase:
			b.WriteString(strings.ReplaceAll(filepath.Base(workspace), "$", "$$"))
		case refInput:
			name := inputEnvName(r.name)
			*inputs = append(*inputs, r.name+" -> "+name)
			b.WriteString("${" + name + "}")
		default:
			b.WriteString(r.raw)
		}
	}
}

// inputEnvName derives an environment variable name from a VS Code input
// id: "github-token" becomes GITHUB_TOKEN.
func inputEnvName(id string) string {
	var b strings.Builder
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
	name := b.String()
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		name = "_" + name
	}
	return name
}

// workspaceFolder is the value of ${workspaceFolder} for a file: the folder
// holding its .vscode folder, or else the file's own folder.
func workspaceFolder(filename string) string {
	dir := filepath.Dir(filename)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if filepath.Base(dir) == ".vscode" {
		return filepath.Dir(dir)
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
