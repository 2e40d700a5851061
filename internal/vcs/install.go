package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// DefaultHooks lists the git hooks [InstallHooks] knows how to write, in the order it writes
// them by default.
var DefaultHooks = []string{"post-commit", "post-checkout", "post-merge", "pre-push"}

// ChainedSuffix is appended to the name of a user's existing hook when
// [InstallHooks] moves it aside; the installed script runs it first.
const ChainedSuffix = ".switchboard-chained"

// marker starts the line that identifies a script written by InstallHooks.
const marker = "# switchboard-git-hook "

// InstallOptions says what [InstallHooks] writes.
type InstallOptions struct {
	// Command is the switchboard executable the hooks run. Empty means
	// "switchboard", looked up on PATH each time a hook runs. A relative
	// path containing a slash is made absolute against the current
	// directory.
	Command string
	// Hooks lists the git hooks to install; empty means [DefaultHooks].
	// Each must be one of DefaultHooks.
	Hooks []string
}

// InstallReport says what [InstallHooks] did, by hook name.
type InstallReport struct {
	// Installed hooks were written (fresh, or an older Switchboard script
	// replaced).
	Installed []string
	// Chained hooks replaced a user's hook, which was moved to
	// "<hook>.switchboard-chained" and is run first by the new script.
	Chained []string
	// Unchanged hooks already held the same Switchboard script.
	Unchanged []string
	// HooksDir is the absolute directory git runs the repository's hooks
	// from (core.hooksPath when set; the common hooks directory for
	// worktrees).
	HooksDir string
}

// InstallHooks writes Switchboard's git hook scripts into the hooks
// directory of the repository containing dir, so that git fires the events
// git.<hook> through `switchboard hooks fire`. A user's existing hook is
// never overwritten: it is moved to "<hook>.switchboard-chained" and run
// first, with the same arguments and standard input, its exit status kept.
// Running InstallHooks again is idempotent. Scripts are written atomically
// with mode 0755. docs/git-hooks.md describes the scripts and the fields
// each event carries.
func InstallHooks(dir string, opts InstallOptions) (InstallReport, error) {
	hooks := opts.Hooks
	if len(hooks) == 0 {
		hooks = DefaultHooks
	}
	var names []string
	for _, h := range hooks {
		if !slices.Contains(DefaultHooks, h) {
			return InstallReport{}, fault.New(fault.Validation, "cannot install git hook %q: Switchboard provides %s", h, strings.Join(DefaultHooks, ", ")).
				WithDetail("hook", h)
		}
		if !slices.Contains(names, h) {
			names = append(names, h)
		}
	}
	command := opts.Command
	if command == "" {
		command = "switchboard"
	} else if strings.ContainsRune(command, '/') && !filepath.IsAbs(command) {
		abs, err := filepath.Abs(command)
		if err != nil {
			return InstallReport{}, fault.Wrap(fault.Validation, err, "resolving the switchboard command %q", command)
		}
		command = abs
	}
	if strings.ContainsAny(command, "\n\r\x00") {
		return InstallReport{}, fault.New(fault.Validation, "the switchboard command %q contains a line break", command)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := run(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		if notARepo(err) {
			return InstallReport{}, fault.New(fault.Validation, "%s is not in a git repository", dir).
				WithSuggestions("Run `git init` first, or pass the repository's directory")
		}
		return InstallReport{}, failed(err, "finding the hooks directory of %s", dir)
	}
	report := InstallReport{HooksDir: filepath.Clean(strings.TrimSpace(out))}
	if err := os.MkdirAll(report.HooksDir, 0o755); err != nil {
		return report, fault.Wrap(fault.Internal, err, "creating the hooks directory %s", report.HooksDir)
	}
	for _, hook := range names {
		outcome, err := installHook(report.HooksDir, hook, script(hook, command))
		if err != nil {
			return report, err
		}
		switch outcome {
		case installed:
			report.Installed = append(report.Installed, hook)
		case chained:
			report.Chained = append(report.Chained, hook)
		case unchanged:
			report.Unchanged = append(report.Unchanged, hook)
		}
	}
	return report, nil
}

type outcome int

const (
	installed outcome = iota
	chained
	unchanged
)

// installHook writes content as hooksDir/hook, chaining a user's hook.
func installHook(hooksDir, hook string, content []byte) (outcome, error) {
	path := filepath.Join(hooksDir, hook)
	chainPath := path + ChainedSuffix
	existing, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			// A dangling symlink: git cannot run it either; keep it chained
			// (the script skips a chained hook that is not executable).
			return chainAndWrite(path, chainPath, hook, content)
		}
		return installed, writeAtomic(path, content)
	case err != nil:
		return 0, fault.Wrap(fault.Internal, err, "reading the existing git hook %s", path)
	case isOurs(existing):
		if bytes.Equal(existing, content) {
			if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o111 != 0 {
				return unchanged, nil
			}
		}
		return installed, writeAtomic(path, content)
	default:
		return chainAndWrite(path, chainPath, hook, content)
	}
}

// chainAndWrite moves the user's hook at path to chainPath and writes ours.
func chainAndWrite(path, chainPath, hook string, content []byte) (outcome, error) {
	if _, err := os.Lstat(chainPath); err == nil {
		return 0, fault.New(fault.Validation,
			"cannot install the %s hook: %s is not Switchboard's and %s already exists; merge them by hand, then run install again",
			hook, path, chainPath).WithDetail("hook", hook)
	}
	tmp, err := writeTemp(path, content)
	if err != nil {
		return 0, err
	}
	if err := os.Rename(path, chainPath); err != nil {
		os.Remove(tmp)
		return 0, fault.Wrap(fault.Internal, err, "moving the existing %s hook aside", hook)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		if rerr := os.Rename(chainPath, path); rerr != nil {
			return 0, fault.Wrap(fault.Internal, errors.Join(err, rerr), "installing the %s hook; your hook is at %s", hook, chainPath)
		}
		return 0, fault.Wrap(fault.Internal, err, "installing the %s hook", hook)
	}
	return chained, nil
}

// isOurs reports whether a hook's content is a script InstallHooks wrote.
func isOurs(content []byte) bool {
	for i, line := range strings.SplitN(string(content), "\n", 4) {
		if i < 3 && strings.HasPrefix(line, marker) {
			return true
		}
	}
	return false
}

// writeAtomic replaces path with content, mode 0755.
func writeAtomic(path string, content []byte) error {
	tmp, err := writeTemp(path, content)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fault.Wrap(fault.Internal, err, "writing the git hook %s", path)
	}
	return nil
}

// writeTemp writes content, mode 0755, to a new file next to path and
// returns its name.
func writeTemp(path string, content []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fault.Wrap(fault.Internal, err, "writing the git hook %s", path)
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(0o755)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fault.Wrap(fault.Internal, err, "writing the git hook %s", path)
	}
	return f.Name(), nil
}

// shellQuote quotes s for POSIX sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script returns the hook script for hook, running command.
func script(hook, command string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%sv1 %s\n", marker, hook)
	b.WriteString(prelude)
	fmt.Fprintf(&b, "hook=%s\nevent=git.%s\nsb=%s\n", hook, hook, shellQuote(command))
	b.WriteString(bodies[hook])
	return []byte(b.String())
}

// OutdatedHooks returns the hooks in the hooks directory of the repository
// containing dir that an earlier Switchboard installed and that differ
// from what [InstallHooks] writes now for the same command: they still
// work, but as that release did (before --quiet, they printed the hooks'
// results table at every commit). Outside a repository, none.
func OutdatedHooks(dir string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := run(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		if notARepo(err) {
			return nil, nil
		}
		return nil, failed(err, "finding the hooks directory of %s", dir)
	}
	hooksDir := filepath.Clean(strings.TrimSpace(out))
	var outdated []string
	for _, hook := range DefaultHooks {
		content, err := os.ReadFile(filepath.Join(hooksDir, hook))
		if err != nil || !isOurs(content) {
			continue
		}
		command, ok := scriptCommand(content)
		if !ok || !bytes.Equal(content, script(hook, command)) {
			outdated = append(outdated, hook)
		}
	}
	return outdated, nil
}

// scriptCommand returns the command a script of ours runs (its sb= line,
// as shellQuote wrote it).
func scriptCommand(content []byte) (string, bool) {
	for _, line := range strings.Split(string(content), "\n") {
		q, ok := strings.CutPrefix(line, "sb=")
		if !ok || len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
			continue
		}
		return strings.ReplaceAll(q[1:len(q)-1], `'\''`, "'"), true
	}
	return "", false
}
