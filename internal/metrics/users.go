package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// NoUserLabel is the user label of calls that carry no identity.
const NoUserLabel = "_none"

// userKey is the label set of one per-user series.
type userKey struct{ user, status string }

// userTable caches the per-user series. The user label holds only the
// names SetUsers admits — the users the configuration itself names, so
// that the label set is bounded by the file and holds no identity an
// outsider chose (an OAuth subject, an e-mail address); every other user
// is counted as _other.
type userTable struct {
	named  atomic.Pointer[map[string]struct{}]
	mu     sync.RWMutex
	calls  map[userKey]prometheus.Counter
	limits map[string]prometheus.Counter // rate-limited calls, by label
}

func (t *userTable) init() {
	t.named.Store(&map[string]struct{}{})
	t.calls = map[userKey]prometheus.Counter{}
	t.limits = map[string]prometheus.Counter{}
}

// SetUsers sets the users counted under their own names by the per-user
// metrics (switchboard_user_calls_total, switchboard_user_rate_limited_total):
// the daemon passes the users of gateway.tokens and gateway.default_user.
// Calls by anyone else are counted as user="_other", calls without a user
// as user="_none". Series already exported stay.
func (m *Metrics) SetUsers(users []string) {
	named := make(map[string]struct{}, len(users))
	for _, u := range users {
		if u != "" {
			named[u] = struct{}{}
		}
	}
	m.users.named.Store(&named)
}

// label is the user label of identity.
func (t *userTable) label(identity string) string {
	if identity == "" {
		return NoUserLabel
	}
	if _, ok := (*t.named.Load())[identity]; ok {
		return identity
	}
	return OtherLabel
}

// countUser counts one finished call under its user: in
// switchboard_user_calls_total, and in switchboard_user_rate_limited_total
// when limits.rate refused it.
func (m *Metrics) countUser(r store.CallRecord) {
	t := &m.users
	k := userKey{user: t.label(r.Identity), status: r.Status}
	limited := r.ErrorKind == string(fault.RateLimited)
	t.mu.RLock()
	c := t.calls[k]
	var l prometheus.Counter
	if limited {
		l = t.limits[k.user]
	}
	t.mu.RUnlock()
	if c == nil || (limited && l == nil) {
		t.mu.Lock()
		if c = t.calls[k]; c == nil {
			c = m.userCalls.WithLabelValues(labelValue(k.user), labelValue(k.status))
			t.calls[k] = c
		}
		if limited {
			if l = t.limits[k.user]; l == nil {
				l = m.userLimited.WithLabelValues(labelValue(k.user))
				t.limits[k.user] = l
			}
		}
		t.mu.Unlock()
	}
	c.Inc()
	if limited {
		l.Inc()
	}
}
