package upstream

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What an owned session tells its owner alone (PoolOptions.OnSessionNotify).
const (
	methodToolsChanged     = "notifications/tools/list_changed"
	methodPromptsChanged   = "notifications/prompts/list_changed"
	methodResourcesChanged = "notifications/resources/list_changed"
)

// methodResourceUpdated is an owned session's update of a resource its
// owner subscribed to on it.
const methodResourceUpdated = "notifications/resources/updated"

// listChangedMethods are the list changes an owner is told of when its
// session died: whatever the next session lists is new to it.
var listChangedMethods = []string{methodToolsChanged, methodPromptsChanged, methodResourcesChanged}

// notify hands the owner of key's session the notifications of methods.
func (o *ownedSessions) notify(key SessionKey, methods ...string) {
	f := o.s.opts.OnSessionNotify
	if f == nil {
		return
	}
	for _, m := range methods {
		f(context.Background(), o.s.Name(), key, m, nil)
	}
}

// notifyList hands the owner of key's session its server's list change
// lc, sent with ctx (the stream it came on): with its params as the
// server wrote them (SentParams) where they were kept, else nil params,
// as notify does.
func (o *ownedSessions) notifyList(ctx context.Context, key SessionKey, lc ListChange) {
	f := o.s.opts.OnSessionNotify
	if f == nil {
		return
	}
	var params mcp.Params
	if lc.Known {
		params = &SentParams{Raw: lc.Params}
	}
	f(ctx, o.s.Name(), key, lc.Method, params)
}

// watch returns when owned session c ends: closed (by its owner's end,
// closeAll, or its server), or found dead by a ping. Owned sessions are
// pinged as the shared one is (defaults.health: ping_interval,
// ping_timeout), so that a hung server's session is closed, its owner
// told, and a new one opened on the next request, rather than every
// request of its owner waiting out its timeout.
func (o *ownedSessions) watch(c *Client) {
	iv := o.s.opts.Health.PingInterval
	if iv <= 0 {
		select {
		case <-c.Done():
		case <-o.ctx.Done():
		}
		return
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-c.Done():
			return
		case <-o.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(o.ctx, o.s.opts.Health.PingTimeout)
		_, err := c.Ping(ctx)
		cancel()
		if err != nil && o.ctx.Err() == nil {
			o.s.logger.Warn("an owned upstream session failed its ping; closing it", logKeyErr, err)
			return
		}
	}
}

// notifyUpdated hands the owner of key's session its server's
// resources/updated of uri, sent with ctx (the stream it came on).
func (o *ownedSessions) notifyUpdated(ctx context.Context, key SessionKey, uri string) {
	if f := o.s.opts.OnSessionNotify; f != nil {
		f(ctx, o.s.Name(), key, methodResourceUpdated, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}
