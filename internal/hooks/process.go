package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/procgroup"
)

// Output limits of command and http actions.
const (
	maxStdout   = 1 << 20
	maxStderr   = 64 << 10
	maxHTTPBody = 1 << 20
	// commandWaitDelay bounds the wait for a killed command's pipes.
	commandWaitDelay = 2 * time.Second
)

// BlockExitCode is the exit status with which a command action blocks the
// event (the convention existing hook scripts follow).
const BlockExitCode = 2

// getenv reads the environment; tests replace it.
var getenv = os.Getenv

// defaultHTTPClient serves http and github actions; each action bounds
// itself with its timeout.
var defaultHTTPClient = &http.Client{}

// eventJSON is what command and http actions receive: the event's context
// (which holds "event" and "event_id").
func eventJSON(ev *event) ([]byte, error) {
	b, err := json.Marshal(ev.ctx)
	if err != nil {
		return nil, fmt.Errorf("encoding the event: %w", err)
	}
	return b, nil
}

// commandBaseEnv names the variables of Switchboard's environment every
// command action gets: a stdio server's base (procgroup.BaseEnv), and
// where Switchboard keeps its files, so that a command that runs
// switchboard finds the same configuration and state.
var commandBaseEnv = append(slices.Clone(procgroup.BaseEnv), "SWITCHBOARD_STATE_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME")

// commandEnv is a command action's environment, sorted: the base
// variables (the whole environment with inherit_env), then the action's
// env, then the event's variables (vars, KEY=VALUE), each winning over
// what comes before, as for a stdio server (procgroup.Env).
func commandEnv(a config.HookAction, vars []string) []string {
	ev := make(map[string]string, len(vars))
	for _, kv := range vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			ev[k] = v
		}
	}
	return procgroup.Env(commandBaseEnv, a.InheritEnv != nil && *a.InheritEnv, a.Env, ev)
}

// runCommand runs a program without a shell, the event as JSON on stdin.
// Exit 0 succeeds (stdout may carry a decision as JSON), exit 2 blocks
// with stderr as the reason, any other exit fails.
func (e *Engine) runCommand(ctx context.Context, set *hookSet, a *action, p plan, ev *event) actionResult {
	if len(p.argv) == 0 || p.argv[0] == "" {
		return actionResult{status: StatusFailure, err: errors.New("empty command")}
	}
	in, err := eventJSON(ev)
	if err != nil {
		return actionResult{status: StatusFailure, err: err}
	}
	cmd := exec.CommandContext(ctx, p.argv[0], p.argv[1:]...)
	cmd.Dir = set.configDir(e.dir)
	cmd.Env = commandEnv(a.cfg, append([]string{"SWITCHBOARD_EVENT=" + ev.name, "SWITCHBOARD_REPO_DIR=" + e.dir}, chainFrom(ctx).env()...))
	// One line: a script that appends stdin to a file (tee -a) keeps
	// one event per line, JSON Lines.
	cmd.Stdin = bytes.NewReader(append(in, '\n'))
	var stdout, stderr capped
	stdout.limit, stderr.limit = maxStdout, maxStderr
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = procgroup.Attr(false)
	// The whole group: a script's children go too.
	cmd.Cancel = func() error { return procgroup.Kill(cmd.Process) }
	cmd.WaitDelay = commandWaitDelay
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() == BlockExitCode:
		reason := clip(stderr.String(), 1000)
		if reason == "" {
			reason = fmt.Sprintf("%s exited with status %d", p.argv[0], BlockExitCode)
		}
		return actionResult{status: StatusBlocked, reason: reason, err: errors.New(reason)}
	case errors.As(err, &ee):
		msg := fmt.Sprintf("%s exited with status %d", p.argv[0], ee.ExitCode())
		if ee.ExitCode() < 0 {
			msg = fmt.Sprintf("%s was ended: %v", p.argv[0], ee.ProcessState)
		}
		if s := clip(stderr.String(), 500); s != "" {
			msg += ": " + s
		}
		return actionResult{status: StatusFailure, err: errors.New(msg)}
	default:
		if why := programProblem(p.argv[0], cmd.Dir); why != "" {
			return actionResult{status: StatusFailure, err: errors.New(why)}
		}
		return actionResult{status: StatusFailure, err: fmt.Errorf("running %s: %w", p.argv[0], err)}
	}
	out := jsonOrText(stdout.String())
	if s, ok := out.(string); ok && strings.TrimSpace(s) == "" {
		out = nil
	}
	r := actionResult{status: StatusSuccess, output: out}
	applyDecision(&r, out)
	return r
}

// runHTTP POSTs the event as JSON. A non-2xx answer fails (5xx and 429
// are transient); a JSON object answer may carry a decision.
func (e *Engine) runHTTP(ctx context.Context, a *action, ev *event) actionResult {
	body, err := eventJSON(ev)
	if err != nil {
		return actionResult{status: StatusFailure, err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return actionResult{status: StatusFailure, err: fmt.Errorf("building the request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "switchboard-hooks")
	req.Header.Set("X-Switchboard-Event", ev.name)
	for k, v := range a.cfg.Headers {
		if strings.Contains(v, config.IdentityUser) || strings.Contains(v, config.IdentitySession) {
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return actionResult{status: StatusFailure, err: fmt.Errorf("POST %s: %w", req.URL.Redacted(), errors.Unwrap(err)), transient: ctx.Err() == nil}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("POST %s answered %s", req.URL.Redacted(), resp.Status)
		if s := clip(string(data), 300); s != "" {
			msg += ": " + s
		}
		return actionResult{status: StatusFailure, err: errors.New(msg),
			transient: resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests}
	}
	out := jsonOrText(string(data))
	if s, ok := out.(string); ok && strings.TrimSpace(s) == "" {
		out = nil
	}
	r := actionResult{status: StatusSuccess, output: out}
	applyDecision(&r, out)
	return r
}

// capped is a buffer that keeps the first limit bytes.
type capped struct {
	bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); room > 0 {
		if len(p) > room {
			c.Buffer.Write(p[:room])
		} else {
			c.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// programProblem says why prog, a command action's program run in dir,
// cannot run — it does not exist, is a directory or is not executable,
// or, a bare name, is not on PATH — or "" when it can, as far as can be
// told before running it.
func programProblem(prog, dir string) string {
	if prog == "" {
		return "the command is empty"
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if !strings.ContainsRune(prog, filepath.Separator) && !strings.ContainsRune(prog, '/') {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Sprintf("program %s is not on PATH; give its path, absolute or relative to the configuration's folder (%s)", prog, dir)
		}
		return ""
	}
	path := prog
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil && !filepath.IsAbs(prog):
		return fmt.Sprintf("program %s does not exist: %s (commands run in the configuration's folder, %s)", prog, path, dir)
	case err != nil:
		return fmt.Sprintf("program %s does not exist", prog)
	case fi.IsDir():
		return fmt.Sprintf("program %s is a directory (%s)", prog, path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Sprintf("program %s is not executable (%s); chmod +x it", prog, path)
	}
	return ""
}
