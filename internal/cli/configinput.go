package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/sealed"
)

// maxInputValue is the most `config input --stdin` reads: an API key or
// a token, not a file.
const maxInputValue = 64 << 10

// newConfigInputCmd is `switchboard config input ID [FILE]`.
func newConfigInputCmd(a *app) *cobra.Command {
	var stdin, del bool
	cmd := &cobra.Command{
		Use:   "input ID [FILE]",
		Short: "Store the value of a VS Code input (${input:ID}) in the secret store",
		Long: `Store the value of the input ID that a VS Code file declares under "inputs" in the state
directory's secret store (sealed with AES-256-GCM), where every command and the daemon
take it from: what VS Code would ask for when the server starts. On a terminal it asks,
without echo; --stdin reads the value from standard input instead (one trailing line
break dropped). The value is never printed. A running serve uses it at its next
reload: run switchboard reload to start the servers that need it. --delete removes the
stored value instead. Both are written to the audit trail, without the value. Without
FILE, the configuration the command would use (--config, else ./switchboard.yaml, else
the user config dir).`,
		Example: `  switchboard config input github-token .vscode/mcp.json
  printf %s "$TOKEN" | switchboard config input github-token .vscode/mcp.json --stdin
  switchboard config input github-token .vscode/mcp.json --delete`,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 1 { // FILE; ID is the file's own name for the input
				return completeFiles("json")(cmd, args, toComplete)
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("usage: switchboard config input ID [FILE] [--stdin | --delete]")
			}
			if stdin && del {
				return usagef("give --stdin or --delete, not both")
			}
			file := ""
			if len(args) == 2 {
				file = args[1]
			} else {
				f, err := a.configSource()
				if err != nil {
					return err
				}
				if f == "" {
					return usagef("no configuration file found; give the VS Code file that declares the input: switchboard config input %s FILE", args[0])
				}
				file = f
			}
			if del {
				return a.deleteInput(cmd.Context(), args[0], a.inWorkDir(file))
			}
			return a.configInput(cmd.Context(), args[0], a.inWorkDir(file), stdin)
		},
	}
	cmd.Flags().BoolVar(&stdin, "stdin", false, "read the value from standard input rather than asking on the terminal")
	cmd.Flags().BoolVar(&del, "delete", false, "remove the input's stored value from the secret store")
	return cmd
}

// configInput stores the value of the input id of file, read from stdin
// or asked for on the terminal, in the secret store.
func (a *app) configInput(ctx context.Context, id, file string, fromStdin bool) error {
	inputs, format, err := config.FileInputs(file)
	if err != nil {
		return err
	}
	if inputs == nil {
		return fmt.Errorf("%s is a %s file, which declares no inputs: ${input:%s} is VS Code's (its mcp.json or settings.json)", file, format, id)
	}
	in, ok := inputs[id]
	if !ok {
		ids := make([]string, 0, len(inputs))
		for k := range inputs {
			ids = append(ids, k)
		}
		slices.Sort(ids)
		have := "it declares none"
		if len(ids) > 0 {
			have = "it declares " + strings.Join(ids, ", ")
		}
		return fmt.Errorf("%s declares no input %q (%s); declare it under \"inputs\", or give one of those ids", file, id, have)
	}
	var v string
	switch {
	case fromStdin:
		data, err := io.ReadAll(io.LimitReader(a.stdin, maxInputValue+1))
		if err != nil {
			return fmt.Errorf("reading the value of input %q from standard input: %w", id, err)
		}
		if len(data) > maxInputValue {
			return fmt.Errorf("the value of input %q on standard input is over %d KiB; give the value itself, not a file", id, maxInputValue>>10)
		}
		v = strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	default:
		q := a.terminalAsker()
		if q == nil {
			return usagef("there is no terminal to ask for the value of input %q: pipe it in with --stdin, e.g. printf %%s \"$VALUE\" | %s --stdin", id, config.StoreInputCommand(file, id))
		}
		in.Password = true // never shown as it is typed
		if v, err = q.input(in); err != nil {
			return fmt.Errorf("asking for input %q: %w", id, err)
		}
	}
	if v == "" {
		v = in.Default
	}
	if v == "" {
		return fmt.Errorf("the value of input %q is empty; give a value (nothing was stored)", id)
	}
	if in.Type == config.InputPickString && len(in.Options) > 0 && !slices.Contains(in.Options, v) {
		return fmt.Errorf("the value of input %q is not one of its options (%s); nothing was stored", id, strings.Join(in.Options, ", "))
	}
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	store := sealed.NewSecrets(dir)
	if err := store.SetSecret(config.InputSecretKey(file, id), v); err != nil {
		return fmt.Errorf("storing input %q: %w", id, err)
	}
	abs := absPath(file)
	if err := a.recordInput(audit.ConfigInputStored, abs, id); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]any{"file": abs, "input": id, "store": store.Path()})
	}
	fmt.Fprintf(a.stdout, "stored input %q of %s in the secret store %s\n", id, abs, store.Path())
	if c, st := a.daemonFor(ctx, file, false); c != nil {
		c.Close()
		fmt.Fprintf(a.stderr, "the running daemon (pid %d) serves %s: run switchboard reload to start the servers that use the input\n", st.PID, abs)
	}
	return nil
}

// deleteInput removes the stored value of the input id of file from the
// secret store. The file need not declare the input any more, nor exist:
// the value is keyed by its path and the id. No value stored is no error.
func (a *app) deleteInput(ctx context.Context, id, file string) error {
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	store := sealed.NewSecrets(dir)
	deleted, err := store.DeleteSecret(config.InputSecretKey(file, id))
	if err != nil {
		return fmt.Errorf("deleting the value of input %q: %w", id, err)
	}
	abs := absPath(file)
	if deleted {
		if err := a.recordInput(audit.ConfigInputDeleted, abs, id); err != nil {
			return err
		}
	}
	if a.json {
		return a.printJSON(map[string]any{"file": abs, "input": id, "store": store.Path(), "deleted": deleted})
	}
	if !deleted {
		fmt.Fprintf(a.stdout, "no value of input %q of %s is stored in %s; nothing was deleted\n", id, abs, store.Path())
		return nil
	}
	fmt.Fprintf(a.stdout, "deleted the value of input %q of %s from the secret store %s\n", id, abs, store.Path())
	if c, st := a.daemonFor(ctx, file, false); c != nil {
		c.Close()
		fmt.Fprintf(a.stderr, "the running daemon (pid %d) serves %s: its servers keep the value until switchboard reload\n", st.PID, abs)
	}
	return nil
}
