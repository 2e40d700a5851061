package audit

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// This file is the audit file with size-based rotation. It is written by
// one goroutine (the Auditor's writer), so it needs no lock of its own.
// docs/decisions.md says why it is not lumberjack: lumberjack starts a
// goroutine per logger that nothing stops, and a daemon builds a new
// auditor on every reload that changes the audit: block.

// backupTime is the layout of the time in a backup's name: sortable, UTC,
// with no colons (they are not allowed in Windows file names).
const backupTime = "2006-01-02T15-04-05.000"

// rotator appends to a file, moving it aside as a timestamped backup when
// a write would take it past maxSize.
type rotator struct {
	path       string
	maxSize    int64 // 0: no rotation
	maxBackups int   // 0: keep every backup (unless maxAge removes it)
	maxAge     time.Duration
	compress   bool
	now        func() time.Time

	f    *os.File
	size int64
}

// open opens (or creates) the audit file for appending.
func (r *rotator) open() error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("creating the audit file's directory: %w", err)
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the audit file: %w", err)
	}
	r.f, r.size = f, st.Size()
	return nil
}

// Write appends one line, rotating first when it would not fit.
func (r *rotator) Write(p []byte) (int, error) {
	if r.f == nil {
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	if r.maxSize > 0 && r.size > 0 && r.size+int64(len(p)) > r.maxSize {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("writing the audit file: %w", err)
	}
	return n, nil
}

// rotate moves the file aside as a backup, opens a new one, and removes
// the backups past max_backups or max_age.
func (r *rotator) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("closing the audit file to rotate it: %w", err)
	}
	r.f = nil
	t := r.now()
	backup := backupName(r.path, t)
	for exists(backup) || exists(backup+".gz") { // two rotations in one millisecond
		t = t.Add(time.Millisecond)
		backup = backupName(r.path, t)
	}
	if err := os.Rename(r.path, backup); err != nil {
		return fmt.Errorf("rotating the audit file: %w", err)
	}
	if r.compress {
		if err := gzipFile(backup); err != nil {
			return fmt.Errorf("compressing the audit backup %s: %w", backup, err)
		}
	}
	if err := r.open(); err != nil {
		return err
	}
	return r.prune()
}

// prune removes the backups beyond maxBackups (oldest first) and those
// older than maxAge.
func (r *rotator) prune() error {
	if r.maxBackups <= 0 && r.maxAge <= 0 {
		return nil
	}
	backups, err := Backups(r.path)
	if err != nil {
		return err
	}
	var errs []error
	cutoff := r.now().Add(-r.maxAge)
	for i, b := range backups { // oldest first
		tooMany := r.maxBackups > 0 && len(backups)-i > r.maxBackups
		tooOld := r.maxAge > 0 && b.Time.Before(cutoff)
		if tooMany || tooOld {
			if err := os.Remove(b.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing the old audit backup: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// Close closes the file.
func (r *rotator) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// backupName is the name of a backup of path made at t:
// audit-2026-11-26T21-15-00.000.jsonl for audit.jsonl.
func backupName(path string, t time.Time) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + t.UTC().Format(backupTime) + ext
}

// Backup is a rotated audit file.
type Backup struct {
	Path string
	Time time.Time // when it was rotated
}

// Backups lists the rotated backups of the audit file at path, oldest
// first, compressed ones (.gz) included.
func Backups(path string) ([]Backup, error) {
	ext := filepath.Ext(path)
	prefix := filepath.Base(strings.TrimSuffix(path, ext)) + "-"
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing the audit backups: %w", err)
	}
	var out []Backup
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) {
			continue
		}
		stamp := strings.TrimPrefix(name, prefix)
		stamp = strings.TrimSuffix(stamp, ".gz")
		if ext != "" {
			if !strings.HasSuffix(stamp, ext) {
				continue
			}
			stamp = strings.TrimSuffix(stamp, ext)
		}
		t, err := time.Parse(backupTime, stamp)
		if err != nil {
			continue // another file that happens to share the prefix
		}
		out = append(out, Backup{Path: filepath.Join(filepath.Dir(path), name), Time: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// gzipFile replaces path by path.gz.
func gzipFile(path string) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(path+".gz", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	if _, err = io.Copy(zw, in); err == nil {
		err = zw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path + ".gz")
		return err
	}
	return os.Remove(path)
}

// exists reports whether a file is at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
