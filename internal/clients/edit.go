package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/diff"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Options are how a change is made.
type Options struct {
	// DryRun computes the change and writes nothing.
	DryRun bool
	// Now is the clock that names backups; nil is time.Now.
	Now func() time.Time
	// Served reports whether Switchboard serves the client's entry called
	// name itself (Connect): such an entry runs twice, once by the client
	// and once through the gateway. Nil: none is.
	Served func(name string) bool
	// Move makes Connect take the entries Served reports out of the file
	// (into Change.Moved), so that they run once, through the gateway.
	Move bool
	// Restore are entries Disconnect puts back into the file (those a
	// Connect with Move took out), unless the file has one of that name.
	Restore []MovedEntry
}

// MovedEntry is an entry Connect took out of a client's file: its name,
// and its value as the file had it (standard JSON, its keys in the file's
// order), to put back as it was.
type MovedEntry struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// Change is what Connect or Disconnect did (or, with DryRun, would do) to
// a client's file.
type Change struct {
	Target Target
	// Changed is false when the file already was as asked: nothing was
	// written.
	Changed bool
	// Created is true when the file did not exist.
	Created bool
	// Replaced is true when an entry of that name existed with other
	// fields (Connect).
	Replaced bool
	// Backup is the copy of the file as it was, when one was written.
	Backup string
	// Before and After are the file's contents.
	Before, After []byte
	// Previous is the entry's fields before the change, if it had any.
	Previous map[string]any
	// Duplicates are the file's other entries that Options.Served reports
	// (Connect), in the file's order; Moved are those taken out of the
	// file (Options.Move).
	Duplicates []string
	Moved      []MovedEntry
	// Restored are the entries of Options.Restore put back (Disconnect);
	// Kept are those not put back, because the file has one of that name.
	Restored, Kept []string
}

// Diff is the change as a unified diff of the file.
func (c Change) Diff() string {
	return string(diff.Diff(c.Target.Path+" (before)", c.Before, c.Target.Path+" (after)", c.After))
}

// Status is a client file's entry, as `client list` shows it.
type Status struct {
	Target Target
	// Exists is true when the file exists.
	Exists bool
	// Fields are the entry's fields; nil when there is no entry.
	Fields map[string]any
}

// Connected reports whether the file has the entry.
func (s Status) Connected() bool { return s.Fields != nil }

// Shape and where of the entry: its URL, or its command line.
func (s Status) Describe() (Shape, string) {
	if u, ok := firstString(s.Fields, "url", "serverUrl", "httpUrl"); ok {
		return ShapeURL, u
	}
	cmd, _ := s.Fields["command"].(string)
	line := cmd
	if args, ok := s.Fields["args"].([]any); ok {
		for _, a := range args {
			line += " " + fmt.Sprint(a)
		}
	}
	return ShapeStdio, line
}

func firstString(m map[string]any, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := m[k].(string); ok {
			return v, true
		}
	}
	return "", false
}

// Read returns the entry called name in the target's file.
func Read(t Target, name string) (Status, error) {
	st := Status{Target: t}
	data, err := os.ReadFile(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fault.Wrap(fault.Config, err, "reading %s's configuration %s", t.Client.Name, t.Path)
	}
	st.Exists = true
	ed, err := openEditor(t, bytes.TrimPrefix(data, []byte(utf8BOM)))
	if err != nil {
		return st, err
	}
	st.Fields, err = ed.get(name)
	return st, err
}

// Connect writes e into the target's file: added, or put in place of an
// entry of the same name with other fields. A file already holding e is
// not touched.
func Connect(t Target, e Entry, opts Options) (Change, error) {
	if err := t.Client.CheckEntry(e); err != nil {
		return Change{}, err
	}
	return change(t, opts, func(ed editor, c *Change) error {
		want := t.Client.entry(e).asMap()
		prev, err := ed.get(e.Name)
		if err != nil {
			return err
		}
		c.Previous = prev
		if prev == nil || !reflect.DeepEqual(prev, want) {
			c.Replaced = prev != nil
			if err := ed.set(e.Name, t.Client.entry(e)); err != nil {
				return err
			}
		}
		return duplicates(t, ed, e.Name, opts, c)
	})
}

// duplicates finds the entries other than the gateway's own that
// Switchboard serves too, and takes them out of the file when asked.
func duplicates(t Target, ed editor, self string, opts Options, c *Change) error {
	if opts.Served == nil {
		return nil
	}
	names, err := ed.names()
	if err != nil {
		return err
	}
	for _, name := range names {
		if name == self || !opts.Served(name) {
			continue
		}
		c.Duplicates = append(c.Duplicates, name)
		if !opts.Move {
			continue
		}
		if !t.Client.CanMove() {
			return fmt.Errorf("moving entries out of %s's TOML file is not supported; remove %s from it by hand", t.Client.Name, name)
		}
		value, err := ed.raw(name)
		if err != nil {
			return err
		}
		if _, err := ed.remove(name); err != nil {
			return err
		}
		c.Moved = append(c.Moved, MovedEntry{Name: name, Value: value})
	}
	return nil
}

// Disconnect removes the entry called name from the target's file, and
// nothing else.
func Disconnect(t Target, name string, opts Options) (Change, error) {
	return change(t, opts, func(ed editor, c *Change) error {
		prev, err := ed.get(name)
		if err != nil {
			return err
		}
		if prev != nil {
			c.Previous = prev
			if _, err := ed.remove(name); err != nil {
				return err
			}
		}
		for _, m := range opts.Restore {
			have, err := ed.get(m.Name)
			if err != nil {
				return err
			}
			if have != nil {
				c.Kept = append(c.Kept, m.Name)
				continue
			}
			if err := ed.setRaw(m.Name, m.Value); err != nil {
				return err
			}
			c.Restored = append(c.Restored, m.Name)
		}
		return nil
	})
}

// change reads the target's file, applies edit, and writes the result
// unless it is the same or opts.DryRun: atomically, with the file's mode,
// after a backup of the file as it was.
func change(t Target, opts Options, edit func(editor, *Change) error) (Change, error) {
	c := Change{Target: t}
	path := t.Path
	// Write through a symbolic link (a dotfiles manager's), keeping it.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Created = true
	case err != nil:
		return c, fault.Wrap(fault.Config, err, "reading %s's configuration %s", t.Client.Name, t.Path)
	}
	c.Before = data
	// A byte order mark, which Windows editors (Notepad) write, is not
	// JSON or TOML: edit what follows it, and keep it.
	body, bom := bytes.CutPrefix(data, []byte(utf8BOM))
	crlf := windowsLines(body)
	// The editors may append to the bytes they are given: give them a
	// copy, so that Before stays the file as it was.
	ed, err := openEditor(t, bytes.Clone(body))
	if err != nil {
		return c, err
	}
	if err := edit(ed, &c); err != nil {
		return c, fault.Wrap(fault.Config, err, "editing %s", t.Path)
	}
	c.After = ed.bytes()
	if crlf {
		// The lines written are the editor's (\n): end them as the
		// file's own lines end.
		c.After = toCRLF(c.After)
	}
	if bom {
		c.After = append([]byte(utf8BOM), c.After...)
	}
	c.Changed = !bytes.Equal(c.After, data)
	if !c.Changed || opts.DryRun {
		return c, nil
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if !c.Created {
		now := time.Now
		if opts.Now != nil {
			now = opts.Now
		}
		c.Backup = backupName(path, now())
		if err := writeFile(c.Backup, data, mode); err != nil {
			return c, fault.Wrap(fault.Config, err, "keeping a backup of %s", t.Path)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return c, fault.Wrap(fault.Config, err, "creating the folder of %s", t.Path)
	}
	if err := writeFile(path, c.After, mode); err != nil {
		return c, fault.Wrap(fault.Config, err, "writing %s", t.Path)
	}
	return c, nil
}

// utf8BOM is the byte order mark some editors put at the start of a file.
const utf8BOM = "\ufeff"

// windowsLines reports whether every line of data ends with \r\n (a file
// written on Windows), and there is at least one.
func windowsLines(data []byte) bool {
	n := bytes.Count(data, []byte("\n"))
	return n > 0 && n == bytes.Count(data, []byte("\r\n"))
}

// toCRLF ends every line of data that ends with a bare \n with \r\n.
func toCRLF(data []byte) []byte {
	out := make([]byte, 0, len(data)+bytes.Count(data, []byte("\n")))
	for i, b := range data {
		if b == '\n' && (i == 0 || data[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, b)
	}
	return out
}

// backupName is the backup of path made at t, beside it: a name that says
// what made it and when, and is new.
func backupName(path string, t time.Time) string {
	base := path + ".switchboard-backup-" + t.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// writeFile writes data to path atomically with the given mode.
func writeFile(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// editor edits the servers of one client file.
type editor interface {
	get(name string) (map[string]any, error)
	set(name string, fs fields) error
	// raw is an entry's value as standard JSON, its keys in the file's
	// order; setRaw writes one back.
	raw(name string) (json.RawMessage, error)
	setRaw(name string, v json.RawMessage) error
	remove(name string) (bool, error)
	// names lists the entries in the file's order.
	names() ([]string, error)
	bytes() []byte
}

func openEditor(t Target, data []byte) (editor, error) {
	switch t.Client.format {
	case formatTOML:
		d, err := parseTOMLDoc(data)
		if err != nil {
			return nil, fault.Wrap(fault.Config, err, "reading %s", t.Path).WithSuggestions("fix the file, then run the command again")
		}
		return &tomlEditor{d: d, key: t.Client.key}, nil
	default:
		d, err := parseJSONDoc(data)
		if err != nil {
			return nil, fault.Wrap(fault.Config, err, "reading %s", t.Path).WithSuggestions("fix the file, then run the command again")
		}
		return &jsonEditor{d: d, key: t.Client.key, created: len(bytes.TrimSpace(data)) == 0}, nil
	}
}

// jsonEditor edits the servers object of a JSON client file.
type jsonEditor struct {
	d       *jsonDoc
	key     string
	created bool
}

func (j *jsonEditor) get(name string) (map[string]any, error) {
	v, ok, err := j.d.get([]string{j.key, name})
	if err != nil || !ok {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{"value": v}, nil
	}
	return m, nil
}

func (j *jsonEditor) set(name string, fs fields) error {
	return j.d.set([]string{j.key, name}, fs)
}

func (j *jsonEditor) raw(name string) (json.RawMessage, error) {
	v, ok, err := j.d.lookup([]string{j.key, name})
	if err != nil || !ok {
		return nil, err
	}
	std, err := hujson.Standardize(append([]byte(nil), j.d.src[v.StartOffset:v.EndOffset]...))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, std); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (j *jsonEditor) setRaw(name string, v json.RawMessage) error {
	return j.d.set([]string{j.key, name}, v)
}

func (j *jsonEditor) names() ([]string, error) {
	v, ok, err := j.d.lookup([]string{j.key})
	if err != nil || !ok {
		return nil, err
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", j.key)
	}
	var out []string
	for _, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok {
			out = append(out, lit.String())
		}
	}
	return out, nil
}

func (j *jsonEditor) remove(name string) (bool, error) {
	return j.d.remove([]string{j.key, name})
}

func (j *jsonEditor) bytes() []byte {
	if j.created && bytes.Equal(j.d.src, []byte("{}\n")) {
		return nil
	}
	out := j.d.src
	if len(out) > 0 && out[len(out)-1] != '\n' && j.created {
		out = append(out, '\n')
	}
	return out
}

// tomlEditor edits the server tables of a TOML client file.
type tomlEditor struct {
	d   *tomlDoc
	key string
}

func (t *tomlEditor) get(name string) (map[string]any, error) {
	m, ok, err := t.d.get(t.key, name)
	if err != nil || !ok {
		return nil, err
	}
	return normalise(m), nil
}

func (t *tomlEditor) set(name string, fs fields) error {
	tf := make([]tomlField, len(fs))
	for i, f := range fs {
		tf[i] = tomlField(f)
	}
	return t.d.set(t.key, name, tf)
}

func (t *tomlEditor) remove(name string) (bool, error) { return t.d.remove(t.key, name) }

func (t *tomlEditor) raw(name string) (json.RawMessage, error) {
	return nil, fmt.Errorf("moving %s out of a TOML file is not supported", name)
}

func (t *tomlEditor) setRaw(name string, v json.RawMessage) error {
	return fmt.Errorf("putting %s back into a TOML file is not supported", name)
}

func (t *tomlEditor) names() ([]string, error) {
	var all map[string]any
	if err := toml.Unmarshal(t.d.src, &all); err != nil {
		return nil, err
	}
	tables, _ := all[t.key].(map[string]any)
	out := make([]string, 0, len(tables))
	for name := range tables {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

func (t *tomlEditor) bytes() []byte { return t.d.src }

// normalise turns fields into the form JSON decoding gives ([]any for a
// list), so that an entry read back compares equal to the one written.
func normalise(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}
