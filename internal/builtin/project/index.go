package project

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The background task statuses of seed 003's backgroundTaskProgress.
const (
	StatusNotStarted = "NotStarted"
	StatusInProgress = "InProgress"
	StatusComplete   = "Complete"
	StatusError      = "Error"
)

// TaskProgress is seed 003's backgroundTaskProgress: how far the background
// indexing of the project has got.
type TaskProgress struct {
	Status                    string `json:"status"` // NotStarted, InProgress, Complete or Error
	ProcessedFiles            int    `json:"processedFiles"`
	TotalFiles                int    `json:"totalFiles"`
	PercentComplete           int    `json:"percentComplete"`
	CurrentActivity           string `json:"currentActivity"`
	EstimatedCompletionTimeMs int64  `json:"estimatedCompletionTimeMs"`
}

// Index defaults.
const (
	// DefaultMaxFileSize is the largest file indexed; bigger files are
	// skipped (generated code, data, bundles).
	DefaultMaxFileSize = 1 << 20
	// DefaultRescanInterval is how often the index looks for changed files.
	DefaultRescanInterval = 30 * time.Second
	// binarySniffLen is how much of a file is searched for a NUL byte to
	// decide that it is binary (git's heuristic).
	binarySniffLen = 8000
)

// Log attribute keys.
const (
	logKeyRoot     = "root"
	logKeyFiles    = "files"
	logKeyDuration = "duration"
	logKeyErr      = "err"
)

// index is the project's searchable index. The first build runs in the
// background when Run starts; afterwards Run rescans every interval,
// re-reading only files whose size or modification time changed, and swaps
// in a new snapshot. Queries never block a build and read an immutable
// snapshot.
type index struct {
	root        string // absolute, symlinks resolved
	maxFileSize int64
	interval    time.Duration
	logger      *slog.Logger
	// beforeFile, when set (tests), runs before each file is analysed.
	beforeFile func(rel string)

	ready chan struct{} // closed when the first build has ended, either way

	// dict numbers the words of every file ever analysed; it only grows,
	// so that cached analyses stay valid across rebuilds.
	dict *termDict
	an   *analyser // used by the build goroutine only

	mu       sync.Mutex
	progress TaskProgress
	started  time.Time
	snap     *snapshot  // the last complete snapshot; nil before the first
	partial  []*fileDoc // files analysed so far in the first build
	cache    map[string]*fileDoc
}

func newIndex(root string, maxFileSize int64, interval time.Duration, logger *slog.Logger) *index {
	dict := newTermDict()
	return &index{
		root:        root,
		maxFileSize: maxFileSize,
		interval:    interval,
		logger:      logger,
		ready:       make(chan struct{}),
		progress:    TaskProgress{Status: StatusNotStarted, CurrentActivity: "Waiting to start indexing"},
		cache:       map[string]*fileDoc{},
		dict:        dict,
		an:          newAnalyser(dict),
	}
}

// run builds the index, then refreshes it every interval (never when
// interval <= 0) until ctx is done. Cancellation is not an error.
func (ix *index) run(ctx context.Context) error {
	err := ix.build(ctx, true)
	close(ix.ready)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		ix.logger.Error("indexing failed", logKeyRoot, ix.root, logKeyErr, err)
		ix.setProgress(func(p *TaskProgress) {
			p.Status = StatusError
			p.CurrentActivity = "Indexing failed: " + err.Error()
		})
	}
	if ix.interval <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(ix.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := ix.build(ctx, false); err != nil && ctx.Err() == nil {
				ix.logger.Warn("refreshing the index failed", logKeyRoot, ix.root, logKeyErr, err)
			}
		}
	}
}

// progressNow returns the current background progress.
func (ix *index) progressNow() TaskProgress {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.progress
}

func (ix *index) setProgress(f func(*TaskProgress)) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	f(&ix.progress)
}

// current returns the snapshot to search and whether it covers the whole
// project. Before the first build completes it is made from the files
// analysed so far.
func (ix *index) current() (*snapshot, bool) {
	ix.mu.Lock()
	if ix.snap != nil {
		s := ix.snap
		ix.mu.Unlock()
		return s, true
	}
	docs := append([]*fileDoc(nil), ix.partial...)
	ix.mu.Unlock()
	return newSnapshot(ix.dict, docs), false
}

// walkEntry is one candidate file found by the walk.
type walkEntry struct {
	rel     string
	size    int64
	modTime time.Time
}

// build walks the tree and analyses new and changed files. first marks the
// initial build, whose progress is reported and whose partial results are
// searchable.
func (ix *index) build(ctx context.Context, first bool) error {
	start := time.Now()
	if first {
		ix.mu.Lock()
		ix.started = start
		ix.progress = TaskProgress{Status: StatusInProgress, CurrentActivity: "Listing files"}
		ix.mu.Unlock()
	}
	entries, fromGit, err := ix.gitFiles(ctx)
	if err != nil {
		return fmt.Errorf("listing files under %s: %w", ix.root, err)
	}
	if !fromGit {
		if err := ix.walk(ctx, "", nil, &entries); err != nil {
			return fmt.Errorf("listing files under %s: %w", ix.root, err)
		}
	}
	total := len(entries)
	if first {
		ix.setProgress(func(p *TaskProgress) {
			p.TotalFiles = total
			p.CurrentActivity = fmt.Sprintf("Indexing %d files", total)
		})
	}
	r, err := os.OpenRoot(ix.root)
	if err != nil {
		return fmt.Errorf("opening %s: %w", ix.root, err)
	}
	defer r.Close()
	docs := make([]*fileDoc, 0, total)
	seen := make(map[string]bool, total)
	for i, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ix.beforeFile != nil {
			ix.beforeFile(e.rel)
		}
		seen[e.rel] = true
		ix.mu.Lock()
		doc := ix.cache[e.rel]
		ix.mu.Unlock()
		if doc == nil || doc.size != e.size || !doc.modTime.Equal(e.modTime) {
			var err error
			doc, err = ix.analyse(r, e)
			if err != nil {
				ix.logger.Debug("skipping unreadable file", logKeyErr, err)
				doc = nil
			}
			ix.mu.Lock()
			if doc == nil {
				delete(ix.cache, e.rel)
			} else {
				ix.cache[e.rel] = doc
			}
			ix.mu.Unlock()
		}
		if doc != nil && !doc.binary {
			docs = append(docs, doc)
		}
		if first {
			ix.mu.Lock()
			if doc != nil && !doc.binary {
				ix.partial = append(ix.partial, doc)
			}
			p := &ix.progress
			p.ProcessedFiles = i + 1
			p.PercentComplete = (i + 1) * 100 / max(total, 1)
			if p.PercentComplete == 100 {
				p.PercentComplete = 99 // the search index is still to be built
			}
			p.CurrentActivity = "Indexing " + e.rel
			elapsed := time.Since(ix.started)
			p.EstimatedCompletionTimeMs = int64(elapsed) / int64(i+1) * int64(total-i-1) / int64(time.Millisecond)
			ix.mu.Unlock()
		}
	}
	if first {
		ix.setProgress(func(p *TaskProgress) { p.CurrentActivity = "Building the search index" })
	}
	snap := newSnapshot(ix.dict, docs)
	ix.mu.Lock()
	for rel := range ix.cache {
		if !seen[rel] {
			delete(ix.cache, rel)
		}
	}
	ix.snap = snap
	ix.partial = nil
	ix.progress = TaskProgress{
		Status:          StatusComplete,
		ProcessedFiles:  total,
		TotalFiles:      total,
		PercentComplete: 100,
		CurrentActivity: fmt.Sprintf("Index ready: %d files, %d passages", len(snap.files), len(snap.passages)),
	}
	ix.mu.Unlock()
	ix.logger.Debug("index built", logKeyRoot, ix.root, logKeyFiles, len(docs), logKeyDuration, time.Since(start))
	return nil
}

// walk lists the indexable files under the root-relative directory dir,
// applying .gitignore files (nested ones too), for a root git cannot list
// (see gitFiles). Symbolic links are never
// followed, so nothing outside the root is read; .git is always skipped.
func (ix *index) walk(ctx context.Context, dir string, rules ignoreRules, out *[]walkEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(ix.root, filepath.FromSlash(dir))
	ents, err := os.ReadDir(abs)
	if err != nil {
		if dir == "" {
			return err
		}
		ix.logger.Debug("skipping unreadable directory", logKeyErr, err)
		return nil
	}
	if data, err := os.ReadFile(filepath.Join(abs, ".gitignore")); err == nil {
		rules = append(rules[:len(rules):len(rules)], parseGitignore(dir, data)...)
	}
	for _, d := range ents {
		name := d.Name()
		rel := name
		if dir != "" {
			rel = dir + "/" + name
		}
		switch t := d.Type(); {
		case d.IsDir():
			if name == ".git" || rules.ignored(rel, true) {
				continue
			}
			if err := ix.walk(ctx, rel, rules, out); err != nil {
				return err
			}
		case t.IsRegular():
			if rules.ignored(rel, false) {
				continue
			}
			info, err := d.Info()
			if err != nil || info.Size() > ix.maxFileSize {
				continue
			}
			*out = append(*out, walkEntry{rel: rel, size: info.Size(), modTime: info.ModTime()})
		}
		// Symbolic links, devices, sockets and pipes are skipped.
	}
	return nil
}

// analyse reads and analyses one file. A binary file yields a doc marked
// binary, so that it is not re-read until it changes.
func (ix *index) analyse(r *os.Root, e walkEntry) (*fileDoc, error) {
	data, err := readFile(r, e.rel, ix.maxFileSize)
	if err != nil {
		return nil, err
	}
	doc := &fileDoc{path: e.rel, size: e.size, modTime: e.modTime}
	if !isLikelyText(data) {
		doc.binary = true
		return doc, nil
	}
	ix.an.analyseText(doc, data)
	return doc, nil
}

// errNotRegular reports a path that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// readInside reads the root-relative file rel through an [os.Root], which
// refuses any path that leaves the root, symbolic links included. Only a
// regular file of at most limit bytes is read.
func readInside(root, rel string, limit int64) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readFile(r, rel, limit)
}

// readFile is readInside for an open root.
func readFile(r *os.Root, rel string, limit int64) ([]byte, error) {
	f, err := r.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: %w", rel, errNotRegular)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("reading %s: %w", rel, fs.ErrInvalid)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
