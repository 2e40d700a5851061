package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// VS Code's mcp.json (and the "mcp" block of its settings.json) declares
// "inputs": values such as API keys that VS Code asks for the first time a
// server needs them, referred to as ${input:id}. Switchboard resolves them
// with one InputResolver, the same for every command (config validate,
// config import, serve), so that they agree on each value and on what
// happens without one.

// The input types VS Code defines.
const (
	InputPromptString = "promptString" // free text, optionally a password
	InputPickString   = "pickString"   // one of Options
	InputCommand      = "command"      // the result of a VS Code command
)

// Input is one VS Code input variable, as declared under "inputs".
type Input struct {
	ID          string
	Type        string // InputPromptString, InputPickString or InputCommand
	Description string
	Default     string
	Password    bool     // promptString: hide what is typed
	Options     []string // pickString: the values to pick from
	Command     string   // command: the VS Code command that gives the value
	// File is the configuration file that declares the input, absolute.
	File string
}

// SecretStore keeps the values of inputs between runs, so that a value
// given once on a terminal is there for the daemon, which has none.
type SecretStore interface {
	// Secret returns the value stored under key, if there is one.
	Secret(key string) (value string, ok bool, err error)
	// SetSecret stores value under key.
	SetSecret(key, value string) error
}

// InputResolver finds the values of VS Code input variables. The zero
// value reads the environment only.
type InputResolver struct {
	// Prompt asks the person at the terminal for the value of in (without
	// echo when in.Password). Nil means there is no terminal to ask.
	Prompt func(in Input) (string, error)
	// Secrets, when set, is asked before the prompt and keeps what the
	// prompt returns.
	Secrets SecretStore
}

// InputSecretKey is the key under which the value of the input id of the
// configuration file at path is kept in a SecretStore.
func InputSecretKey(path, id string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "vscode-input:" + path + "#" + id
}

// Resolve returns the value of in. It is, in order: the environment
// variable InputEnvName(in.ID) (lookup; nil means none), the value kept in
// the secret store, the answer to the prompt (then kept in the store), and
// the input's default. A pickString value must be one of its options.
// Without any of them it returns an *InputUnsetError that names the
// variable to set.
func (r *InputResolver) Resolve(in Input, lookup func(string) (string, bool)) (string, error) {
	check := func(v, from string) (string, error) {
		if in.Type == InputPickString && len(in.Options) > 0 && !slices.Contains(in.Options, v) {
			return "", fmt.Errorf("the value of input %q (from %s) is not one of its options (%s)", in.ID, from, strings.Join(in.Options, ", "))
		}
		return v, nil
	}
	env := InputEnvName(in.ID)
	if lookup != nil {
		if v, ok := lookup(env); ok {
			return check(v, env)
		}
	}
	if r == nil {
		r = &InputResolver{}
	}
	key := InputSecretKey(in.File, in.ID)
	if r.Secrets != nil {
		v, ok, err := r.Secrets.Secret(key)
		if err != nil {
			return "", fmt.Errorf("reading input %q from the secret store: %w", in.ID, err)
		}
		if ok {
			return check(v, "the secret store")
		}
	}
	if r.Prompt != nil && in.Type != InputCommand {
		v, err := r.Prompt(in)
		if err != nil {
			return "", fmt.Errorf("asking for input %q: %w", in.ID, err)
		}
		if v == "" && in.Default != "" {
			v = in.Default
		}
		if v, err = check(v, "the answer"); err != nil {
			return "", err
		}
		if r.Secrets != nil {
			if err := r.Secrets.SetSecret(key, v); err != nil {
				return "", fmt.Errorf("keeping input %q in the secret store: %w", in.ID, err)
			}
		}
		return v, nil
	}
	if in.Default != "" {
		return check(in.Default, "its default")
	}
	return "", &InputUnsetError{ID: in.ID, EnvVar: env, Command: in.Command, File: in.File}
}

// InputUnsetError reports a VS Code input that has no value: no
// environment variable, nothing stored, no terminal to ask and no
// default.
type InputUnsetError struct {
	ID      string // the input id
	EnvVar  string // the environment variable that would give it a value
	Command string // for a command input, the VS Code command
	File    string // the configuration file that uses the input
}

// Error names the input and says how to give it a value (Fix).
func (e *InputUnsetError) Error() string { return e.Problem() + "; " + e.Fix() }

// Problem says what is wrong, without the fix.
func (e *InputUnsetError) Problem() string {
	if e.Command != "" {
		return fmt.Sprintf("input %q is the result of the VS Code command %s, which Switchboard cannot run", e.ID, e.Command)
	}
	return fmt.Sprintf("input %q has no value", e.ID)
}

// Fix says how to give the input a value: store it in the secret store
// (StoreInputCommand), which a running serve reads at its next reload,
// or set the variable EnvVar.
func (e *InputUnsetError) Fix() string {
	store := "store it: " + StoreInputCommand(e.File, e.ID) + " (it asks without echo; --stdin reads it from a pipe)"
	if e.File == "" {
		store = "store it: switchboard config input " + quoteForShell(e.ID) + " FILE"
	}
	return fmt.Sprintf("%s, or set %s", store, e.EnvVar)
}

// StoreInputCommand is the command that stores the value of the input id
// of the configuration file at path in the secret store.
func StoreInputCommand(path, id string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "switchboard config input " + quoteForShell(id) + " " + quoteForShell(path)
}

// decodeInputs reads a VS Code "inputs" list.
func decodeInputs(n *node, field, file string, ps *problems) map[string]Input {
	out := map[string]Input{}
	if n == nil || n.kind == kindNull {
		return out
	}
	if n.kind != kindSeq {
		ps.warn(n.pos, field, fmt.Sprintf("ignored: inputs must be a list, not %s", n.kind.describe()), "")
		return out
	}
	abs := file
	if a, err := filepath.Abs(file); err == nil {
		abs = a
	}
	for i, it := range n.items {
		f := fmt.Sprintf("%s[%d]", field, i)
		if it.kind != kindMap {
			ps.warn(it.pos, f, fmt.Sprintf("ignored: an input must be a mapping, not %s", it.kind.describe()), "")
			continue
		}
		in := Input{File: abs}
		text := func(key string) string {
			if p := it.get(key); p != nil && p.value.isScalar() {
				return p.value.text
			}
			return ""
		}
		in.ID, in.Type, in.Description, in.Default = text("id"), text("type"), text("description"), text("default")
		in.Password = text("password") == "true"
		if p := it.get("options"); p != nil {
			for _, o := range p.value.items {
				switch {
				case o.isScalar():
					in.Options = append(in.Options, o.text)
				case o.kind == kindMap && o.get("value") != nil:
					in.Options = append(in.Options, o.get("value").value.text)
				}
			}
		}
		in.Command = text("command")
		switch {
		case in.ID == "":
			ps.warn(it.pos, f, "ignored: the input has no id", "")
			continue
		case in.Type != InputPromptString && in.Type != InputPickString && in.Type != InputCommand:
			ps.warn(it.pos, f, fmt.Sprintf("input %q has unknown type %q; it is read as a promptString", in.ID, in.Type), "")
			in.Type = InputPromptString
		}
		out[in.ID] = in
	}
	return out
}

// usesPassword reports whether the string s, as written in a file of
// syntax syn, refers to one of inputs declared password: true. The key
// such a value goes to is secret whatever its name (Server.Secrets):
// config show hides its value, the redactor removes it, and config import
// lists the key under secrets.
func usesPassword(s string, syn varSyntax, inputs map[string]Input) bool {
	if len(inputs) == 0 || !strings.Contains(s, "${input:") {
		return false
	}
	return slices.ContainsFunc(scanVarsWith(s, syn), func(sg segment) bool {
		return sg.ref != nil && sg.ref.kind == refInput && inputs[sg.ref.name].Password
	})
}

// inputResult is the outcome of resolving one input.
type inputResult struct {
	v   string
	err error
}

// inputExpander returns the expander's input function for the declared
// inputs of a file: each input is resolved once, on first use, and kept in
// done.
func inputExpander(inputs map[string]Input, file string, res *InputResolver, lookup func(string) (string, bool), ps *problems, done map[string]inputResult) func(id, field string) (string, *varProblem) {
	abs := file
	if a, err := filepath.Abs(file); err == nil {
		abs = a
	}
	warned := map[string]bool{}
	return func(id, field string) (string, *varProblem) {
		in, declared := inputs[id]
		if !declared {
			in = Input{ID: id, Type: InputPromptString, File: abs}
			if !warned[id] {
				warned[id] = true
				ps.warn(Pos{File: file}, field, fmt.Sprintf("${input:%s} is not declared under inputs", id), "declare it, or use an environment variable")
			}
		}
		r, seen := done[id]
		if !seen {
			v, err := res.Resolve(in, lookup)
			r = inputResult{v, err}
			done[id] = r
		}
		if r.err == nil {
			return r.v, nil
		}
		var unset *InputUnsetError
		if errors.As(r.err, &unset) {
			return "", &varProblem{msg: unset.Problem(), fix: unset.Fix(), err: r.err}
		}
		return "", &varProblem{msg: r.err.Error(), err: r.err}
	}
}

// FileInputs returns the VS Code inputs the configuration file at path
// declares, by id, and its format. A file in another format declares
// none (the map is nil); a file that cannot be read or parsed is an
// error. The servers are not resolved: no input is asked for.
func FileInputs(path string) (map[string]Input, Format, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading configuration file %s: %w", path, err)
	}
	ps := &problems{}
	root := parseTree(path, data, ps)
	if len(ps.errs) > 0 {
		return nil, "", &ValidationError{Problems: sortProblems(ps.errs, path)}
	}
	wd, _ := os.Getwd()
	rc := decodeRaw(root, decodeContext{file: path, workDir: wd}, ps)
	return rc.inputs, rc.format, nil
}
