package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ClientFile is where an MCP client keeps the user's own configuration.
type ClientFile struct {
	Client string // e.g. "Claude Desktop"
	Path   string // absolute
	// Dir is true when Path is a folder: every file under it is the
	// client's (settings, per-profile files, extension storage).
	Dir bool
}

// UserClientFiles returns where the MCP clients Switchboard reads keep the
// user's own configuration on this platform, for the current user. Only
// the user writes these (unlike a repository's .vscode/mcp.json, .mcp.json
// or .cursor/mcp.json), so Switchboard may trust one at first use with one
// confirmation (Options.ConfirmTrust). lookup reads the user's
// environment ($HOME, $XDG_CONFIG_HOME, $APPDATA, $CLAUDE_CONFIG_DIR,
// $CODEX_HOME): a command's own, as Options.UserEnv; nil reads the
// process's.
func UserClientFiles(lookup func(string) (string, bool)) []ClientFile {
	home, cfg := userHome(lookup), userConfigDir(lookup)
	getenv := func(name string) string {
		if lookup == nil {
			return os.Getenv(name)
		}
		v, _ := lookup(name)
		return v
	}
	var out []ClientFile
	add := func(client, path string, dir bool) {
		if path != "" && filepath.IsAbs(path) {
			out = append(out, ClientFile{Client: client, Path: filepath.Clean(path), Dir: dir})
		}
	}
	in := func(base string, elem ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	add("Switchboard", in(cfg, "switchboard"), true)
	add("Claude Desktop", in(cfg, "Claude", "claude_desktop_config.json"), false)
	add("Claude Code", in(home, ".claude.json"), false)
	add("Claude Code", in(home, ".claude"), true)
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		add("Claude Code", d, true)
	}
	add("Cursor", in(home, ".cursor", "mcp.json"), false)
	// Cline and Roo Code keep their settings in the editor's extension
	// storage, inside the editor's user folder.
	for _, editor := range []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"} {
		add("Cline", in(cfg, editor, "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), false)
	}
	for _, editor := range []string{"Code", "Code - Insiders", "VSCodium"} {
		add("VS Code", in(cfg, editor, "User"), true)
	}
	add("Cursor", in(cfg, "Cursor", "User"), true)
	add("Windsurf", in(home, ".codeium", "windsurf"), true)
	add("Windsurf", in(cfg, "Windsurf", "User"), true)
	if runtime.GOOS == "windows" {
		add("Zed", in(cfg, "Zed"), true)
	} else {
		add("Zed", in(home, ".config", "zed"), true)
		if x := getenv("XDG_CONFIG_HOME"); x != "" {
			add("Zed", in(x, "zed"), true)
		}
	}
	add("Continue", in(home, ".continue"), true)
	add("Gemini CLI", in(home, ".gemini", "settings.json"), false)
	if d := getenv("CODEX_HOME"); d != "" {
		add("Codex", d, true)
	}
	add("Codex", in(home, ".codex"), true)
	return out
}

// UserClientFile reports whether path is one of the user's own MCP client
// configuration files (see UserClientFiles; lookup is the user's
// environment, nil the process's), and whose.
func UserClientFile(path string, lookup func(string) (string, bool)) (client string, ok bool) {
	if path == "" {
		return "", false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	forms := []string{filepath.Clean(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != forms[0] {
		forms = append(forms, real)
	}
	for _, cf := range UserClientFiles(lookup) {
		entries := []string{cf.Path}
		if real, err := filepath.EvalSymlinks(cf.Path); err == nil && real != cf.Path {
			entries = append(entries, real)
		}
		for _, p := range forms {
			for _, e := range entries {
				if p == e && !cf.Dir || cf.Dir && strings.HasPrefix(p, e+string(filepath.Separator)) {
					return cf.Client, true
				}
			}
		}
	}
	return "", false
}

// workspaceFolderFor is the value of ${workspaceFolder} for a file: for
// one of the user's own client files, which belong to no workspace, the
// working directory (the folder Switchboard runs in, as a client's
// workspace is the folder it has open); for a file in a project's client
// folder (.vscode, .cursor, .continue, .gemini, .zed, .codex, .windsurf,
// .claude), the folder holding it; else the file's own folder.
func workspaceFolderFor(filename, workDir string, lookup func(string) (string, bool)) string {
	if _, ok := UserClientFile(filename, lookup); ok && workDir != "" {
		return workDir
	}
	return workspaceFolder(filename)
}

// projectClientDirs are the folders MCP clients keep project files in.
var projectClientDirs = []string{".vscode", ".cursor", ".continue", ".gemini", ".zed", ".codex", ".windsurf", ".claude"}

// continueSecrets looks up a Continue ${{ secrets.NAME }}: in the
// environment, then in the .env files Continue reads for local secrets
// (~/.continue/.env, the workspace's .continue/.env and .env), home being
// the user's home directory.
func continueSecrets(lookup func(string) (string, bool), workspace, home string) func(string) (string, bool) {
	var vals map[string]string
	return func(name string) (string, bool) {
		if v, ok := lookup(name); ok {
			return v, true
		}
		if vals == nil {
			vals = map[string]string{}
			paths := []string{filepath.Join(workspace, ".env"), filepath.Join(workspace, ".continue", ".env")}
			if home != "" {
				paths = append([]string{filepath.Join(home, ".continue", ".env")}, paths...)
			}
			for _, p := range paths {
				data, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				lines, _ := parseDotenv(string(data), lookup, "")
				for _, l := range lines {
					vals[l.key] = l.value
				}
			}
		}
		v, ok := vals[name]
		return v, ok
	}
}
