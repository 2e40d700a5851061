package config

import (
	"os"
	"path/filepath"
	"runtime"
)

// userHome is the user's home directory as os.UserHomeDir finds it, read
// through lookup (Options.UserEnv: a command's own environment), or ""
// when it is not set. A nil lookup is the process's environment.
func userHome(lookup func(string) (string, bool)) string {
	if lookup == nil {
		h, _ := os.UserHomeDir()
		return h
	}
	name := "HOME"
	switch runtime.GOOS {
	case "windows":
		name = "USERPROFILE"
	case "plan9":
		name = "home"
	}
	h, _ := lookup(name)
	return h
}

// userConfigDir is the user's configuration folder as os.UserConfigDir
// finds it, read through lookup as userHome is, or "" when it has none.
func userConfigDir(lookup func(string) (string, bool)) string {
	if lookup == nil {
		d, _ := os.UserConfigDir()
		return d
	}
	get := func(name string) string { v, _ := lookup(name); return v }
	in := func(base string, elem ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	switch runtime.GOOS {
	case "windows":
		return get("AppData")
	case "darwin", "ios":
		return in(get("HOME"), "Library", "Application Support")
	case "plan9":
		return in(get("home"), "lib")
	}
	if x := get("XDG_CONFIG_HOME"); x != "" {
		if !filepath.IsAbs(x) {
			return "" // os.UserConfigDir refuses a relative one
		}
		return x
	}
	return in(get("HOME"), ".config")
}
