package notebook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// Caller runs one tool call; *toolcall.Engine implements it.
type Caller interface {
	Call(ctx context.Context, req toolcall.Request) (*toolcall.Result, error)
}

var _ Caller = (*toolcall.Engine)(nil)

// ErrChanged is the cause of the error Run returns when the document
// changed on disk while its blocks ran: the results are not written, so
// that the edit is not lost.
var ErrChanged = errors.New("the document changed during the run")

// Log attribute keys.
const (
	logKeyPath   = "path"
	logKeyLine   = "line"
	logKeyServer = "server"
	logKeyTool   = "tool"
	logKeyStatus = "status"
)

// Statuses a block can have besides a call's (success, error, timeout,
// cancelled).
const (
	StatusMissing = "missing" // no result written yet
	StatusStale   = "stale"   // the result answers another request
	StatusInvalid = "invalid" // the block cannot run (Block.Err)
	StatusDryRun  = "dry-run" // shown, not run
)

// Options configures a run.
type Options struct {
	// Config supplies the servers, the bindings and the notebook: block.
	Config *config.Config
	// Caller runs the calls (the execution engine); unused with DryRun.
	Caller Caller
	// Concurrency is how many blocks run at once; 0 means
	// Config.Notebook's. Results are written in document order whatever
	// the order calls finish in.
	Concurrency int
	// Only runs the one block holding this line (its fences included);
	// 0 runs every block.
	Only int
	// DryRun reports the calls that would be made and runs nothing.
	DryRun bool
	// Identity is the caller's user id, passed with every call.
	Identity string
	// Progress is told how many of the blocks have finished; it is
	// called from one goroutine at a time.
	Progress func(done, total int)
	// Logger receives one event per block; nil discards them.
	Logger *slog.Logger
}

// BlockReport is what happened to one block, or what `doc list` knows of
// it.
type BlockReport struct {
	Line int `json:"line"`
	// EndLine is the line of the closing fence.
	EndLine int    `json:"end_line"`
	ID      string `json:"id,omitempty"`
	Server  string `json:"server,omitempty"`
	// Why says how the server was chosen: explicit, binding ..., default.
	Why  string         `json:"why,omitempty"`
	Tool string         `json:"tool,omitempty"`
	Args map[string]any `json:"arguments,omitempty"`
	// Status is the call's status (success, error, timeout, cancelled,
	// output_invalid), or missing, stale, invalid, dry-run.
	Status string       `json:"status"`
	Error  *fault.Error `json:"error,omitempty"`
	// ErrorLine is the line of the document the error is about, when it
	// is about one line inside the block (invalid YAML); 0 otherwise.
	ErrorLine int `json:"error_line,omitempty"`
}

// At is the line of the document a message about the block names: the
// line its error is about, else the block's opening line.
func (r BlockReport) At() int {
	if r.ErrorLine > 0 {
		return r.ErrorLine
	}
	return r.Line
}

// Report is the outcome of a run or an inspection.
type Report struct {
	Path   string        `json:"path"`
	Blocks []BlockReport `json:"blocks"`
	// Written is true when the document was rewritten.
	Written bool `json:"written"`
	// Failed counts the blocks that failed (a run), or that are missing,
	// stale or invalid or record a failed call (Inspect).
	Failed int `json:"failed"`
	// Cancelled counts the blocks an interrupted run did not finish
	// (status cancelled); they keep their previous result.
	Cancelled int `json:"cancelled"`
}

// file is the document on disk: real is path with its symbolic links
// resolved, the file that is read and written (so that a link to a
// document stays a link and the document it points to is updated).
type file struct {
	real string
	info os.FileInfo
}

// load reads and parses a document and resolves its blocks' servers.
func load(path string, cfg *config.Config) (*Document, file, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, file{}, readError(path, err)
	}
	fi, err := os.Stat(real)
	if err == nil && fi.IsDir() {
		err = errIsDir
	}
	if err != nil {
		return nil, file{}, readError(path, err)
	}
	src, err := os.ReadFile(real)
	if err != nil {
		return nil, file{}, readError(path, err)
	}
	d := Parse(path, src, ServerNames(cfg))
	if d.FrontMatterErr != nil {
		return nil, file{}, d.FrontMatterErr
	}
	if max := cfg.Notebook.EffectiveMaxBlocks(); len(d.Blocks) > max {
		return nil, file{}, fault.New(fault.LimitExceeded, "%s has %d tool-call blocks, more than notebook.max_blocks (%d)", path, len(d.Blocks), max).
			WithSuggestions("split the document, or raise notebook.max_blocks")
	}
	d.Resolve(cfg)
	return d, file{real: real, info: fi}, nil
}

// report describes a block.
func report(b *Block, status string, err error) BlockReport {
	r := BlockReport{Line: b.Line, EndLine: b.EndLine, ID: b.ID, Server: b.Server, Why: b.Why, Tool: b.Tool, Args: b.Args, Status: status}
	if err != nil {
		r.Error = fault.As(err)
		if b.errLine > 0 && err == b.Err {
			r.ErrorLine = b.Line + b.errLine
		}
		if b.dupOf > 0 && err == b.Err {
			// Unlike the result written in the document, a report may
			// name the other block's line.
			c := *r.Error
			c.Message = fmt.Sprintf("duplicate block id ^%s: the block at line %d has it too", b.ID, b.dupOf)
			r.Error = &c
		}
	}
	return r
}

// Inspect reports each block of the document and its last status as
// recorded in the document (for `doc list` and `doc run --check`);
// nothing runs. Report.Failed counts the blocks whose result is missing
// or stale, those that cannot run, and those whose recorded result is a
// failure (error, timeout, cancelled: what a run counts as failed), since
// a document that records a failure is not up to date whether or not the
// call would fail again.
func Inspect(path string, cfg *config.Config) (*Report, error) {
	d, _, err := load(path, cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Path: path}
	for _, b := range d.Blocks {
		status := b.State()
		if b.Err != nil {
			status = StatusInvalid
		}
		switch status {
		case StatusMissing, StatusStale, StatusInvalid,
			string(toolcall.StatusError), string(toolcall.StatusTimeout), string(toolcall.StatusCancelled):
			rep.Failed++
		}
		rep.Blocks = append(rep.Blocks, report(b, status, b.Err))
	}
	return rep, nil
}

// Run runs the document's blocks through the caller and writes each
// result after its block, replacing the one written before. Blocks that
// cannot run and calls that fail get their error written as their
// result; the run goes on, and Report.Failed counts them. The document is
// rewritten (atomically, keeping its mode) only when something changed,
// and not at all if it changed on disk meanwhile (ErrChanged).
func Run(ctx context.Context, path string, opts Options) (*Report, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := opts.Config
	d, doc, err := load(path, cfg)
	if err != nil {
		return nil, err
	}
	blocks := d.Blocks
	if opts.Only > 0 {
		blocks = nil
		for _, b := range d.Blocks {
			if b.Line <= opts.Only && opts.Only <= b.EndLine {
				blocks = []*Block{b}
				break
			}
		}
		if blocks == nil {
			return nil, fault.New(fault.NotFound, "%s has no tool-call block at line %d", path, opts.Only).
				WithSuggestions("run switchboard doc list " + path + " to see the blocks and their lines")
		}
	}
	rep := &Report{Path: path}
	if opts.DryRun {
		for _, b := range blocks {
			status := StatusDryRun
			if b.Err != nil {
				status = StatusInvalid
				rep.Failed++
			}
			rep.Blocks = append(rep.Blocks, report(b, status, b.Err))
		}
		return rep, nil
	}
	if opts.Caller == nil {
		return nil, fmt.Errorf("running %s: no caller", path)
	}

	// The history says which document and block made each call, by a
	// path that means something wherever it is read (the daemon's).
	origin := path
	if abs, err := filepath.Abs(path); err == nil {
		origin = abs
	}
	outs := make([]outcome, len(blocks))
	ran := make([]bool, len(blocks))
	conc := opts.Concurrency
	if conc <= 0 {
		conc = cfg.Notebook.EffectiveConcurrency()
	}
	var (
		mu   sync.Mutex
		done int
	)
	finished := func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		if opts.Progress != nil {
			opts.Progress(done, len(blocks))
		}
	}
	var g errgroup.Group
	g.SetLimit(conc)
	for i, b := range blocks {
		if b.Err != nil {
			outs[i], ran[i] = outcome{err: b.Err}, true
			finished()
			continue
		}
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			defer finished()
			if ctx.Err() != nil {
				return nil
			}
			res, err := opts.Caller.Call(ctx, toolcall.Request{
				Server: b.Server, Tool: b.Tool, Arguments: b.Args,
				Source: toolcall.SourceDocument, Identity: opts.Identity,
				Origin: blockOrigin(origin, b),
			})
			if err == nil && res == nil {
				err = fault.New(fault.Internal, "the call returned no result")
			}
			// A call cut short by an interrupted run keeps the block's
			// previous result.
			if ctx.Err() != nil && fault.KindOf(err) == fault.Cancelled {
				return nil
			}
			outs[i], ran[i] = outcome{res: res, err: err}, true
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through outs

	// Files go next to the document itself, not next to a link to it,
	// so that the relative links written in it hold wherever it is read.
	fsv := &files{docDir: filepath.Dir(doc.real), stem: strings.TrimSuffix(filepath.Base(doc.real), filepath.Ext(doc.real))}
	fsv.dir = fsv.docDir
	if dir := cfg.Notebook.ImagesDir; dir != "" {
		if filepath.IsAbs(dir) {
			fsv.dir = dir
		} else {
			fsv.dir = filepath.Join(fsv.docDir, dir)
		}
	}
	var out bytes.Buffer
	out.Grow(len(d.Source) + len(d.Source)/2)
	prev := 0
	// shift is how many lines the results written so far add before the
	// next block (removed ones take lines away): once the document is
	// written, a block's report names its lines there.
	shift := make([]int, 0, len(blocks))
	added := 0
	for i, b := range blocks {
		shift = append(shift, added)
		if !ran[i] {
			rep.Cancelled++
			rep.Blocks = append(rep.Blocks, report(b, string(toolcall.StatusCancelled), ctx.Err()))
			continue
		}
		o := outs[i]
		region, err := renderRegion(b, o, fsv)
		if err != nil {
			return nil, fmt.Errorf("rendering the result of the block at line %d: %w", b.Line, err)
		}
		status := o.status()
		if o.failed() {
			rep.Failed++
		}
		br := report(b, status, o.err)
		if o.err == nil && o.res.IsError {
			br.Error = &fault.Error{Kind: "tool", Message: toolText(o.res.CallToolResult)}
		} else if o.err == nil && o.res.OutputError != nil {
			// Written like any result; the report says what is wrong with it.
			br.Error = &fault.Error{Kind: toolcall.ErrorKindOutputInvalid, Message: o.res.OutputError.Message, Fields: o.res.OutputError.Fields}
		}
		rep.Blocks = append(rep.Blocks, br)
		logger.Info("document block", logKeyPath, path, logKeyLine, b.Line, logKeyServer, b.Server, logKeyTool, b.Tool, logKeyStatus, status)
		if b.noWrite {
			continue
		}

		start, end := b.end, b.end
		if b.Result != nil {
			start, end = b.Result.start, b.Result.end
		}
		out.Write(d.Source[prev:start])
		if start == len(d.Source) && start > 0 && d.Source[start-1] != '\n' {
			out.WriteByte('\n')
		}
		n := out.Len()
		out.WriteString(region)
		added += bytes.Count(out.Bytes()[n:], []byte{'\n'}) - bytes.Count(d.Source[start:end], []byte{'\n'})
		prev = end
	}
	out.Write(d.Source[prev:])
	if bytes.Equal(out.Bytes(), d.Source) {
		return rep, nil
	}
	if err := replace(path, doc.real, d.Source, out.Bytes(), doc.info.Mode().Perm()); err != nil {
		return rep, err
	}
	rep.Written = true
	// Where a line of the document as it was is now: results are written
	// after their blocks, so a line moves by what was written above it.
	moved := func(line int) int {
		for j, b := range blocks {
			if b.Line >= line {
				return line + shift[j]
			}
		}
		return line + added
	}
	for i, b := range blocks {
		r := &rep.Blocks[i]
		r.Line += shift[i]
		r.EndLine += shift[i]
		if b.dupOf > 0 && r.Error != nil && r.Error.Message == fmt.Sprintf("duplicate block id ^%s: the block at line %d has it too", b.ID, b.dupOf) {
			c := *r.Error
			c.Message = fmt.Sprintf("duplicate block id ^%s: the block at line %d has it too", b.ID, moved(b.dupOf))
			r.Error = &c
		}
	}
	return rep, nil
}

// replace writes data to real (the document path names, its links
// resolved) unless that file no longer holds original. Messages name path,
// as the user gave it.
func replace(path, real string, original, data []byte, mode fs.FileMode) error {
	cur, err := os.ReadFile(real)
	if err != nil {
		return fault.Wrap(fault.NotFound, err, "reading %s again before writing the results", path)
	}
	if !bytes.Equal(cur, original) {
		return fault.Wrap(fault.Validation, ErrChanged, "%s changed while its blocks ran; the results were not written", path).
			WithSuggestions("save your edits and run it again")
	}
	err = writeAtomic(real, data, mode)
	if err != nil && real != path {
		return fmt.Errorf("writing the results into %s: %w", path, err)
	}
	return err
}

// writeAtomic writes data to a temporary file in path's folder and renames
// it over path, so that a reader sees the old file or the new one, never
// a part.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".switchboard-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// blockOrigin is the origin recorded with a block's call: the document's
// path, the block's line as the document was when it ran, and its id.
func blockOrigin(path string, b *Block) string {
	o := fmt.Sprintf("document %s:%d", path, b.Line)
	if b.ID != "" {
		o += " ^" + b.ID
	}
	return o
}

// errIsDir is the cause of readError for a folder given as a document.
var errIsDir = errors.New("is a folder")

// readError says why the document at path cannot be read, and how to
// fix it: a path that does not exist names the folder it was looked for
// in and, when that folder has a Markdown file of a close name, suggests
// it; a folder asks for a file in it. Never the bare lstat/open text.
func readError(path string, err error) error {
	switch {
	case errors.Is(err, errIsDir):
		fix := "give a Markdown file (FILE.md), not a folder"
		if md, _ := filepath.Glob(filepath.Join(path, "*.md")); len(md) > 0 {
			fix += ", e.g. " + md[0]
		}
		return fault.New(fault.Validation, "%s is a folder, not a document", path).WithSuggestions(fix)
	case errors.Is(err, fs.ErrNotExist):
		dir, base := filepath.Split(path)
		where := dir
		if where == "" {
			where = "."
		}
		if abs, aerr := filepath.Abs(where); aerr == nil {
			where = abs
		}
		var fix []string
		if md, _ := filepath.Glob(filepath.Join(where, "*.md")); len(md) > 0 {
			names := make([]string, len(md))
			for i, m := range md {
				names[i] = filepath.Base(m)
			}
			if c := suggest.Closest(base, names, 1); len(c) > 0 {
				fix = append(fix, fmt.Sprintf("did you mean %s?", filepath.Join(dir, c[0])))
			}
		}
		if _, serr := os.Stat(where); serr != nil {
			fix = append(fix, fmt.Sprintf("the folder %s does not exist either: check the path", where))
		} else {
			fix = append(fix, fmt.Sprintf("check the path: %s was looked for in %s", base, where))
		}
		return fault.New(fault.NotFound, "document %s does not exist", path).WithSuggestions(fix...)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fault.Wrap(fault.NotFound, err, "cannot read document %s", path).WithSuggestions("check that you may read it (ls -l " + path + ")")
}
