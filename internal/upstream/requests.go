package upstream

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientRequests answers the requests a server sends its client while it
// works: sampling (an LLM completion), elicitation (asking the user) and
// roots. Switchboard has no model, user or roots of its own; the gateway
// forwards these to the client whose call caused them. A nil field means
// the capability is not declared, so a well-behaved server never asks.
type ClientRequests struct {
	CreateMessage func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Elicit        func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// ElicitURL declares that Elicit answers URL mode too (it shows the
	// person a URL to open), besides form mode.
	ElicitURL bool
	//lint:ignore SA1019 roots remain part of the protocol versions clients speak today.
	ListRoots func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	// RootsListChanged declares that the client tells the server when its
	// roots change (Client.NotifyRootsChanged): an owned session forwards
	// its client's notifications/roots/list_changed.
	RootsListChanged bool
	// Declare, when set, bounds what is declared: sampling and
	// elicitation (and its modes) only as far as Declare has them too (a
	// per_client session declares what its owner's client declared).
	Declare *mcp.ClientCapabilities
}

// capabilities returns what a client with these handlers declares.
func (r ClientRequests) capabilities() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if r.CreateMessage != nil {
		caps.Sampling = &mcp.SamplingCapabilities{}
	}
	if r.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
		if r.ElicitURL {
			caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
		}
	}
	if r.ListRoots != nil {
		//lint:ignore SA1019 see ListRoots.
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: r.RootsListChanged}
	}
	if d := r.Declare; d != nil {
		if d.Sampling == nil {
			caps.Sampling = nil
		}
		switch e := d.Elicitation; {
		case e == nil:
			caps.Elicitation = nil
		case caps.Elicitation != nil:
			// An empty elicitation object is form mode.
			if e.Form == nil && e.URL != nil {
				caps.Elicitation.Form = nil
			}
			if e.URL == nil {
				caps.Elicitation.URL = nil
			}
			if caps.Elicitation.Form == nil && caps.Elicitation.URL == nil {
				caps.Elicitation = nil
			}
		}
	}
	return caps
}

// rootsMiddleware answers roots/list with r.ListRoots instead of the SDK
// client's own (empty) root set.
func (r ClientRequests) rootsMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" || r.ListRoots == nil {
				return next(ctx, method, req)
			}
			//lint:ignore SA1019 see ListRoots.
			p, _ := req.GetParams().(*mcp.ListRootsParams)
			if p == nil {
				//lint:ignore SA1019 see ListRoots.
				p = &mcp.ListRootsParams{}
			}
			return r.ListRoots(ctx, p)
		}
	}
}

// Identity is who a request is made for: the gateway's caller.
type Identity struct {
	User    string
	Session string
}

type identityKey struct{}

// WithIdentity returns a context whose requests to HTTP upstreams fill
// the ${identity.user} and ${identity.session} placeholders of the
// server's configured headers.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity set by WithIdentity, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// identityPlaceholders are the header placeholders filled per request.
const (
	placeholderUser    = "${identity.user}"
	placeholderSession = "${identity.session}"
)

// fillIdentity replaces the identity placeholders in a header value; with
// no identity they become empty.
func fillIdentity(ctx context.Context, v string) string {
	if !strings.Contains(v, "${identity.") {
		return v
	}
	id, _ := IdentityFrom(ctx)
	return strings.NewReplacer(placeholderUser, id.User, placeholderSession, id.Session).Replace(v)
}

// configuredRoots answers roots/list with a server's configured roots.
func configuredRoots(uris []string) func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	roots := rootsOf(uris)
	return func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: roots}, nil
	}
}

// rootsOf makes roots of file:// URIs, each named after its last path
// element.
func rootsOf(uris []string) []*mcp.Root {
	roots := make([]*mcp.Root, 0, len(uris))
	for _, u := range uris {
		name := u
		if p, err := url.Parse(u); err == nil {
			name = path.Base(p.Path)
		}
		roots = append(roots, &mcp.Root{URI: u, Name: name})
	}
	return roots
}
