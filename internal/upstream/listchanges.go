package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A list change (notifications/tools/list_changed and the prompts' and
// resources') carries nothing but, perhaps, _meta: a TypeScript server
// sends none ("params" absent), a go-sdk server "params": {}. The SDK's
// client decodes either into the same empty params, so an owned session
// that passes its list changes on to its client (Events.ListChanged)
// keeps them as the server wrote them before the SDK decodes them, as it
// keeps elicitations (standalone.go): the HTTP layer for the event
// streams the SDK reads, the session's connection on stdio, SSE and
// WebSocket (keepingConn), and the lean call path, which reads its
// calls' streams itself.

// ListChange is a list change a server sent.
type ListChange struct {
	// Method is the notification's method.
	Method string
	// Params are its params as the server wrote them, nil when it sent
	// none; meaningful only when Known.
	Params json.RawMessage
	// Known is false where the transport did not keep the params.
	Known bool
}

// SentParams are a notification's params as its server wrote them (Raw;
// nil when it sent none, and then the receiver sends none either), for a
// receiver that passes the notification on as it came: they encode as
// Raw.
type SentParams struct {
	mcp.ToolListChangedParams // for mcp.Params; its fields are not used
	Raw                       json.RawMessage
}

// MarshalJSON returns the params as the server wrote them ({} for none).
func (p *SentParams) MarshalJSON() ([]byte, error) {
	if p.Raw == nil {
		return []byte("{}"), nil
	}
	return p.Raw, nil
}

// isListChange reports whether method is a list change.
func isListChange(method string) bool {
	switch method {
	case methodToolsChanged, methodPromptsChanged, methodResourcesChanged:
		return true
	}
	return false
}

// isNotice reports whether method is a notification the HTTP layer
// keeps the stream of besides log messages (standalone.go) and orders
// before the answer of the request it came with (noticeOrderKey): a list
// change, a resource update or an elicitation completion.
func isNotice(method string) bool {
	return isListChange(method) || method == methodResourceUpdated || method == methodElicitationComplete
}

// methodElicitationComplete is a server's word that a URL-mode
// elicitation is done.
const methodElicitationComplete = "notifications/elicitation/complete"

// sentParams returns params as kept: trimmed, nil when there are none.
func sentParams(params json.RawMessage) json.RawMessage {
	params = bytes.TrimSpace(params)
	if len(params) == 0 {
		return nil
	}
	return bytes.Clone(params)
}

// listChanged hands ev the list change method with params p as the SDK
// decoded them (a nil pointer when it gave none), taking out of their
// _meta what the transport kept of them: their params as written and
// the stream they came on, with which ctx, the handler's, is passed on.
func (c *Client) listChanged(ctx context.Context, ev Events, method string, p mcp.Params) {
	defer c.order.delivered(noticeOrderKey)
	if ev.ListChanged == nil {
		switch method {
		case methodToolsChanged:
			if ev.ToolsChanged != nil {
				ev.ToolsChanged()
			}
		case methodPromptsChanged:
			if ev.PromptsChanged != nil {
				ev.PromptsChanged()
			}
		case methodResourcesChanged:
			if ev.ResourcesChanged != nil {
				ev.ResourcesChanged()
			}
		}
		return
	}
	lc := ListChange{Method: method}
	if p != nil && !reflect.ValueOf(p).IsNil() {
		meta := mcp.Meta(p.GetMeta())
		if m, ok := c.kept.takeMeta(&meta); ok {
			if m.asSent {
				lc.Params, lc.Known = m.params, true
			}
			m.params = nil
			ctx = m.context(ctx)
		}
		p.SetMeta(meta)
	}
	ev.ListChanged(ctx, lc)
}
