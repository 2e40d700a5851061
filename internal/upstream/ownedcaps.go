package upstream

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import "github.com/modelcontextprotocol/go-sdk/mcp"

// declaring returns r for an owned per_client session whose client
// declared caps: it answers, and so declares, sampling, elicitation and
// roots only where the client declared them — elicitation in the modes
// it gave, roots with listChanged as it gave it — so that a server that
// offers more to more capable clients (server-everything adds tools for
// each) offers this client what it would offer it directly. A server
// with configured roots keeps them (the operator's choice wins). Sampling
// is declared with the tools and context sub-capabilities the client
// declared, and its requests forwarded in full (CreateMessageWithTools);
// elicitation answers reach the server as the client gave them
// (ElicitAsGiven).
// caps nil (not known) leaves r as it is.
func (r ClientRequests) declaring(caps *mcp.ClientCapabilities, configuredRoots bool) ClientRequests {
	if caps == nil {
		return r
	}
	r.Declared = caps
	if caps.Sampling == nil {
		r.CreateMessage, r.CreateMessageWithTools = nil, nil
	}
	if caps.Elicitation == nil {
		r.Elicit, r.ElicitURL = nil, false
	} else {
		r.ElicitURL = caps.Elicitation.URL != nil
		r.ElicitAsGiven = true // the client's own answers, as it gave them
	}
	if !configuredRoots {
		if caps.RootsV2 == nil {
			r.ListRoots, r.RootsListChanged = nil, false
		} else {
			r.RootsListChanged = r.RootsListChanged && caps.RootsV2.ListChanged
		}
	}
	return r
}
