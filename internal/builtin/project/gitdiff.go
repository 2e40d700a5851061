package project

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The change types of seed 003's changedFiles.
const (
	ChangeAdded    = "Added"
	ChangeModified = "Modified"
	ChangeDeleted  = "Deleted"
	ChangeRenamed  = "Renamed"
)

// Limits on what a diff may cost to read and keep.
const (
	// maxGitDiffBytes bounds how much of git's diff output is parsed; the
	// rest is counted as cut.
	maxGitDiffBytes = 8 << 20
	// maxKeptLines bounds the added and removed lines kept per file for
	// symbol detection and the LLM prompt (counts stay exact).
	maxKeptLines = 2000
	// maxUntrackedFiles bounds how many untracked files are read.
	maxUntrackedFiles = 2000
	// maxUntrackedBytes bounds how much of one untracked file is read.
	maxUntrackedBytes = 1 << 20
	// gitTimeout bounds one git command.
	gitTimeout = 30 * time.Second
)

// diffFile is one file of a change set, parsed from a unified diff.
type diffFile struct {
	OldPath, NewPath string // "" for the missing side of an add or delete
	Change           string // ChangeAdded, ...
	Binary           bool
	OldMode, NewMode string // set when the mode changed, or on add/delete
	Similarity       int    // percent, for renames
	Added, Removed   int    // line counts
	// AddedLines and RemovedLines hold up to maxKeptLines lines each,
	// without the leading + or -.
	AddedLines, RemovedLines []string
	// Hunks holds the hunks' text as in the diff (bounded like the lines).
	Hunks []string
}

// Path is the file's current path (the old one for a deletion).
func (f *diffFile) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// modeChanged reports whether the file's mode changed.
func (f *diffFile) modeChanged() bool {
	return f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode
}

// changeSet is everything a commit message is made from.
type changeSet struct {
	Files []*diffFile
	// CutBytes counts diff bytes beyond the read limit that were not
	// parsed; files in them are missing.
	CutBytes int64
	// Source says where the change set came from, for the prompt.
	Source string
}

// refPattern is what sinceCommit may be: an abbreviated or full commit
// hash, or a ref name made of safe components (no "..", no leading "-" or
// ".", no "@{"), optionally followed by ~N or ^N. It is also the JSON
// schema's pattern, so it uses only syntax both RE2 and ECMA 262 accept.
const refPattern = `^(?:[0-9a-fA-F]{4,40}|[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*(?:/[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)*(?:~[0-9]{0,4}|\^[0-9]?)*)$`

var refRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(refPattern) })

// gitRunner runs git in a directory, never through a shell.
type gitRunner struct {
	dir string
}

// gitEnviron is the process environment without the variables that point
// git at another repository, index or work tree: set when switchboard runs
// from a git hook, they would make git answer for that repository instead
// of the project root.
func gitEnviron() []string {
	env := os.Environ()
	return slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX":
			return true
		}
		return false
	})
}

// run runs git with args and returns up to limit bytes of its standard
// output, and how many bytes beyond that it wrote.
func (g gitRunner) run(ctx context.Context, limit int64, args ...string) ([]byte, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	full := append([]string{
		"-c", "core.quotepath=false",
		"-c", "diff.noprefix=false",
		"-c", "diff.mnemonicPrefix=false",
		"-c", "diff.relative=false",
		"-c", "color.ui=false",
	}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = g.dir
	cmd.Env = append(gitEnviron(),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0", // a diff must not take the index lock
		"GIT_PAGER=cat",
		"LC_ALL=C",
	)
	out := &cappedBuffer{limit: limit}
	stderr := &cappedBuffer{limit: 4096}
	cmd.Stdout = out
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, 0, fault.Wrap(fault.Timeout, ctx.Err(), "git %s did not finish in time", args[0])
			}
			return nil, 0, fault.Wrap(fault.Cancelled, ctx.Err(), "git %s was cancelled", args[0])
		}
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, 0, fault.Wrap(fault.Config, err, "git is not installed or not on PATH").
				WithSuggestions("Install git, or pass the change as sinceDiff")
		}
		return nil, 0, &gitError{cmd: args[0], stderr: strings.TrimSpace(stderr.buf.String()), err: err}
	}
	return out.buf.Bytes(), out.cut, nil
}

// gitError is a git command that ran and failed.
type gitError struct {
	cmd    string // the git subcommand
	stderr string // up to 4 KiB of what git said
	err    error
}

// Error says which command failed and git's first line about it.
func (e *gitError) Error() string {
	first, _, _ := strings.Cut(e.stderr, "\n")
	if first == "" {
		return fmt.Sprintf("git %s: %v", e.cmd, e.err)
	}
	return fmt.Sprintf("git %s: %v: %s", e.cmd, e.err, first)
}

// Unwrap returns the exit error.
func (e *gitError) Unwrap() error { return e.err }

// cappedBuffer keeps the first limit bytes written to it and counts the
// rest, so that a large output never blocks or fails the writer.
type cappedBuffer struct {
	limit int64
	buf   bytes.Buffer
	cut   int64
}

// Write keeps what fits and counts the rest.
func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.limit - int64(c.buf.Len())
	switch {
	case room <= 0:
		c.cut += int64(len(p))
	case int64(len(p)) > room:
		c.buf.Write(p[:room])
		c.cut += int64(len(p)) - room
	default:
		c.buf.Write(p)
	}
	return len(p), nil
}

// commonGitArgs are the diff options every diff uses: renames found, no
// external diff or text conversion, full paths.
var commonGitArgs = []string{"--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--relative"}

// workingTreeChanges is the working tree (staged and unstaged changes and
// untracked files that are not ignored) against base, or against HEAD
// when base is "". In a repository without commits everything is Added.
func (g gitRunner) workingTreeChanges(ctx context.Context, base string) (*changeSet, error) {
	source := "working tree against " + base
	if base == "" {
		source = "working tree against HEAD"
		if _, _, err := g.run(ctx, 1024, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
			var ge *gitError
			if !errors.As(err, &ge) {
				return nil, err
			}
			// No commit yet: compare with the empty tree.
			out, _, err := g.run(ctx, 1024, "hash-object", "-t", "tree", os.DevNull)
			if err != nil {
				return nil, fmt.Errorf("finding the empty tree: %w", err)
			}
			base = strings.TrimSpace(string(out))
			source = "working tree of a repository with no commits yet"
		} else {
			base = "HEAD"
		}
	}
	args := append([]string{"diff"}, commonGitArgs...)
	args = append(args, "--end-of-options", base, "--")
	out, cut, err := g.run(ctx, maxGitDiffBytes, args...)
	if err != nil {
		return nil, fmt.Errorf("diffing the working tree: %w", err)
	}
	cs := &changeSet{Files: parseUnifiedDiff(out), CutBytes: cut, Source: source}
	untracked, err := g.untracked(ctx)
	if err != nil {
		return nil, err
	}
	cs.Files = append(cs.Files, untracked...)
	return cs, nil
}

// untracked returns the untracked, not ignored files as Added.
func (g gitRunner) untracked(ctx context.Context) ([]*diffFile, error) {
	out, _, err := g.run(ctx, 4<<20, "ls-files", "--others", "--exclude-standard", "-z", "--")
	if err != nil {
		return nil, fmt.Errorf("listing untracked files: %w", err)
	}
	var files []*diffFile
	for name := range strings.SplitSeq(string(out), "\x00") {
		if name == "" {
			continue
		}
		if len(files) == maxUntrackedFiles {
			break
		}
		f := &diffFile{NewPath: filepath.ToSlash(name), Change: ChangeAdded}
		if err := readUntracked(filepath.Join(g.dir, filepath.FromSlash(name)), f); err != nil {
			continue // vanished or unreadable since listed: not part of the change
		}
		files = append(files, f)
	}
	return files, nil
}

// readUntracked fills f from a new file's contents. Symbolic links are not
// followed: a link is recorded, never read through.
func readUntracked(name string, f *diffFile) error {
	fi, err := os.Lstat(name)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		f.NewMode = "120000"
		return nil
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Mode()&0o111 != 0:
		f.NewMode = "100755"
	default:
		f.NewMode = "100644"
	}
	file, err := os.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxUntrackedBytes))
	if err != nil {
		return err
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data[:min(len(data), 8000)]) {
		f.Binary = true
		return nil
	}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	f.Added = len(lines)
	if fi.Size() > int64(len(data)) {
		// Estimate the lines not read, at the same density.
		f.Added = int(float64(len(lines)) * float64(fi.Size()) / float64(len(data)))
	}
	f.AddedLines = lines[:min(len(lines), maxKeptLines)]
	hunk := "@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n+" + strings.Join(f.AddedLines, "\n+")
	f.Hunks = []string{hunk}
	return nil
}

// resolveCommit checks that ref names a commit and returns its full hash.
// ref has already matched refRE; it is passed after --end-of-options, so
// it can never be taken as an option.
func (g gitRunner) resolveCommit(ctx context.Context, ref string) (string, error) {
	out, _, err := g.run(ctx, 1024, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// isRepository reports whether dir is inside a git work tree.
func (g gitRunner) isRepository(ctx context.Context) (bool, error) {
	out, _, err := g.run(ctx, 1024, "rev-parse", "--is-inside-work-tree")
	if err != nil {
		var ge *gitError
		if !errors.As(err, &ge) {
			return false, err
		}
		if strings.Contains(ge.stderr, "dubious ownership") {
			return false, fault.Wrap(fault.Config, err, "git refuses to read the repository: it belongs to another user").
				WithSuggestions("Run the server as the repository's owner, or mark it safe with git config --global --add safe.directory DIR")
		}
		return false, nil
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// parseUnifiedDiff parses git's extended unified diff format, and plain
// unified diffs (diff -u) too: file headers, renames and copies, mode
// changes, new and deleted files, binary files and hunks. It never fails:
// what it does not understand it skips.
func parseUnifiedDiff(data []byte) []*diffFile {
	var (
		files     []*diffFile
		cur       *diffFile
		oldLeft   int // lines of the current hunk still expected
		newLeft   int
		hunk      strings.Builder
		keptBytes int
	)
	flushHunk := func() {
		if cur != nil && hunk.Len() > 0 {
			if keptBytes < maxKeptLines*200 {
				cur.Hunks = append(cur.Hunks, hunk.String())
				keptBytes += hunk.Len()
			}
			hunk.Reset()
		}
	}
	finish := func() {
		flushHunk()
		if cur != nil {
			finishDiffFile(cur)
			if cur.Path() != "" {
				files = append(files, cur)
			}
		}
		cur = nil
		oldLeft, newLeft = 0, 0
		keptBytes = 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var pending string // a "--- " line of a plain diff awaiting its "+++ "
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if cur != nil && (oldLeft > 0 || newLeft > 0) {
			// Inside a hunk: the counts say what is content.
			if hunkLine(cur, line, &oldLeft, &newLeft) {
				if hunk.Len() < 64<<10 {
					hunk.WriteString(line)
					hunk.WriteByte('\n')
				}
				continue
			}
			// A malformed hunk: read the line as a header.
			oldLeft, newLeft = 0, 0
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			finish()
			cur = &diffFile{}
			cur.OldPath, cur.NewPath = parseGitHeaderPaths(line[len("diff --git "):])
		case strings.HasPrefix(line, "--- "):
			if cur == nil || len(cur.Hunks) > 0 || hunk.Len() > 0 {
				// A plain unified diff: a new file starts here.
				finish()
				pending = line
				continue
			}
			cur.OldPath = diffSidePath(line[4:], "a/")
		case strings.HasPrefix(line, "+++ "):
			if pending != "" {
				cur = &diffFile{OldPath: diffSidePath(pending[4:], "a/")}
				pending = ""
			}
			if cur != nil {
				cur.NewPath = diffSidePath(line[4:], "b/")
			}
		case strings.HasPrefix(line, "@@ "):
			if cur == nil {
				continue
			}
			flushHunk()
			oldLeft, newLeft = parseHunkHeader(line)
			hunk.WriteString(line)
			hunk.WriteByte('\n')
		case cur == nil:
			pending = ""
		case strings.HasPrefix(line, "new file mode "):
			cur.Change = ChangeAdded
			cur.NewMode = strings.TrimSpace(line[len("new file mode "):])
			cur.OldPath = ""
		case strings.HasPrefix(line, "deleted file mode "):
			cur.Change = ChangeDeleted
			cur.OldMode = strings.TrimSpace(line[len("deleted file mode "):])
			cur.NewPath = ""
		case strings.HasPrefix(line, "old mode "):
			cur.OldMode = strings.TrimSpace(line[len("old mode "):])
		case strings.HasPrefix(line, "new mode "):
			cur.NewMode = strings.TrimSpace(line[len("new mode "):])
		case strings.HasPrefix(line, "rename from "):
			cur.OldPath = unquoteDiffPath(line[len("rename from "):])
			cur.Change = ChangeRenamed
		case strings.HasPrefix(line, "rename to "):
			cur.NewPath = unquoteDiffPath(line[len("rename to "):])
			cur.Change = ChangeRenamed
		case strings.HasPrefix(line, "copy from "):
			cur.OldPath = unquoteDiffPath(line[len("copy from "):])
		case strings.HasPrefix(line, "copy to "):
			cur.NewPath = unquoteDiffPath(line[len("copy to "):])
			cur.Change = ChangeAdded // a copy adds a file
		case strings.HasPrefix(line, "similarity index "):
			cur.Similarity, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(line[len("similarity index "):]), "%"))
		case strings.HasPrefix(line, "Binary files ") || line == "GIT binary patch":
			cur.Binary = true
		}
	}
	finish()
	return files
}

// hunkLine counts one line of a hunk into f and reports whether it was
// one (an added, removed, context or "\ No newline" line).
func hunkLine(f *diffFile, line string, oldLeft, newLeft *int) bool {
	switch {
	case strings.HasPrefix(line, "+"):
		f.Added++
		*newLeft--
		if len(f.AddedLines) < maxKeptLines {
			f.AddedLines = append(f.AddedLines, line[1:])
		}
	case strings.HasPrefix(line, "-"):
		f.Removed++
		*oldLeft--
		if len(f.RemovedLines) < maxKeptLines {
			f.RemovedLines = append(f.RemovedLines, line[1:])
		}
	case strings.HasPrefix(line, " ") || line == "":
		*oldLeft--
		*newLeft--
	case strings.HasPrefix(line, `\`):
		// "\ No newline at end of file"
	default:
		return false
	}
	return true
}

// finishDiffFile settles a parsed file's change type from what the
// headers said.
func finishDiffFile(f *diffFile) {
	switch {
	case f.Change != "":
	case f.OldPath == "" && f.NewPath != "":
		f.Change = ChangeAdded
	case f.NewPath == "" && f.OldPath != "":
		f.Change = ChangeDeleted
	case f.OldPath != f.NewPath:
		f.Change = ChangeRenamed
	default:
		f.Change = ChangeModified
	}
	switch f.Change {
	case ChangeAdded:
		if f.OldPath != "" && f.OldPath == f.NewPath {
			f.OldPath = ""
		}
	case ChangeDeleted:
		if f.NewPath != "" && f.NewPath == f.OldPath {
			f.NewPath = ""
		}
	}
}

// parseHunkHeader returns the old and new line counts of "@@ -a,b +c,d @@".
func parseHunkHeader(line string) (oldCount, newCount int) {
	rest := strings.TrimPrefix(line, "@@ ")
	end := strings.Index(rest, " @@")
	if end < 0 {
		return 0, 0
	}
	parts := strings.Fields(rest[:end])
	if len(parts) != 2 {
		return 0, 0
	}
	count := func(s string) int {
		s = strings.TrimLeft(s, "-+")
		_, n, found := strings.Cut(s, ",")
		if !found {
			return 1
		}
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return 0
		}
		return v
	}
	return count(parts[0]), count(parts[1])
}

// diffSidePath returns the path of a ---/+++ line: "" for /dev/null, the
// prefix removed, a trailing timestamp (diff -u) dropped.
func diffSidePath(s, prefix string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = unquoteDiffPath(strings.TrimSpace(s))
	if s == "/dev/null" {
		return ""
	}
	return cleanDiffPath(strings.TrimPrefix(s, prefix))
}

// parseGitHeaderPaths splits "a/X b/Y" of a diff --git line.
func parseGitHeaderPaths(s string) (oldPath, newPath string) {
	if strings.HasPrefix(s, `"`) {
		// Quoted names: "a/x y" "b/x y" (or one side quoted).
		first, rest, ok := cutQuoted(s)
		if !ok {
			return "", ""
		}
		second := strings.TrimSpace(rest)
		if strings.HasPrefix(second, `"`) {
			second, _, _ = cutQuoted(second)
		}
		return cleanDiffPath(strings.TrimPrefix(first, "a/")), cleanDiffPath(strings.TrimPrefix(second, "b/"))
	}
	if strings.HasSuffix(s, `"`) {
		if i := strings.Index(s, ` "`); i >= 0 {
			second, _, _ := cutQuoted(s[i+1:])
			return cleanDiffPath(strings.TrimPrefix(s[:i], "a/")), cleanDiffPath(strings.TrimPrefix(second, "b/"))
		}
	}
	// Unquoted: when both sides are the same name, the split is in the
	// middle; otherwise split at the last " b/".
	if n := len(s); n%2 == 1 {
		half := n / 2
		if s[half] == ' ' && strings.HasPrefix(s, "a/") && s[half+1:half+3] == "b/" && s[2:half] == s[half+3:] {
			p := cleanDiffPath(s[2:half])
			return p, p
		}
	}
	if i := strings.LastIndex(s, " b/"); i >= 0 {
		return cleanDiffPath(strings.TrimPrefix(s[:i], "a/")), cleanDiffPath(s[i+3:])
	}
	return "", ""
}

// cutQuoted parses a leading C-quoted string and returns it unquoted and
// what follows.
func cutQuoted(s string) (string, string, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", "", false
			}
			return v, s[i+1:], true
		}
	}
	return "", "", false
}

// unquoteDiffPath undoes git's C-style quoting of unusual names.
func unquoteDiffPath(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		if v, _, ok := cutQuoted(s); ok {
			return v
		}
	}
	return s
}

// cleanDiffPath normalises a path from a diff for display; it is never
// used to open a file.
func cleanDiffPath(p string) string {
	if p == "" {
		return ""
	}
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if p == "." {
		return ""
	}
	return p
}
