package hooks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// Environment variables that carry a chain of events into the processes a
// hook starts (commands, and git hooks fired by a git action), so that
// `switchboard hooks fire` in that process continues the chain.
const (
	EnvChainID    = "SWITCHBOARD_HOOK_CHAIN"
	EnvChainDepth = "SWITCHBOARD_HOOK_DEPTH"
	EnvChainSteps = "SWITCHBOARD_HOOK_STEPS"
)

// event is one event being dispatched.
type event struct {
	id    string
	name  string
	ctx   map[string]any
	chain chain // the chain this event is part of; depth is its own
	// trace is the trace the event happened in: its hooks' spans join it,
	// also on the pool's goroutines.
	trace telemetry.Carried
	at    time.Time

	// recorded is the redacted context, computed once for all its runs.
	recOnce  sync.Once
	recorded json.RawMessage
}

// chain is a sequence of events fired by one another's hooks.
type chain struct {
	id    string
	depth int      // 1 for an event nobody's hook fired
	steps []string // "event/hook" for each hook run that led here
}

type chainKey struct{}

// chainFrom returns the chain a context carries (set while a hook runs),
// or a zero chain.
func chainFrom(ctx context.Context) chain {
	c, _ := ctx.Value(chainKey{}).(chain)
	return c
}

// withChain returns ctx carrying c.
func withChain(ctx context.Context, c chain) context.Context {
	return context.WithValue(ctx, chainKey{}, c)
}

// next is the chain of an event fired while a hook of c runs.
func (c chain) next() chain {
	if c.id == "" {
		return chain{id: newID(), depth: 1}
	}
	return chain{id: c.id, depth: c.depth + 1, steps: c.steps}
}

// step is the chain a hook's actions run in.
func (c chain) step(ev, hook string) chain {
	steps := make([]string, len(c.steps), len(c.steps)+1)
	copy(steps, c.steps)
	return chain{id: c.id, depth: c.depth, steps: append(steps, ev+"/"+hook)}
}

// env renders the chain for a child process.
func (c chain) env() []string {
	return []string{EnvChainID + "=" + c.id, EnvChainDepth + "=" + strconv.Itoa(c.depth), EnvChainSteps + "=" + strings.Join(c.steps, ",")}
}

// ContextFromEnv returns ctx carrying the chain that a parent hook passed
// in the environment (getenv is os.Getenv in `switchboard hooks fire`), so
// that depth limits and cycle detection hold across processes.
func ContextFromEnv(ctx context.Context, getenv func(string) string) context.Context {
	id := getenv(EnvChainID)
	if id == "" {
		return ctx
	}
	depth, err := strconv.Atoi(getenv(EnvChainDepth))
	if err != nil || depth < 0 {
		return ctx
	}
	var steps []string
	if s := getenv(EnvChainSteps); s != "" {
		steps = strings.Split(s, ",")
	}
	return withChain(ctx, chain{id: id, depth: depth, steps: steps})
}

// cycle reports the loop when hook has already run for this event in the
// chain.
func (c chain) cycle(ev, hook string) (string, bool) {
	key := ev + "/" + hook
	if !slices.Contains(c.steps, key) {
		return "", false
	}
	return strings.Join(append(slices.Clone(c.steps), key), " → "), true
}

func newID() string { return strings.ToLower(rand.Text()[:16]) }

// newEvent builds an event with the standard context; fields override it.
func (e *Engine) newEvent(ctx context.Context, name string, fields map[string]any) *event {
	ev := &event{id: newID(), name: name, chain: chainFrom(ctx).next(), at: e.now(), trace: telemetry.Carry(ctx)}
	info := e.git.get(ctx, e, strings.HasPrefix(name, "git."))
	c := make(map[string]any, len(fields)+8)
	c["event"] = name
	c["event_id"] = ev.id
	c["timestamp"] = ev.at.UTC().Format(time.RFC3339Nano)
	c["user"] = info.User
	c["branch"] = info.Branch
	c["feature"] = info.Feature
	c["repo"] = info.Repo
	maps.Copy(c, fields)
	ev.ctx = c
	return ev
}

// checkName validates an event name from outside.
func checkName(name string) error {
	if !config.ValidEventName(name) {
		return fault.New(fault.Validation, "invalid event name %q", name).
			WithSuggestions("use dotted words of letters, digits, _ and -, e.g. spec.after-plan")
	}
	return nil
}

// recordedContext is the event's context as the store keeps it: redacted,
// arguments as shapes unless history.record_values, and cut to
// maxRecordedContext bytes.
func (e *Engine) recordedContext(ev *event, recordValues bool) json.RawMessage {
	ev.recOnce.Do(func() {
		r := e.redactor()
		c := make(map[string]any, len(ev.ctx))
		for k, v := range ev.ctx {
			if k == "arguments" && !recordValues {
				c[k] = redact.Shape(r.Value(v))
				continue
			}
			c[k] = v
		}
		b, err := json.Marshal(r.Value(c))
		if err != nil || len(b) > maxRecordedContext {
			b, _ = json.Marshal(map[string]any{"event": ev.name, "truncated": true})
		}
		ev.recorded = b
	})
	return ev.recorded
}

// maxRecordedContext bounds the context stored with a run.
const maxRecordedContext = 64 << 10

// gitTTL is how long the git context is used before it is refreshed (in
// the background; git.* events refresh it first).
const gitTTL = 5 * time.Second

// gitCache holds the standard context's git part, so that an event does
// not cost a git subprocess.
type gitCache struct {
	describe DescribeFunc
	dir      string
	now      func() time.Time
	ttl      time.Duration

	mu         sync.Mutex
	info       vcs.Info
	at         time.Time
	have       bool
	refreshing bool
}

// get returns the git context: fresh when sync (or when none is cached
// yet), else the cached one, refreshed in the background when stale.
func (g *gitCache) get(ctx context.Context, e *Engine, sync bool) vcs.Info {
	g.mu.Lock()
	if g.have && !sync {
		info := g.info
		if g.now().Sub(g.at) > g.ttl && !g.refreshing {
			g.refreshing = true
			e.bg.Add(1)
			go func() {
				defer e.bg.Done()
				g.refresh(context.WithoutCancel(ctx))
			}()
		}
		g.mu.Unlock()
		return info
	}
	g.mu.Unlock()
	return g.refresh(ctx)
}

// refresh runs describe and caches the result. On failure the user still
// comes from the OS.
func (g *gitCache) refresh(ctx context.Context) vcs.Info {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := g.describe(ctx, g.dir)
	if err != nil || info.User == "" {
		if u := osUser(); info.User == "" {
			info.User = u
		}
	}
	g.mu.Lock()
	g.info, g.at, g.have, g.refreshing = info, g.now(), true, false
	g.mu.Unlock()
	return info
}

// osUser is the OS user's name, for when git has none.
func osUser() string {
	for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return fmt.Sprintf("uid-%d", os.Getuid())
}

// invalidate makes the next event read the git context afresh (after a
// git action changed it).
func (g *gitCache) invalidate() {
	g.mu.Lock()
	g.have = false
	g.mu.Unlock()
}
