package upstream

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// ClientRequests answers the requests a server sends its client while it
// works: sampling (an LLM completion), elicitation (asking the user) and
// roots. Switchboard has no model, user or roots of its own; the gateway
// forwards these to the client whose call caused them. A nil field means
// the capability is not declared, so a well-behaved server never asks.
type ClientRequests struct {
	CreateMessage func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// CreateMessageWithTools, when set, answers the sampling requests of a
	// session whose client declared sampling (Declared) in full — tools,
	// toolChoice, includeContext, several content blocks — instead of
	// CreateMessage: a per_client session forwards them to its client as
	// the server sent them, and the session declares the sampling
	// sub-capabilities (tools, context) its client declared.
	CreateMessageWithTools func(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit                 func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// ElicitURL declares that Elicit answers URL mode too (it shows the
	// person a URL to open), besides form mode.
	ElicitURL bool
	// ElicitAsGiven has the server get Elicit's answer as it is: no check
	// of an accepted form's content against the requested schema and none
	// of the schema's defaults filled in, which the SDK's client does. An
	// owned per_client session's (ownedcaps.go), whose answers are its
	// client's own (elicitasgiven.go).
	ElicitAsGiven bool
	// ElicitInOrder keeps each elicitation/create's params as the server
	// wrote them, for Elicit to find a form's requested schema as written
	// (RequestedSchemaAsSent): the SDK's map has lost the order of its
	// fields. Elicit's params and the SDK's checks of the answer are as
	// without it (elicitasgiven.go).
	ElicitInOrder bool
	//lint:ignore SA1019 roots remain part of the protocol versions clients speak today.
	ListRoots func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	// RootsListChanged declares that the client tells the server when its
	// roots change (Client.NotifyRootsChanged): an owned session forwards
	// its client's notifications/roots/list_changed.
	RootsListChanged bool
	// Declared, when set, is what the client a session is for declared
	// (an owned per_client session's): the session declares sampling,
	// elicitation (in the modes given) and roots only as far as that
	// client did, so that a server sees the capabilities it would see
	// directly. See ownedcaps.go.
	Declared *mcp.ClientCapabilities
	// Ping, when set, answers a server's ping: with the client's answer
	// as it gave it (raw), or, where it returns neither an answer nor an
	// error, as the session answers it itself (an empty result). The
	// gateway forwards the pings of a per_client session of a view that
	// is its server to that session's client (see pingMiddleware).
	Ping func(context.Context, *mcp.PingParams) (json.RawMessage, error)
}

// capabilities returns what a client with these handlers declares.
func (r ClientRequests) capabilities() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if r.CreateMessage != nil {
		caps.Sampling = &mcp.SamplingCapabilities{}
		if r.samplingInFull() {
			// The sub-capabilities as the client gave them.
			if r.Declared.Sampling.Tools != nil {
				caps.Sampling.Tools = &mcp.SamplingToolsCapabilities{}
			}
			if r.Declared.Sampling.Context != nil {
				caps.Sampling.Context = &mcp.SamplingContextCapabilities{}
			}
		}
	}
	if r.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
		if r.ElicitURL {
			caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
		}
		if d := r.Declared; d != nil && d.Elicitation != nil {
			// The modes as the client gave them: {} is form mode.
			caps.Elicitation = &mcp.ElicitationCapabilities{}
			if d.Elicitation.Form != nil {
				caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
			}
			if d.Elicitation.URL != nil {
				caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
			}
		}
	}
	if r.ListRoots != nil {
		//lint:ignore SA1019 see ListRoots.
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: r.RootsListChanged}
	}
	return caps
}

// samplingInFull reports whether sampling requests are answered by
// CreateMessageWithTools: a session for a client that declared sampling,
// with somewhere to forward them in full.
func (r ClientRequests) samplingInFull() bool {
	return r.CreateMessage != nil && r.CreateMessageWithTools != nil && r.Declared != nil && r.Declared.Sampling != nil
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
			res, err := r.ListRoots(ctx, p)
			if err != nil {
				return nil, requestError(err)
			}
			return res, nil
		}
	}
}

// pingMiddleware answers a server's ping with r.Ping: the answer it
// gives as it is, its error as requestError says; where it gives
// neither, as the SDK's client answers it.
func (r ClientRequests) pingMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "ping" || r.Ping == nil {
				return next(ctx, method, req)
			}
			p, _ := req.GetParams().(*mcp.PingParams)
			raw, err := r.Ping(ctx, p)
			switch {
			case err != nil:
				return nil, requestError(err)
			case raw == nil:
				return next(ctx, method, req)
			}
			return &rawResult{raw: raw}, nil
		}
	}
}

// rawResult is a result whose JSON is a client's answer as it gave it.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

// MarshalJSON returns the answer as the client gave it.
func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

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

// CodeUserRejected is the JSON-RPC error code the specification gives a
// sampling request the user rejected ("User rejected sampling request").
const CodeUserRejected = -1

// samplingError is the error a server gets for a sampling request that
// was not answered with a completion, the same on both call paths: a
// refusal (an authorization error: a person declined it, --sampling
// decline, no terminal to approve it on, no model) with code -1 and
// Switchboard's words; otherwise as requestError says.
// The error keeps err for the callers that read it (with multi round-trip
// the SDK fails the call with it instead of sending it).
func samplingError(err error) error {
	var we *jsonrpc.Error
	if err != nil && !errors.As(err, &we) && fault.KindOf(err) == fault.Authorization {
		return &wireCoded{err: err, wire: &jsonrpc.Error{Code: CodeUserRejected, Message: err.Error()}}
	}
	return requestError(err)
}

// requestError is the error a server gets for its request to the client
// (sampling, elicitation, roots) that was not answered, the same on both
// call paths and from every session, always a JSON-RPC error with a code:
// a JSON-RPC error — the client's own answer, or a refusal the gateway
// gave a code (-32602 for an elicitation the client cannot take or whose
// content the requested schema refuses) — as it is, with its code,
// message and data (not in the SDK's "calling …" wrapping, which the SDK
// would send with the wrapper's words and no data); any other failure
// (the client gone, the call's time up, a model that failed) as an
// internal error, -32603, with Switchboard's words, where the SDK would
// send code 0; that error keeps err for the callers that read it.
func requestError(err error) error {
	var (
		we *jsonrpc.Error
		wc *wireCoded
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &wc):
		return err
	case errors.As(err, &we):
		return we
	}
	return &wireCoded{err: err, wire: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}
}

// wireCoded is an error with the JSON-RPC error a peer gets for it: the
// SDK and the lean call path find wire (its code and message) with
// errors.As; everyone else finds err.
type wireCoded struct {
	err  error
	wire *jsonrpc.Error
}

func (w *wireCoded) Error() string   { return w.err.Error() }
func (w *wireCoded) Unwrap() []error { return []error{w.err, w.wire} }
