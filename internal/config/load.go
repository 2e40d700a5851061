package config

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// FileName is the name of the native configuration file.
const FileName = "switchboard.yaml"

// Options adjust how a configuration is read.
type Options struct {
	// LookupEnv looks up the environment variables that ${VAR} references
	// and env files refer to. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Listen, when set, replaces gateway.listen (serve --listen) before
	// the configuration is validated: it is checked as the key is, with
	// the same messages, at the position "--listen", and the file's value
	// is neither checked nor used.
	Listen string
}

// Load reads the configuration file at path, in any supported format (see
// Parse), and returns it resolved and validated. Problems in the file are
// reported together as a *ValidationError; a file that cannot be read is a
// fault.Config error too.
func Load(path string, opts Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "reading configuration file %s", path).
			WithSuggestions("check the path, or run without a configuration file to use the defaults")
	}
	return Parse(path, data, opts)
}

// Parse reads a configuration from data. The format is detected from the
// content: JSON (with // comments allowed) or YAML; an object with
// mcpServers is Claude Desktop / Cursor's format, one with a servers
// mapping VS Code's, one with a tools list seed 004's, and anything else
// the native format. filename is used in messages, and relative env_file
// and cwd paths start at its folder.
func Parse(filename string, data []byte, opts Options) (*Config, error) {
	p := parse(filename, data, opts)
	if len(p.ps.errs) > 0 {
		return nil, &ValidationError{Problems: sortProblems(p.ps.errs, filename)}
	}
	return p.cfg, nil
}

// parsed is everything parse learned about a file.
type parsed struct {
	raw *rawConfig
	cfg *Config
	ps  *problems
}

func parse(filename string, data []byte, opts Options) *parsed {
	ps := &problems{}
	root := parseTree(filename, data, ps)
	var rc *rawConfig
	if len(ps.errs) == 0 {
		rc = decodeRaw(root, ps)
	} else {
		rc = &rawConfig{format: FormatNative}
	}
	lookup := lookupOrEnv(opts.LookupEnv)
	r := &resolver{
		ps:     ps,
		x:      &expander{lookup: lookup, workspace: workspaceFolder(filename)},
		lookup: lookup,
		file:   filename,
		dir:    filepath.Dir(filename),
		listen: opts.Listen,
	}
	cfg := r.resolve(rc)
	cfg.Warnings = sortProblems(ps.warns, filename)
	return &parsed{raw: rc, cfg: cfg, ps: ps}
}

// sortProblems orders problems by position: the configuration file's
// first, then those in other files (env files), each by line and column.
func sortProblems(ps []Problem, file string) []Problem {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b Problem) int {
		if a.Pos.File != b.Pos.File {
			if a.Pos.File == file {
				return -1
			}
			if b.Pos.File == file {
				return 1
			}
			return cmp.Compare(a.Pos.File, b.Pos.File)
		}
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return out
}

// Find returns the configuration file to use: ./switchboard.yaml if it
// exists, else switchboard/switchboard.yaml in the user's configuration
// folder (os.UserConfigDir) if it exists, else "" and no error.
func Find() (string, error) {
	candidates := []string{FileName}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "switchboard", FileName))
	}
	for _, c := range candidates {
		fi, err := os.Stat(c)
		switch {
		case err == nil && !fi.IsDir():
			return c, nil
		case err == nil, errors.Is(err, fs.ErrNotExist):
		default:
			return "", fault.Wrap(fault.Config, err, "looking for %s", c)
		}
	}
	return "", nil
}

// Default returns the configuration used when there is no file: no
// servers and every default applied.
func Default() *Config {
	return &Config{
		Defaults:        defaultDefaults(),
		Limits:          defaultLimits(),
		History:         defaultHistory(),
		Gateway:         DefaultGateway(),
		Hooks:           Hooks{Settings: DefaultHookSettings()},
		LLM:             DefaultLLM(),
		Agent:           DefaultAgent(),
		AllowedCommands: slices.Clone(DefaultAllowedCommands),
		Format:          FormatNative,
	}
}
