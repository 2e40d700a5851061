package tasks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Names of the settings, as environment variables or .env keys. They are
// matched case-insensitively.
const (
	EnvServiceAuthToken  = "SERVICE_AUTH_TOKEN"
	EnvBackendURL        = "FASTAPI_BASE_URL"
	EnvBackendURLAlias   = "TASKS_BACKEND_URL"
	EnvLogLevel          = "MCP_LOG_LEVEL"
	EnvServerPort        = "MCP_SERVER_PORT"
	EnvBackendTimeout    = "BACKEND_TIMEOUT"
	EnvBackendMaxRetries = "BACKEND_MAX_RETRIES"
)

// Defaults for the optional settings.
const (
	DefaultLogLevel          = "INFO"
	DefaultPort              = 3000
	DefaultBackendTimeout    = 30 * time.Second
	DefaultBackendMaxRetries = 2
)

// Settings configures the task server (seed 002's Settings).
type Settings struct {
	// ServiceAuthToken authenticates this server to the backend. Required.
	ServiceAuthToken string
	// BackendURL is the backend's base URL, e.g. http://localhost:8000.
	BackendURL string
	// LogLevel is DEBUG, INFO, WARNING or ERROR.
	LogLevel string
	// Port is the HTTP port for the streamable HTTP transport.
	Port int
	// BackendTimeout bounds each backend request.
	BackendTimeout time.Duration
	// BackendMaxRetries is how many times a transient failure of an
	// idempotent request is retried.
	BackendMaxRetries int
}

// SlogLevel returns the slog level for s.LogLevel (INFO if unset).
func (s Settings) SlogLevel() slog.Level {
	switch strings.ToUpper(s.LogLevel) {
	case "DEBUG":
		return slog.LevelDebug
	case "WARNING":
		return slog.LevelWarn
	case "ERROR":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// LoadSettings reads the settings from lookup (usually [os.LookupEnv]) and
// from the .env file at dotenvPath, if it exists; the environment wins.
// Names match case-insensitively. A missing dotenvPath, or "", is not an
// error. The returned error is a [*fault.Error] of kind Config that lists
// every problem, one field per variable.
func LoadSettings(lookup func(string) (string, bool), dotenvPath string) (Settings, error) {
	var dotenv map[string]string
	if dotenvPath != "" {
		var err error
		dotenv, err = readDotenv(dotenvPath)
		if err != nil {
			return Settings{}, fault.Wrap(fault.Config, err, "reading %s", dotenvPath).
				WithSuggestions("Fix the file or point to another one")
		}
	}
	fromEnv := func(name string) (string, bool) {
		if lookup == nil {
			return "", false
		}
		if v, ok := lookup(name); ok {
			return v, true
		}
		return lookup(strings.ToLower(name))
	}
	fromDotenv := func(name string) (string, bool) {
		v, ok := dotenv[name]
		return v, ok
	}
	get := func(name string) (string, bool) {
		if v, ok := fromEnv(name); ok {
			return v, true
		}
		return fromDotenv(name)
	}

	var (
		s    Settings
		bad  []fault.FieldDetail
		fail = func(name, value, msg, suggestion string) {
			bad = append(bad, fault.FieldDetail{Field: name, Message: msg, ReceivedValue: value, Suggestion: suggestion})
		}
	)

	if v, _ := get(EnvServiceAuthToken); strings.TrimSpace(v) == "" {
		// Never echo the token.
		fail(EnvServiceAuthToken, "", "is required and must not be empty",
			"Set "+EnvServiceAuthToken+" to the backend's service token")
	} else {
		s.ServiceAuthToken = v
	}

	// The environment wins over .env, and within one source the canonical
	// name wins over its alias.
	name, raw, ok := EnvBackendURL, "", false
lookupURL:
	for _, source := range []func(string) (string, bool){fromEnv, fromDotenv} {
		for _, n := range []string{EnvBackendURL, EnvBackendURLAlias} {
			if raw, ok = source(n); ok {
				name = n
				break lookupURL
			}
		}
	}
	switch {
	case !ok || strings.TrimSpace(raw) == "":
		fail(EnvBackendURL, "", "is required", "Set "+EnvBackendURL+" to the backend's base URL, e.g. http://localhost:8000")
	default:
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fail(name, raw, "must be a valid http or https URL", "Use a URL such as http://localhost:8000")
		} else {
			s.BackendURL = strings.TrimRight(u.String(), "/")
		}
	}

	s.LogLevel = DefaultLogLevel
	if v, ok := get(EnvLogLevel); ok {
		switch lv := strings.ToUpper(strings.TrimSpace(v)); lv {
		case "DEBUG", "INFO", "WARNING", "ERROR":
			s.LogLevel = lv
		default:
			fail(EnvLogLevel, v, "must be one of DEBUG, INFO, WARNING, ERROR", "Use INFO unless you are debugging")
		}
	}

	s.Port = DefaultPort
	if v, ok := get(EnvServerPort); ok {
		p, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || p < 1 || p > 65535 {
			fail(EnvServerPort, v, "must be an integer between 1 and 65535", "Use a free TCP port such as 3000")
		} else {
			s.Port = p
		}
	}

	s.BackendTimeout = DefaultBackendTimeout
	if v, ok := get(EnvBackendTimeout); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch {
		case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
			fail(EnvBackendTimeout, v, "must be a number of seconds", "Use a value such as 30 or 2.5")
		case f <= 0:
			fail(EnvBackendTimeout, v, "must be greater than 0", "Use a value such as 30 or 2.5")
		case f > float64(math.MaxInt64)/float64(time.Second):
			fail(EnvBackendTimeout, v, "is too large", "Use a value such as 30 or 2.5")
		default:
			s.BackendTimeout = time.Duration(f * float64(time.Second))
		}
	}

	s.BackendMaxRetries = DefaultBackendMaxRetries
	if v, ok := get(EnvBackendMaxRetries); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err != nil:
			fail(EnvBackendMaxRetries, v, "must be an integer", "Use a small whole number such as 2")
		case n < 0:
			fail(EnvBackendMaxRetries, v, "must be 0 or more", "Use 0 to disable retries")
		default:
			s.BackendMaxRetries = n
		}
	}

	if len(bad) > 0 {
		e := fault.New(fault.Config, "invalid task server settings")
		e.Fields = bad
		return Settings{}, e
	}
	return s, nil
}

// readDotenv parses a .env file: KEY=VALUE lines, optional "export ",
// # comments, and single- or double-quoted values. Keys are upper-cased.
// A file that does not exist yields no values.
func readDotenv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseDotenv(f)
}

// parseDotenv parses .env content; see [readDotenv].
func parseDotenv(r io.Reader) (map[string]string, error) {
	vals := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			return nil, fmt.Errorf("line %d: want KEY=VALUE", n)
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) > 0 && (val[0] == '"' || val[0] == '\''):
			end := strings.IndexByte(val[1:], val[0])
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated quoted value for %s", n, key)
			}
			rest := strings.TrimSpace(val[end+2:])
			if rest != "" && !strings.HasPrefix(rest, "#") {
				return nil, fmt.Errorf("line %d: unexpected text after quoted value for %s", n, key)
			}
			val = val[1 : end+1]
		default:
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		vals[strings.ToUpper(key)] = val
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return vals, nil
}
