package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// AdHocName is the name of the server built by AdHoc.
const AdHocName = "adhoc"

// SplitCommand splits a command line into words the way a POSIX shell
// would, without running one: words are separated by blanks; '...' is
// literal; "..." allows \" \\ \$ \` and line continuation; a backslash
// outside quotes escapes the next character. Nothing is expanded ($VAR, ~,
// globs stay as written) and operators such as | or > are ordinary
// characters. Unbalanced quotes and a trailing backslash are errors.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("the command ends with a backslash that escapes nothing")
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				cur.WriteByte(s[i])
				inWord = true
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unbalanced single quote at character %d", i+1)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			closed := false
			for ; j < len(s); j++ {
				if s[j] == '"' {
					closed = true
					break
				}
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`\n", s[j+1]) >= 0 {
					j++
					if s[j] != '\n' {
						cur.WriteByte(s[j])
					}
					continue
				}
				cur.WriteByte(s[j])
			}
			if !closed {
				return nil, fmt.Errorf("unbalanced double quote at character %d", i+1)
			}
			i = j
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// AdHoc builds the server named "adhoc" for a command line's --stdio or
// --url, exactly one of which must be given. A --stdio command is split
// with SplitCommand and inherits the whole environment, like a command
// typed at a shell; it is not held to the allowlist, since the user typed
// it. A --url picks its transport from the URL: ws:// or wss:// is
// websocket, a path ending in /sse is sse, anything else streamable http.
// Settings come from d; zero timeouts fall back to the built-in defaults.
func AdHoc(stdio string, rawURL string, d Defaults) (Server, error) {
	fail := func(field, msg, fix string) (Server, error) {
		return Server{}, &ValidationError{Problems: []Problem{{Field: field, Message: msg, Fix: fix, Err: errors.New(msg)}}}
	}
	srv := Server{
		Name:             AdHocName,
		ConnectTimeout:   orDefault(d.ConnectTimeout, DefaultConnectTimeout),
		RequestTimeout:   orDefault(d.RequestTimeout, DefaultRequestTimeout),
		MaxRetries:       d.MaxRetries,
		TerminateOnClose: true,
		Enabled:          true,
		LoadTools:        true,
		LoadPrompts:      true,
		LoadResources:    true,
	}
	stdio, rawURL = strings.TrimSpace(stdio), strings.TrimSpace(rawURL)
	switch {
	case stdio != "" && rawURL != "":
		return fail("--stdio", "--stdio and --url cannot be used together", "give one of them")
	case stdio != "":
		words, err := SplitCommand(stdio)
		if err != nil {
			return fail("--stdio", err.Error(), "quote the command as a shell would")
		}
		if len(words) == 0 || words[0] == "" {
			return fail("--stdio", "the command is empty", `give the command that starts the server, e.g. --stdio "npx -y @modelcontextprotocol/server-everything"`)
		}
		srv.Transport = TransportStdio
		srv.Command, srv.Args = words[0], words[1:]
		if len(srv.Args) == 0 {
			srv.Args = nil
		}
		srv.InheritEnv = true
		srv.Encoding = "utf-8"
		return srv, nil
	case rawURL != "":
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" {
			return fail("--url", "the URL is not valid", "write it as https://host/path")
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https", "ws", "wss":
		default:
			return fail("--url", "the URL must start with http://, https://, ws:// or wss://", "")
		}
		srv.Transport = urlTransport(rawURL)
		srv.URL = rawURL
		return srv, nil
	}
	return fail("--stdio", "give a server to connect to", `use --stdio "COMMAND ARGS..." or --url URL`)
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
