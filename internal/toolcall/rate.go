package toolcall

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// rateLimits holds limits.rate's token buckets: one per user, and one per
// user and server. A call takes a token from both or from neither; one
// over either is refused at once with a rate_limited error saying when to
// retry. Callers pass the time, so that tests drive the buckets with a
// clock of their own.
type rateLimits struct {
	on    atomic.Bool // some bucket applies; without, allow takes no lock
	mu    sync.Mutex
	cfg   config.Rate
	users map[string]*rate.Limiter
	pairs map[rateKey]*rate.Limiter
	// sweepAt is the number of buckets at which full ones are dropped:
	// a full bucket is the same as a new one, so forgetting it changes
	// nothing, and users who stopped calling cost no memory.
	sweepAt int
}

type rateKey struct{ user, server string }

// minRateSweep is the fewest buckets kept before full ones are dropped.
const minRateSweep = 1024

// reconfigure sets the limits for calls from now on. Changed limits start
// from full buckets.
func (l *rateLimits) reconfigure(cfg config.Rate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cfg == l.cfg && l.users != nil {
		return
	}
	l.cfg = cfg
	l.users, l.pairs = map[string]*rate.Limiter{}, map[rateKey]*rate.Limiter{}
	l.sweepAt = minRateSweep
	l.on.Store(cfg.PerUser.PerSecond > 0 || cfg.PerUserServer.PerSecond > 0)
}

// allow takes a token for a call by user to server at now, or says when
// one may be taken.
func (l *rateLimits) allow(now time.Time, user, server string) error {
	if !l.on.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg.PerUser.PerSecond <= 0 && l.cfg.PerUserServer.PerSecond <= 0 {
		return nil
	}
	if len(l.users)+len(l.pairs) >= l.sweepAt {
		l.sweep(now)
	}
	type held struct {
		r     *rate.Reservation
		key   string
		b     config.Bucket
		delay time.Duration
	}
	var taken []held
	if b := l.cfg.PerUser; b.PerSecond > 0 {
		lim := l.users[user]
		if lim == nil {
			lim = newLimiter(b)
			l.users[user] = lim
		}
		r := lim.ReserveN(now, 1)
		taken = append(taken, held{r, "limits.rate.per_user", b, r.DelayFrom(now)})
	}
	if b := l.cfg.PerUserServer; b.PerSecond > 0 {
		k := rateKey{user, server}
		lim := l.pairs[k]
		if lim == nil {
			lim = newLimiter(b)
			l.pairs[k] = lim
		}
		r := lim.ReserveN(now, 1)
		taken = append(taken, held{r, "limits.rate.per_user_server", b, r.DelayFrom(now)})
	}
	worst := -1
	for i, h := range taken {
		if h.delay > 0 && (worst < 0 || h.delay > taken[worst].delay) {
			worst = i
		}
	}
	if worst < 0 {
		return nil
	}
	for _, h := range taken {
		h.r.CancelAt(now) // the call does not run: give its tokens back
	}
	return rateError(user, server, taken[worst].key, taken[worst].b, taken[worst].delay)
}

// sweep drops full buckets; l.mu is held.
func (l *rateLimits) sweep(now time.Time) {
	for k, lim := range l.users {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(l.users, k)
		}
	}
	for k, lim := range l.pairs {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(l.pairs, k)
		}
	}
	l.sweepAt = max(minRateSweep, 2*(len(l.users)+len(l.pairs)))
}

func newLimiter(b config.Bucket) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(b.PerSecond), max(b.Burst, 1))
}

// rateError is the error of a call over the bucket named key.
func rateError(user, server, key string, b config.Bucket, delay time.Duration) error {
	// Whole milliseconds, rounded up: a client that waits retry_after
	// finds a token.
	retry := math.Ceil(delay.Seconds()*1000) / 1000
	who := "user " + user
	if user == "" {
		who = "calls without a user"
	}
	scope := "all servers together"
	if key == "limits.rate.per_user_server" {
		scope = "server " + server
	}
	return fault.New(fault.RateLimited, "%s made more calls than %s allows (%g per second to %s, bursts of %d); retry in %s",
		who, key, b.PerSecond, scope, b.Burst, time.Duration(retry*float64(time.Second))).
		WithDetail("retry_after", retry).WithDetail("limit", key).WithDetail("server", server).
		WithSuggestions(fmt.Sprintf("wait %gs (details.retry_after) before calling again", retry),
			"or raise "+key+" in the configuration")
}
