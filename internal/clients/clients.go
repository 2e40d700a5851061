// Package clients writes Switchboard's gateway entry into the
// configuration files of the MCP clients people use — Claude Desktop,
// Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex and Zed — and
// reads it back: `switchboard client connect|disconnect|list`.
//
// Each client has its file per platform and scope (the user's own files
// come from config.UserClientFiles, so that a file written here is one
// Switchboard trusts at first use) and its own shape for an entry: the
// gateway's URL where the client speaks streamable HTTP, a command
// (`switchboard serve --stdio --config ABS`) where it only launches
// commands. A file is edited in place, changing only the entry's bytes
// (JSONC through github.com/tailscale/hujson, Codex's TOML by its tables),
// so the user's other settings and comments stay; a change is atomic,
// keeps the file's mode, and leaves a timestamped backup of the file as it
// was.
package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Scope is whose file an entry goes into.
type Scope string

// The scopes.
const (
	ScopeUser    Scope = "user"    // the user's own file, for every project
	ScopeProject Scope = "project" // the project's file, in its folder
)

// Shape is how a client reaches the gateway.
type Shape string

// The shapes.
const (
	ShapeURL   Shape = "url"   // the gateway's URL (streamable HTTP)
	ShapeStdio Shape = "stdio" // a command the client launches
)

// format is the layout of a client's file.
type format int

const (
	formatJSON format = iota // JSON or JSONC, servers under a key
	formatTOML               // Codex's [mcp_servers.NAME] tables
)

// Client is an MCP client whose configuration Switchboard can connect.
type Client struct {
	// ID is what `client connect` takes: claude-desktop, claude-code,
	// cursor, vscode, windsurf, gemini, codex, zed.
	ID string
	// Name is the client's name, as config.UserClientFiles spells it.
	Name string
	// Scopes are the scopes it has files for; the first is the default.
	Scopes []Scope
	// HTTP reports that it reaches a server by URL (streamable HTTP).
	HTTP bool

	format format
	// key is the object (JSON) or table (TOML) holding the servers.
	key string
	// userFile is the user's file, from config.UserClientFiles.
	userFile func([]config.ClientFile) string
	// projectFile is the project's file, relative to its folder.
	projectFile string
	// entry renders the entry's fields, in the order they are written.
	entry func(e Entry) fields
}

// Entry is Switchboard's entry in a client's file.
type Entry struct {
	Name  string // the key it is kept under, "switchboard" by default
	Shape Shape
	// URL is the gateway's endpoint (ShapeURL).
	URL string
	// Command and Args launch `switchboard serve --stdio` (ShapeStdio).
	Command string
	Args    []string
}

// Target is one client file.
type Target struct {
	Client *Client
	Scope  Scope
	Path   string // absolute
}

// DefaultName is the entry's name unless told otherwise; reading a
// client's file knows an entry of this name at a loopback /mcp URL as
// Switchboard's own, whatever its port.
const DefaultName = config.OwnEntryName

// all are the clients, in the order `client list` shows them.
var all = []*Client{
	{
		ID: "claude-desktop", Name: "Claude Desktop", Scopes: []Scope{ScopeUser}, HTTP: false,
		key: "mcpServers",
		userFile: func(cf []config.ClientFile) string {
			return pick(cf, "Claude Desktop", "claude_desktop_config.json", false)
		},
		entry: func(e Entry) fields { return stdioFields(e) },
	},
	{
		ID: "claude-code", Name: "Claude Code", Scopes: []Scope{ScopeUser, ScopeProject}, HTTP: true,
		key: "mcpServers", projectFile: ".mcp.json",
		userFile: func(cf []config.ClientFile) string { return pick(cf, "Claude Code", ".claude.json", false) },
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"type", "http"}, {"url", e.URL}}
			}
			return append(fields{{"type", "stdio"}}, stdioFields(e)...)
		},
	},
	{
		ID: "cursor", Name: "Cursor", Scopes: []Scope{ScopeUser, ScopeProject}, HTTP: true,
		key: "mcpServers", projectFile: filepath.Join(".cursor", "mcp.json"),
		userFile: func(cf []config.ClientFile) string { return pick(cf, "Cursor", "mcp.json", false) },
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"url", e.URL}}
			}
			return stdioFields(e)
		},
	},
	{
		ID: "vscode", Name: "VS Code", Scopes: []Scope{ScopeUser, ScopeProject}, HTTP: true,
		key: "servers", projectFile: filepath.Join(".vscode", "mcp.json"),
		userFile: func(cf []config.ClientFile) string { return pick(cf, "VS Code", "mcp.json", false) },
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"type", "http"}, {"url", e.URL}}
			}
			return append(fields{{"type", "stdio"}}, stdioFields(e)...)
		},
	},
	{
		ID: "windsurf", Name: "Windsurf", Scopes: []Scope{ScopeUser}, HTTP: true,
		key: "mcpServers",
		userFile: func(cf []config.ClientFile) string {
			return pick(cf, "Windsurf", "mcp_config.json", false)
		},
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"serverUrl", e.URL}}
			}
			return stdioFields(e)
		},
	},
	{
		ID: "gemini", Name: "Gemini CLI", Scopes: []Scope{ScopeUser, ScopeProject}, HTTP: true,
		key: "mcpServers", projectFile: filepath.Join(".gemini", "settings.json"),
		userFile: func(cf []config.ClientFile) string { return pick(cf, "Gemini CLI", "settings.json", false) },
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"httpUrl", e.URL}}
			}
			return stdioFields(e)
		},
	},
	{
		ID: "codex", Name: "Codex", Scopes: []Scope{ScopeUser, ScopeProject}, HTTP: true,
		format: formatTOML, key: "mcp_servers", projectFile: filepath.Join(".codex", "config.toml"),
		userFile: func(cf []config.ClientFile) string { return pick(cf, "Codex", "config.toml", false) },
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"url", e.URL}}
			}
			return stdioFields(e)
		},
	},
	{
		ID: "zed", Name: "Zed", Scopes: []Scope{ScopeUser, ScopeProject}, HTTP: true,
		key: "context_servers", projectFile: filepath.Join(".zed", "settings.json"),
		// Zed reads $XDG_CONFIG_HOME/zed when that is set, which
		// UserClientFiles lists last.
		userFile: func(cf []config.ClientFile) string { return pick(cf, "Zed", "settings.json", true) },
		entry: func(e Entry) fields {
			if e.Shape == ShapeURL {
				return fields{{"url", e.URL}}
			}
			return stdioFields(e)
		},
	},
}

// field is one key and value of an entry.
type field struct {
	key   string
	value any // string or []string
}

// fields are an entry's fields in the order they are written.
type fields []field

// MarshalJSON writes the fields as an object, in order.
func (fs fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// asMap is the fields as JSON decoding gives them, to compare with an
// entry read from a file.
func (fs fields) asMap() map[string]any {
	m := make(map[string]any, len(fs))
	for _, f := range fs {
		if l, ok := f.value.([]string); ok {
			items := make([]any, len(l))
			for i, s := range l {
				items[i] = s
			}
			m[f.key] = items
			continue
		}
		m[f.key] = f.value
	}
	return m
}

// stdioFields are the command and arguments of a stdio entry.
func stdioFields(e Entry) fields {
	return fields{{"command", e.Command}, {"args", slices.Clone(e.Args)}}
}

// pick returns the client's user file from the list: the entry that is
// the file itself, or fileName in the entry that is a folder (the first
// such one, or the last when last is set).
func pick(cf []config.ClientFile, client, fileName string, last bool) string {
	out := ""
	for _, f := range cf {
		if f.Client != client {
			continue
		}
		p := f.Path
		if f.Dir {
			p = filepath.Join(p, fileName)
		} else if filepath.Base(p) != fileName {
			continue
		}
		if !last {
			return p
		}
		out = p
	}
	return out
}

// All returns every client Switchboard can connect.
func All() []*Client { return slices.Clone(all) }

// IDs are the clients' IDs.
func IDs() []string {
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = c.ID
	}
	return out
}

// Lookup returns the client with the given ID (or name, in any case).
func Lookup(id string) (*Client, error) {
	norm := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(id), " ", "-"))
	for _, c := range all {
		if c.ID == norm || strings.ToLower(strings.ReplaceAll(c.Name, " ", "-")) == norm {
			return c, nil
		}
	}
	if s := suggest.Closest(norm, IDs(), 1); len(s) > 0 {
		return nil, fault.New(fault.NotFound, "unknown client %q; did you mean %q?", id, s[0])
	}
	return nil, fault.New(fault.NotFound, "unknown client %q; want one of %s", id, strings.Join(IDs(), ", "))
}

// CanMove reports whether Connect can move entries out of the client's
// file and Disconnect put them back (Options.Move): not for a TOML file,
// whose editor writes only strings and lists of strings.
func (c *Client) CanMove() bool { return c.format != formatTOML }

// HasScope reports whether the client has files of scope s.
func (c *Client) HasScope(s Scope) bool { return slices.Contains(c.Scopes, s) }

// Target returns the client's file of scope s: the user's own, where the
// user's environment lookupEnv says it is ($HOME, $XDG_CONFIG_HOME,
// $APPDATA, ... of the command that asks; nil reads the process's), or
// the one in projectDir.
func (c *Client) Target(s Scope, projectDir string, lookupEnv func(string) (string, bool)) (Target, error) {
	switch {
	case s == "":
		s = c.Scopes[0]
	case !c.HasScope(s):
		return Target{}, fault.New(fault.Validation, "%s has no %s-scope file; it has %s", c.Name, s, scopeList(c.Scopes))
	}
	var path string
	if s == ScopeUser {
		path = c.userFile(config.UserClientFiles(lookupEnv))
		if path == "" {
			return Target{}, fault.New(fault.Config, "cannot tell where %s keeps its configuration on %s (no home or config folder)", c.Name, runtime.GOOS).
				WithSuggestions("set HOME")
		}
	} else {
		abs, err := filepath.Abs(projectDir)
		if err != nil {
			return Target{}, fmt.Errorf("finding the project folder: %w", err)
		}
		path = filepath.Join(abs, c.projectFile)
	}
	return Target{Client: c, Scope: s, Path: path}, nil
}

func scopeList(s []Scope) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, " and ")
}

// Installed reports whether the client seems installed for the user whose
// environment lookupEnv reads (nil: the process's): one of its
// InstallSigns exists (the folder of its user file; for Claude Code, its
// file or ~/.claude).
func (c *Client) Installed(lookupEnv func(string) (string, bool)) bool {
	for i, p := range c.InstallSigns(lookupEnv) {
		fi, err := os.Stat(p)
		if err == nil && (fi.IsDir() || c.ID == "claude-code" && i == 0) { // Claude Code's sign 0 is its file
			return true
		}
	}
	return false
}

// InstallSigns are the paths whose existence says the client is
// installed: the folder of its user file, or for Claude Code, whose user
// file is in the home folder, that file and ~/.claude beside it.
func (c *Client) InstallSigns(lookupEnv func(string) (string, bool)) []string {
	path := c.userPath(lookupEnv)
	if path == "" {
		return nil
	}
	if c.ID == "claude-code" {
		return []string{path, filepath.Join(filepath.Dir(path), ".claude")}
	}
	return []string{filepath.Dir(path)}
}

// userPath is the path of the client's user file, or "".
func (c *Client) userPath(lookupEnv func(string) (string, bool)) string {
	t, err := c.Target(ScopeUser, "", lookupEnv)
	if err != nil {
		return ""
	}
	return t.Path
}

// Fields are the entry's fields as the client's file holds them.
func (c *Client) Fields(e Entry) map[string]any { return c.entry(e).asMap() }

// CheckEntry reports whether the client can take e.
func (c *Client) CheckEntry(e Entry) error {
	if e.Shape == ShapeURL && !c.HTTP {
		return fault.New(fault.Validation, "%s only launches its servers as commands, so it cannot take the gateway's URL", c.Name).
			WithSuggestions("connect it with --stdio (its default)")
	}
	if !validName(e.Name) {
		return fault.New(fault.Validation, "invalid entry name %q: use letters, digits, - and _", e.Name)
	}
	return nil
}

// validName reports whether name is a usable entry name in every client.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
