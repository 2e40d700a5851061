package web

import (
	"encoding/json"
	"slices"
	"strings"
)

// shellQuote quotes s for a POSIX shell: as it is when it is made only of
// characters no shell treats specially, otherwise in single quotes (a
// single quote inside becomes '\”).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin quotes each word and joins them with spaces.
func shellJoin(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// cliCall is the `switchboard call` command line of a call: the arguments
// as one JSON object in --args, so that every type survives.
func cliCall(server, tool string, args json.RawMessage) string {
	words := []string{"switchboard", "call", server, tool}
	if compact := compactJSON(args); compact != "" && compact != "{}" {
		words = append(words, "--args", compact)
	}
	return shellJoin(words...)
}

// cliPrompt is the `switchboard prompt` command line of a prompt's
// arguments, in name order.
func cliPrompt(server, name string, args map[string]string) string {
	words := []string{"switchboard", "prompt", server, name}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		words = append(words, k+"="+args[k])
	}
	return shellJoin(words...)
}

// compactJSON is raw JSON without insignificant space ("" when it is not
// JSON).
func compactJSON(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TokenVariable is the environment variable the "copy as curl" command
// reads the gateway token from, so that no secret is ever in the page.
const TokenVariable = "SWITCHBOARD_TOKEN"

// curlCall is a shell snippet that makes a call with curl through the
// gateway's streamable HTTP endpoint as any MCP client would: a JSON-RPC
// tools/call of the tool's exposed name. A stateless gateway takes the
// call alone; otherwise the snippet first initializes a session and sends
// its id. With tokens configured it sends "Authorization: Bearer
// $SWITCHBOARD_TOKEN".
func curlCall(endpoint, exposed string, args json.RawMessage, stateless, tokens bool) string {
	arguments := compactJSON(args)
	if arguments == "" {
		arguments = "{}"
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":` + string(mustJSON(exposed)) + `,"arguments":` + arguments + `}}`
	headers := []string{"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"}
	auth := ""
	if tokens {
		// Double quotes: the shell expands the variable.
		auth = ` -H "Authorization: Bearer $` + TokenVariable + `"`
	}
	post := func(extra, body string) string {
		return shellJoin(append([]string{"curl", "-sS", endpoint}, headers...)...) + auth + extra + " -d " + shellQuote(body)
	}
	if stateless {
		return post("", call)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	sid := ` -H "Mcp-Session-Id: $SID"`
	return "SID=$(" + post(" -o /dev/null -D -", initialize) + ` | tr -d '\r' | awk 'tolower($1) == "mcp-session-id:" {print $2}')` + "\n" +
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`) + "\n" +
		post(sid, call)
}
