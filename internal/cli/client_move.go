package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/clients"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// movedFileName is the file in the state directory that keeps the entries
// client connect --move took out of clients' files, by file path, for
// client disconnect to put back.
const movedFileName = "client-moved.json"

// movedRecords are the entries moved out of each client file, by its
// absolute path.
type movedRecords map[string][]clients.MovedEntry

// readMoved reads the moved entries; a missing file is none.
func (a *app) readMoved() (movedRecords, string, error) {
	dir, err := a.stateDirectory()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, movedFileName)
	recs := movedRecords{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return recs, path, nil
	case err != nil:
		return nil, path, fault.Wrap(fault.Config, err, "reading the entries moved out of clients' files")
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, path, fault.Wrap(fault.Config, err, "reading %s", path).
			WithSuggestions("the backups beside each client's file hold the entries as they were")
	}
	return recs, path, nil
}

// writeMoved writes the moved entries (owner-only: an entry may carry a
// token in its env or headers), or removes the file when none are left.
func writeMoved(path string, recs movedRecords) error {
	if len(recs) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fault.Wrap(fault.Config, err, "removing %s", path)
		}
		return nil
	}
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	return nil
}

// recordMoved adds the entries a connect moved out of the file at path to
// the record.
func (a *app) recordMoved(path string, moved []clients.MovedEntry) error {
	recs, file, err := a.readMoved()
	if err != nil {
		return err
	}
	recs[path] = append(recs[path], moved...)
	return writeMoved(file, recs)
}

// forgetMoved drops the record of the entries put back into the file at
// path (and of those it had again, which were not).
func (a *app) forgetMoved(path string) error {
	recs, file, err := a.readMoved()
	if err != nil {
		return err
	}
	if _, ok := recs[path]; !ok {
		return nil
	}
	delete(recs, path)
	return writeMoved(file, recs)
}

// duplicateNote says that the client runs servers that switchboard serves
// too, and how to run them once.
func duplicateNote(t clients.Target, names []string, again string) string {
	msg := fmt.Sprintf("%s also runs %s itself, and switchboard serves %s too: %s twice, once by %s and once through switchboard. ",
		t.Client.Name, strings.Join(names, ", "), them(len(names)), runs(len(names)), t.Client.Name)
	if !t.Client.CanMove() {
		return msg + fmt.Sprintf("To run %s only through switchboard, remove %s from %s by hand (connect --move cannot edit %s's TOML)",
			them(len(names)), strings.Join(names, ", "), t.Path, t.Client.Name)
	}
	return msg + fmt.Sprintf("To run %s only through switchboard: %s --move (client disconnect puts %s back)", them(len(names)), again, them(len(names)))
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func runs(n int) string {
	if n == 1 {
		return "it runs"
	}
	return "each runs"
}
