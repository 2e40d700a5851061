package hooks

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// hookSet is the compiled form of a configuration's hooks. SetConfig
// replaces it whole; a run keeps the one it started with.
type hookSet struct {
	hooks    []*hook // in run order: priority, then file order
	settings config.HookSettings
	source   string // the configuration file
	// recordValues is history.record_values: record argument values
	// (redacted) rather than their shapes.
	recordValues bool
	// untrustedFile is the file whose hooks do not run because it is not
	// trusted; "" when trusted or when no trust is needed.
	untrustedFile string
	trustState    TrustState

	// exact indexes hooks by literal event name; globs holds the rest.
	exact map[string][]*hook
	globs []*hook
	// byEvent caches match results per event name ([]*hook), for at most
	// maxCachedEvents names (event names come from outside).
	byEvent sync.Map
	cached  atomic.Int32
	// The tool events' hooks, looked up on every call.
	toolBefore, toolAfter, toolFailed []*hook
}

// maxCachedEvents bounds hookSet.byEvent.
const maxCachedEvents = 4096

// hook is one compiled hook.
type hook struct {
	cfg       config.Hook
	order     int // position in hookSet.hooks
	conds     []condition
	actions   []*action
	runnable  bool   // enabled and trusted
	untrusted bool   // its file is not trusted
	problem   string // load-time problem making it invalid; "" if none
}

// action is one compiled action.
type action struct {
	cfg   config.HookAction
	label string
	// Parsed templates, by role.
	params  []mapping  // mcp params, event fields
	command []template // command argv
	name    template   // git branch or tag name
	message template   // git message
	repo    template   // github repo
	title   template   // github title
	body    template   // github body
	prompt  template   // agent prompt
	number  template   // github number
	schema  atomic.Pointer[schemaCheck]
}

// mapping is a compiled parameter mapping.
type mapping struct {
	cfg  config.ParamMapping
	tmpl template // template and context sources
}

// schemaCheck is the result of checking an mcp action's mappings against
// one version of the tool's definition.
type schemaCheck struct {
	def      *mcp.Tool
	problems []string
	// types are the JSON types each parameter that takes no string
	// accepts, for typing text values (see typed).
	types map[string][]string
}

// condition is one compiled condition.
type condition struct {
	path []string
	op   string
	val  string
	re   *regexp.Regexp
}

// compile builds the hook set for cfg. A problem in one hook marks that
// hook invalid; it never fails the whole set.
func (e *Engine) compile(cfg *config.Config) (*hookSet, error) {
	s := &hookSet{
		settings:     normalize(cfg.Hooks.Settings),
		source:       cfg.Source,
		recordValues: cfg.History.RecordValues,
		exact:        map[string][]*hook{},
	}
	trusted := true
	if len(cfg.Hooks.List) > 0 && NeedsTrust(cfg.Source) {
		st, err := CheckTrust(e.stateDir, cfg.Source)
		if err != nil {
			e.logger.Warn("cannot read the hook trust records; treating the file as untrusted", logKeyFile, cfg.Source, logKeyError, err.Error())
		}
		s.trustState = st
		if st != Trusted {
			trusted = false
			s.untrustedFile = cfg.Source
		}
	} else {
		s.trustState = Trusted
	}
	for i, hc := range cfg.Hooks.List {
		h := &hook{cfg: hc, order: i, untrusted: !trusted}
		h.compileInto(hc)
		h.runnable = hc.Enabled && trusted
		s.hooks = append(s.hooks, h)
	}
	slices.SortStableFunc(s.hooks, func(a, b *hook) int { return cmp.Compare(a.cfg.Priority, b.cfg.Priority) })
	for i, h := range s.hooks {
		h.order = i
		if !h.runnable {
			continue
		}
		if isGlob(h.cfg.On) {
			s.globs = append(s.globs, h)
		} else {
			s.exact[h.cfg.On] = append(s.exact[h.cfg.On], h)
		}
	}
	s.toolBefore = s.lookup(EventToolBefore)
	s.toolAfter = s.lookup(EventToolAfter)
	s.toolFailed = s.lookup(EventToolFailed)
	return s, nil
}

// normalize fills the settings a zero value leaves unusable.
func normalize(st config.HookSettings) config.HookSettings {
	d := config.DefaultHookSettings()
	if st.MaxConcurrent <= 0 {
		st.MaxConcurrent = d.MaxConcurrent
	}
	if st.QueueSize <= 0 {
		st.QueueSize = d.QueueSize
	}
	if st.MaxDepth <= 0 {
		st.MaxDepth = d.MaxDepth
	}
	if st.Timeout <= 0 {
		st.Timeout = d.Timeout
	}
	if st.Retries < 0 {
		st.Retries = 0
	}
	if st.RetryDelay < 0 {
		st.RetryDelay = 0
	}
	return st
}

func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// compileInto parses h's conditions and templates. Load-time checks in
// config already passed; a failure here marks the hook invalid.
func (h *hook) compileInto(hc config.Hook) {
	for _, c := range hc.If {
		cc := condition{path: strings.Split(c.Field, "."), op: c.Op, val: c.Value}
		if c.Op == config.CondRegex {
			re, err := regexp.Compile(c.Value)
			if err != nil {
				h.invalid(c.Pos, "if."+c.Field+": "+err.Error())
				continue
			}
			cc.re = re
		}
		h.conds = append(h.conds, cc)
	}
	for _, ac := range hc.Actions {
		a := &action{cfg: ac, label: ac.Label()}
		parse := func(s string) template {
			if s == "" {
				return template{}
			}
			t, err := parseTemplate(s)
			if err != nil {
				h.invalid(ac.Pos, a.label+": "+err.Error())
			}
			return t
		}
		for _, m := range append(slices.Clone(ac.Params), ac.Fields...) {
			cm := mapping{cfg: m}
			switch m.Source {
			case config.MappingContext:
				cm.tmpl = parse("{" + m.Value + "}")
			case config.MappingTemplate:
				cm.tmpl = parse(m.Value)
			}
			a.params = append(a.params, cm)
		}
		for _, c := range ac.Command {
			a.command = append(a.command, parse(c))
		}
		a.name, a.message, a.repo = parse(ac.Name), parse(ac.Message), parse(ac.Repo)
		a.title, a.body, a.prompt, a.number = parse(ac.Title), parse(ac.Body), parse(ac.Prompt), parse(ac.Number)
		h.actions = append(h.actions, a)
	}
}

// invalid records a problem that keeps h from running.
func (h *hook) invalid(pos config.Pos, msg string) {
	if h.problem == "" {
		h.problem = pos.String() + ": " + msg
	}
}

// lookup returns the runnable hooks whose on: matches name, in run order.
// Conditions are not evaluated here.
func (s *hookSet) lookup(name string) []*hook {
	if v, ok := s.byEvent.Load(name); ok {
		return v.([]*hook)
	}
	out := slices.Clone(s.exact[name])
	for _, h := range s.globs {
		if ok, _ := path.Match(h.cfg.On, name); ok {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b *hook) int { return cmp.Compare(a.order, b.order) })
	if len(out) == 0 {
		out = nil
	}
	if s.cached.Add(1) <= maxCachedEvents {
		s.byEvent.Store(name, out)
	}
	return out
}

// matches reports whether every condition of h holds in ctx.
func (h *hook) matches(ctx map[string]any) bool {
	for i := range h.conds {
		if !h.conds[i].holds(ctx) {
			return false
		}
	}
	return true
}

// holds evaluates one condition; a missing field never holds.
func (c *condition) holds(ctx map[string]any) bool {
	v, ok := lookupPath(ctx, c.path)
	if !ok {
		return false
	}
	s := stringify(v)
	switch c.op {
	case config.CondGlob:
		ok, _ := path.Match(c.val, s)
		return ok
	case config.CondRegex:
		return c.re.MatchString(s)
	default:
		return s == c.val
	}
}

// lookupPath walks a dotted path through nested maps.
func lookupPath(ctx map[string]any, p []string) (any, bool) {
	var cur any = ctx
	for _, k := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}
