package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Filter selects events; a zero field selects all.
type Filter struct {
	// Since keeps the events at or after this time.
	Since time.Time
	// Events keeps these event names; a name ending in "." or "*" keeps
	// a family ("auth." or "auth.*": every auth event).
	Events []string
	// Users keeps the events of these actors (actor.user).
	Users []string
	// Outcomes keeps these outcomes.
	Outcomes []Outcome
}

// Match reports whether f selects e.
func (f Filter) Match(e Event) bool {
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
		return false
	}
	if len(f.Events) > 0 && !slices.ContainsFunc(f.Events, func(n string) bool { return eventMatches(n, e.Event) }) {
		return false
	}
	if len(f.Users) > 0 && !slices.Contains(f.Users, e.Actor.User) {
		return false
	}
	if len(f.Outcomes) > 0 && !slices.Contains(f.Outcomes, e.Outcome) {
		return false
	}
	return true
}

func eventMatches(pattern, name string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	if strings.HasSuffix(pattern, ".") {
		return strings.HasPrefix(name, pattern)
	}
	return pattern == name
}

// CheckFilter reports a filter value that can never match, naming the
// values that can.
func CheckFilter(f Filter) error {
	for _, n := range f.Events {
		if !slices.ContainsFunc(Events, func(e string) bool { return eventMatches(n, e) }) {
			return fmt.Errorf("no audit event is named %q; the events are %s (or a family such as auth.*)", n, strings.Join(Events, ", "))
		}
	}
	for _, o := range f.Outcomes {
		if !slices.Contains(Outcomes, o) {
			return fmt.Errorf("no audit outcome is %q; the outcomes are allowed, denied, ok and failed", o)
		}
	}
	return nil
}

// LineError is an audit file line that is not an event.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: not an audit event: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Read calls fn with each event f selects from the audit file at path and
// its rotated backups, oldest first. A last line not yet ended by a
// newline is being written and is left out. A missing file has no events.
func Read(path string, f Filter, fn func(Event) error) error {
	backups, err := Backups(path)
	if err != nil {
		return err
	}
	for _, b := range backups {
		if _, err := readFile(b.Path, 0, f, fn); err != nil {
			return err
		}
	}
	_, err = readFile(path, 0, f, fn)
	return err
}

// Follow is Read, then waits for new events (across rotations) and
// calls fn with each selected one until ctx is done; it returns nil
// then. poll is how often it looks at the file (a second when 0).
func Follow(ctx context.Context, path string, f Filter, poll time.Duration, fn func(Event) error) error {
	backups, err := Backups(path)
	if err != nil {
		return err
	}
	for _, b := range backups {
		if _, err := readFile(b.Path, 0, f, fn); err != nil {
			return err
		}
	}
	if poll <= 0 {
		poll = time.Second
	}
	var offset int64
	var cur os.FileInfo
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		st, err := os.Stat(path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("watching the audit file: %w", err)
		case err == nil:
			if cur != nil && (!os.SameFile(cur, st) || st.Size() < offset) {
				// Rotated: finish the old file (now a backup), then start
				// the new one from its beginning.
				if err := finishRotated(path, cur, offset, f, fn); err != nil {
					return err
				}
				offset = 0
			}
			cur = st
			if st.Size() > offset {
				if offset, err = readFile(path, offset, f, fn); err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// finishRotated reads what was added to the file old after offset before
// it was rotated away from path.
func finishRotated(path string, old os.FileInfo, offset int64, f Filter, fn func(Event) error) error {
	backups, err := Backups(path)
	if err != nil {
		return err
	}
	for i := len(backups) - 1; i >= 0; i-- {
		st, err := os.Stat(backups[i].Path)
		if err == nil && os.SameFile(old, st) {
			_, err := readFile(backups[i].Path, offset, f, fn)
			return err
		}
	}
	return nil // compressed or removed already: what it held past offset is lost to a follower
}

// readFile reads path from offset (a .gz file whole), returning the
// offset after the last complete line.
func readFile(path string, offset int64, f Filter, fn func(Event) error) (int64, error) {
	file, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return offset, nil
		}
		return offset, fmt.Errorf("reading the audit file: %w", err)
	}
	defer file.Close()
	var r io.Reader = file
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(file)
		if err != nil {
			return offset, fmt.Errorf("reading the audit backup %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	} else if offset > 0 {
		if _, err := file.Seek(offset, io.SeekStart); err != nil {
			return offset, fmt.Errorf("reading the audit file: %w", err)
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return offset, nil // an unfinished last line waits for its end
		}
		if err != nil {
			return offset, fmt.Errorf("reading the audit file %s: %w", path, err)
		}
		line++
		offset += int64(len(b))
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return offset, &LineError{File: path, Line: line, Err: err}
		}
		if !f.Match(e) {
			continue
		}
		if err := fn(e); err != nil {
			return offset, err
		}
	}
}
