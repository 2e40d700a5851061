package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/sealed"
)

// asker asks the person at the terminal: whether to trust a file, and the
// values of VS Code inputs. Questions go to out (stderr), answers come
// from in, a line each.
type asker struct {
	in  *bufio.Reader
	out io.Writer
	// readPassword reads one line without echo (term.ReadPassword on the
	// terminal); nil reads it as any other line.
	readPassword func() (string, error)
	// pending is a read that lineCtx gave up waiting for, on an input
	// that is not a terminal (answerer.go).
	pending chan lineResult
	// tty is the terminal in reads from, nil for other input: lineCtx
	// gives up a question on it without leaving a read pending.
	tty *ttyReader
}

// errNoAnswer is the cause when the input ended before an answer.
var errNoAnswer = errors.New("no answer: the input ended")

// line reads one answer, without its line ending.
func (q *asker) line() (string, error) {
	s, err := q.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", errNoAnswer
		}
		return "", err
	}
	return strings.TrimRight(s, "\r\n"), nil
}

// confirm asks a yes/no question whose default is no.
func (q *asker) confirm(question string) (bool, error) {
	for {
		fmt.Fprintf(q.out, "%s [y/N] ", question)
		ans, err := q.line()
		if err != nil {
			fmt.Fprintln(q.out)
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			return true, nil
		case "", "n", "no":
			return false, nil
		}
		fmt.Fprintln(q.out, "Please answer y or n.")
	}
}

// input asks for the value of a VS Code input: it shows the input's
// description, default and options, and reads a password input without
// echo. An empty answer takes the default (config.InputResolver does).
func (q *asker) input(in config.Input) (string, error) {
	what := in.Description
	if what == "" {
		what = "Value of input " + in.ID
	}
	fmt.Fprintf(q.out, "%s needs input %q: %s\n", in.File, in.ID, what)
	if len(in.Options) > 0 {
		fmt.Fprintf(q.out, "  options: %s\n", strings.Join(in.Options, ", "))
	}
	fmt.Fprintf(q.out, "  (kept in Switchboard's secret store; or set %s instead)\n", config.InputEnvName(in.ID))
	for {
		prompt := in.ID
		if in.Default != "" {
			prompt += fmt.Sprintf(" [%s]", in.Default)
		}
		fmt.Fprintf(q.out, "%s: ", prompt)
		var ans string
		var err error
		if in.Password && q.readPassword != nil {
			ans, err = q.readPassword()
			fmt.Fprintln(q.out) // the newline the person typed was not echoed
		} else {
			ans, err = q.line()
		}
		if err != nil {
			return "", err
		}
		if in.Type == config.InputPickString && len(in.Options) > 0 && ans != "" && !slices.Contains(in.Options, ans) {
			fmt.Fprintf(q.out, "%q is not one of the options (%s).\n", ans, strings.Join(in.Options, ", "))
			continue
		}
		if ans == "" && in.Default == "" {
			fmt.Fprintln(q.out, "A value is needed (Ctrl-C to stop).")
			continue
		}
		return ans, nil
	}
}

// terminalAsker returns the asker of the person at the terminal, or nil
// when there is none to ask: stdin or stderr is not a terminal, or the
// command is a shell completion. One is made per run, so that answers read
// ahead are not lost between questions.
func (a *app) terminalAsker() *asker {
	if a.noPrompt {
		return nil
	}
	if a.ask != nil {
		return a.ask
	}
	f, ok := a.stdin.(*os.File)
	if !ok {
		return nil
	}
	// A terminal is a character device: Stat says so without Fd, which
	// puts the descriptor in blocking mode under a reader that may be
	// using it (serve --stdio's transport, in the same process in tests).
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	if !term.IsTerminal(int(f.Fd())) || !isTerminal(a.stderr) {
		return nil
	}
	a.ask = newTerminalAsker(f, a.stderr)
	return a.ask
}

// configOptions are the options every command loads configuration with:
// the command's environment, the state directory, whose trust records decide what a client's file
// may run; the secret store for VS Code inputs; and, when prompt is true
// and a person is at the terminal, the question whether to trust one of
// the user's own client files and the prompt for inputs.
func (a *app) configOptions(prompt bool) config.Options {
	prompt = prompt && !a.noPrompt
	opts := config.Options{LookupEnv: a.lookupEnv, UserEnv: a.lookupEnv, WorkDir: a.dir}
	dir, err := a.stateDirectory()
	if err == nil {
		opts.StateDir = dir
		opts.Inputs = &config.InputResolver{Secrets: sealed.NewSecrets(dir)}
	}
	if !prompt {
		return opts
	}
	if q := a.terminalAsker(); q != nil {
		opts.ConfirmTrust = q.confirm
		opts.TrustAnswered = a.recordTrustAnswer
		if opts.Inputs == nil {
			opts.Inputs = &config.InputResolver{}
		}
		opts.Inputs.Prompt = q.input
	}
	return opts
}

// newTerminalAsker returns the asker of the person at terminal f, whose
// questions go to out.
func newTerminalAsker(f *os.File, out io.Writer) *asker {
	tr := &ttyReader{f: f, fd: int(f.Fd())}
	return &asker{in: bufio.NewReader(tr), out: out, tty: tr, readPassword: func() (string, error) {
		b, err := term.ReadPassword(tr.fd)
		return string(b), err
	}}
}

// ttyReader reads a terminal; while ctx is set, each read first waits
// until there is something to read or ctx ends, so that a question given
// up on leaves no read behind.
type ttyReader struct {
	f   *os.File
	fd  int
	ctx context.Context
}

func (r *ttyReader) Read(p []byte) (int, error) {
	if r.ctx != nil {
		if err := waitReadable(r.ctx, r.fd); err != nil {
			return 0, err
		}
	}
	return r.f.Read(p)
}
