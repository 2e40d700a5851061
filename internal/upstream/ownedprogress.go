package upstream

import (
	"context"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type progressTokenKey struct{}

// WithProgressToken returns a context whose tools/call carries token — a
// gateway client's own progress token, on that client's own upstream
// session (session: per_client) — as its progress token, so that the
// server sees the token the client sent. Only the client's requests use
// its own session, so the token is as unique there as the client keeps
// it; should a call of the session already use it, the call gets a token
// of the connection's own.
func WithProgressToken(ctx context.Context, token any) context.Context {
	return context.WithValue(ctx, progressTokenKey{}, token)
}

// claimProgress returns the progress token of a call made with ctx —
// the caller's (WithProgressToken), or one of c's own ("sb-N") when the
// caller gave none, gave one the SDK cannot send (a fraction), or one a
// call of c already uses — and its key in c.progress, where onProgress is
// stored under it.
func (c *Client) claimProgress(ctx context.Context, onProgress func(*mcp.ProgressNotificationParams)) (token any, key string) {
	if t, ok := sendableToken(ctx.Value(progressTokenKey{})); ok {
		k := tokenKey(t)
		if _, busy := c.progress.LoadOrStore(k, onProgress); !busy {
			return t, k
		}
	}
	tok := "sb-" + strconv.FormatUint(c.nextToken.Add(1), 10)
	c.progress.Store(tok, onProgress)
	return tok, tok
}

// sendableToken returns t as a progress token the SDK sends (a string or
// an integer): a JSON number that is a whole number becomes an int64.
func sendableToken(t any) (any, bool) {
	switch v := t.(type) {
	case string, int, int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return int64(v), true
		}
	}
	return nil, false
}
