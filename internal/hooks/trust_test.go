package hooks_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

// TestTrust: hooks in a repository-local file run only once trusted, stop
// when it changes and run again once trusted again.
func TestTrust(t *testing.T) {
	repo, state := t.TempDir(), t.TempDir()
	marker := filepath.Join(repo, "ran")
	file := filepath.Join(repo, "switchboard.yaml")
	body := "servers: []\nhooks:\n  - {name: mark, on: work.done, actions: [{type: command, command: [touch, " + marker + "]}]}\n"
	write := func(s string) *config.Config {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(file, config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	fireRuns := func(t *testing.T, eng *hooks.Engine) bool {
		t.Helper()
		os.Remove(marker)
		rep, err := eng.Fire(context.Background(), "work.done", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(marker)
		if (len(rep.Runs) > 0) != (statErr == nil) {
			t.Fatalf("report %+v disagrees with the marker (%v)", rep, statErr)
		}
		return statErr == nil
	}
	if !hooks.NeedsTrust(file) || hooks.NeedsTrust("") {
		t.Fatalf("NeedsTrust: got %v for a repository file, %v for none; want true, false", hooks.NeedsTrust(file), hooks.NeedsTrust(""))
	}
	cfg := write(body)
	eng, err := hooks.New(hooks.Options{Config: cfg, StateDir: state, Describe: fakeDescribe, Dir: repo})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name      string
		do        func()
		wantState hooks.TrustState
		wantRun   bool
	}{
		{"never trusted", func() {}, hooks.Untrusted, false},
		{"trusted", func() {
			if _, err := hooks.Trust(state, file); err != nil {
				t.Fatal(err)
			}
		}, hooks.Trusted, true},
		{"changed", func() { cfg = write(body + "# edited\n") }, hooks.Changed, false},
		{"trusted again", func() {
			if _, err := hooks.Trust(state, file); err != nil {
				t.Fatal(err)
			}
		}, hooks.Trusted, true},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do()
			if err := eng.SetConfig(cfg); err != nil {
				t.Fatal(err)
			}
			list := eng.List()
			if len(list) != 1 || list[0].Trust != st.wantState {
				t.Fatalf("List: got %+v, want trust %s", list, st.wantState)
			}
			if got, _ := hooks.CheckTrust(state, file); got != st.wantState {
				t.Errorf("CheckTrust: got %s, want %s", got, st.wantState)
			}
			if got := fireRuns(t, eng); got != st.wantRun {
				t.Errorf("hook ran: got %v, want %v", got, st.wantRun)
			}
		})
	}
	// The records are private and name the file.
	fi, err := os.Stat(filepath.Join(state, hooks.TrustFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust file: got %v, %v, want mode 0600", fi, err)
	}
}

// TestHandler serves POST /hooks/events/{name}.
func TestHandler(t *testing.T) {
	dir := t.TempDir()
	f := engineOnly(t, `hooks:
  - {name: stop, on: release.check, if: {env: prod}, actions: [{type: command, command: [`+script(t, dir, "no.sh", `echo "prod is frozen" >&2; exit 2`)+`]}]}
`, nil)
	srv := httptest.NewServer(f.eng.Handler())
	defer srv.Close()
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	tests := []struct {
		name, path, body string
		wantCode         int
		check            func(map[string]any) bool
	}{
		{"wait blocked", "/hooks/events/release.check?wait=true", `{"env": "prod"}`, 200,
			func(m map[string]any) bool { return m["blocked"] == true && m["reason"] == "prod is frozen" }},
		{"wait allowed", "/hooks/events/release.check?wait=1", `{"env": "dev"}`, 200,
			func(m map[string]any) bool { return m["blocked"] == false && len(m["runs"].([]any)) == 0 }},
		{"async", "/hooks/events/release.check", `{"env": "prod"}`, 202,
			func(m map[string]any) bool { return m["event_id"] != "" }},
		{"empty body", "/hooks/events/release.check?wait=true", ``, 200,
			func(m map[string]any) bool { return m["event"] == "release.check" }},
		{"bad body", "/hooks/events/release.check", `[1]`, 400,
			func(m map[string]any) bool {
				return strings.Contains(m["error"].(map[string]any)["message"].(string), "JSON object")
			}},
		{"bad name", "/hooks/events/no%20spaces", `{}`, 400,
			func(m map[string]any) bool { return m["error"].(map[string]any)["error_type"] == "validation_error" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := post(tt.path, tt.body)
			if code != tt.wantCode || !tt.check(out) {
				t.Errorf("got %d %v, want %d", code, out, tt.wantCode)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/hooks/events/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: got %d, want 405", resp.StatusCode)
	}
}

// TestUntrustedHooksLogTheCommand: the warning that a file's hooks do not
// run names the command that trusts that file, by its path, as it works
// without a terminal.
func TestUntrustedHooksLogTheCommand(t *testing.T) {
	repo := t.TempDir()
	file := filepath.Join(repo, "switchboard.yaml")
	if err := os.WriteFile(file, []byte("servers: []\nhooks:\n  - {name: mark, on: work.done, actions: [{type: command, command: [\"true\"]}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := hooks.New(hooks.Options{Config: cfg, StateDir: t.TempDir(), Describe: fakeDescribe, Dir: repo, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	want := `run="switchboard hooks trust ` + file + ` --yes"`
	if !strings.Contains(logs.String(), want) {
		t.Errorf("the log says:\n%s\nwant it to contain %s", logs.String(), want)
	}
}
