package gateway

import (
	"fmt"
	"net/http"
	"sync"
)

// userRequests counts the requests each identity has open on the MCP
// endpoints that may stay open — calls (tools/call, prompts/get, …, each
// waiting for its server) and event streams (GET) — so that one user
// cannot hold the connections every user shares (gateway.max_connections):
// before, one user's 1,000 sessions (gateway.max_sessions_per_user) could
// each hold a stream and any number of calls. Past
// gateway.max_requests_per_user the user's next such request is answered
// 429, and other users are not affected.
type userRequests struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire counts one more request of user, or reports false when user
// already has max open (0: no limit); release ends what acquire counted.
func (u *userRequests) acquire(user string, max int) (release func(), ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if max > 0 && u.open[user] >= max {
		return nil, false
	}
	if u.open == nil {
		u.open = map[string]int{}
	}
	u.open[user]++
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.open[user]--; u.open[user] <= 0 {
			delete(u.open, user)
		}
	}, true
}

// refuseUserRequest answers a request over gateway.max_requests_per_user.
func refuseUserRequest(w http.ResponseWriter, id []byte, user string, max int) {
	w.Header().Set("Retry-After", "1")
	writeRPCError(w, http.StatusTooManyRequests, id, -32000, fmt.Sprintf(
		"Too many requests: user %q already has %d requests open on the gateway (calls waiting for their answers and event streams), the limit gateway.max_requests_per_user sets; wait for some to end, close sessions this user no longer needs, or raise gateway.max_requests_per_user", user, max))
}
