package hooks

import (
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// HookInfo describes one configured hook, for `switchboard hooks list`.
type HookInfo struct {
	Name      string   `json:"name"`
	On        string   `json:"on"`
	Priority  int      `json:"priority"`
	Enabled   bool     `json:"enabled"`
	OnFailure string   `json:"on_failure,omitempty"`
	Source    string   `json:"source"` // file:line:col
	Actions   []string `json:"actions"`
	// Trust is the trust state of the hook's file; only trusted hooks run.
	Trust TrustState `json:"trust"`
	// Valid is false when a problem keeps the hook from running
	// correctly: Problems says what, with file:line positions. Mappings
	// are checked against the tool schemas the catalog holds now.
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"`
}

// List describes every configured hook in run order (priority, then file
// order), checking mcp mappings against the schemas discovered so far.
func (e *Engine) List() []HookInfo {
	s := e.set.Load()
	out := make([]HookInfo, 0, len(s.hooks))
	for _, h := range s.hooks {
		hi := HookInfo{
			Name: h.cfg.Name, On: h.cfg.On, Priority: h.cfg.Priority, Enabled: h.cfg.Enabled,
			OnFailure: h.cfg.OnFailure, Source: h.cfg.Pos.String(), Trust: s.trustState, Actions: []string{},
		}
		if h.problem != "" {
			hi.Problems = append(hi.Problems, h.problem)
		}
		for _, a := range h.actions {
			hi.Actions = append(hi.Actions, a.label)
			if err := e.checkSchema(a); err != nil {
				hi.Problems = append(hi.Problems, strings.Split(err.Error(), "; ")...)
			}
			// A program named as it is (no template field) that cannot run
			// now would fail every run.
			if a.cfg.Type == config.HookActionCommand && len(a.cfg.Command) > 0 && !strings.Contains(a.cfg.Command[0], "{") {
				if why := programProblem(a.cfg.Command[0], s.configDir(e.dir)); why != "" {
					hi.Problems = append(hi.Problems, a.cfg.Pos.String()+": "+why)
				}
			}
		}
		hi.Problems = slices.Compact(hi.Problems)
		hi.Valid = len(hi.Problems) == 0
		out = append(out, hi)
	}
	return out
}
