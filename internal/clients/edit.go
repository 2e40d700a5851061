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
	"time"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Options are how a change is made.
type Options struct {
	// DryRun computes the change and writes nothing.
	DryRun bool
	// Now is the clock that names backups; nil is time.Now.
	Now func() time.Time
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
	ed, err := openEditor(t, data)
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
		if prev != nil && reflect.DeepEqual(prev, want) {
			return nil
		}
		c.Replaced = prev != nil
		return ed.set(e.Name, t.Client.entry(e))
	})
}

// Disconnect removes the entry called name from the target's file, and
// nothing else.
func Disconnect(t Target, name string, opts Options) (Change, error) {
	return change(t, opts, func(ed editor, c *Change) error {
		prev, err := ed.get(name)
		if err != nil || prev == nil {
			return err
		}
		c.Previous = prev
		_, err = ed.remove(name)
		return err
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
	ed, err := openEditor(t, data)
	if err != nil {
		return c, err
	}
	if err := edit(ed, &c); err != nil {
		return c, fault.Wrap(fault.Config, err, "editing %s", t.Path)
	}
	c.After = ed.bytes()
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
	remove(name string) (bool, error)
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
