package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// problemLines returns a load's problems, one per line.
func problemLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

// TestLaunchAllowNeedsTrust: a client's file widens the launch policy with
// launch.allow only while the user trusts it as it is; the refusal says
// where, what, why, and how to allow it.
func TestLaunchAllowNeedsTrust(t *testing.T) {
	t.Parallel()
	src := `{"mcpServers": {
  "gh": {"command": "docker", "args": ["run", "-i", "--privileged", "img"], "launch": {"allow": ["docker.privileged"]}},
  "net": {"command": "docker", "args": ["run", "-i", "--net=host", "img"]}
}}`
	file := repoFile(t, ".mcp.json", src)
	state := t.TempDir()
	opts := config.Options{StateDir: state}

	err := startErr(config.Load(file, opts))
	want := []string{
		file + `:2:53: mcpServers.gh.args[2]: docker argument "--privileged" is refused: it gives the container every device and capability of the host; the server allows it under launch.allow, which counts only in a file you trust; if you wrote or reviewed it, run: switchboard config trust ` + file + " --yes",
		file + `:3:54: mcpServers.net.args[2]: docker argument "--net=host" is refused: the container shares the host's network, where it reaches every local service; remove it; publish the ports the server needs on 127.0.0.1; or, if you mean it, add "launch": {"allow": ["docker.network-host"]} to the server and trust the file: switchboard config trust ` + file + " --yes",
	}
	if got := problemLines(err); !slices.Equal(got, want) {
		t.Fatalf("untrusted:\ngot  %q\nwant %q", got, want)
	}
	var ua *config.UnsafeArgumentError
	if !errors.As(err, &ua) || ua.Rule != "docker.privileged" {
		t.Errorf("got %v, want an *UnsafeArgumentError for docker.privileged", err)
	}

	// Trusted, the named construct is allowed and the other still refused.
	if _, err := config.Trust(state, file); err != nil {
		t.Fatal(err)
	}
	err = startErr(config.Load(file, opts))
	if got := problemLines(err); len(got) != 1 || !strings.Contains(got[0], `mcpServers.net.args[2]: docker argument "--net=host" is refused`) ||
		!strings.HasSuffix(got[0], `add "launch": {"allow": ["docker.network-host"]} to the server`) {
		t.Fatalf("trusted: got %q, want only --net=host refused, with how to allow it", got)
	}

	// Allowing that too, the file needs trust again, and then loads.
	allowed := strings.Replace(src, `"--net=host", "img"]`, `"--net=host", "img"], "launch": {"allow": ["docker.network-host"]}`, 1)
	if err := os.WriteFile(file, []byte(allowed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := startErr(config.Load(file, opts)); err == nil || !strings.Contains(err.Error(), "counts only in a file you trust") {
		t.Fatalf("edited: got %v, want the refusal again", err)
	}
	if _, err := config.Trust(state, file); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file, opts)
	if err != nil {
		t.Fatalf("trusted again: %v", err)
	}
	gh, _ := cfg.Server("gh")
	if !slices.Equal(gh.LaunchAllow, []string{"docker.privileged"}) {
		t.Errorf("LaunchAllow: got %v, want [docker.privileged]", gh.LaunchAllow)
	}
	// What it allows shows in the resolved configuration, and reads back.
	out, err := config.MarshalResolved(cfg)
	if err != nil || !regexp.MustCompile(`\n\s+launch:\n\s+allow: \[docker\.privileged\]\n`).Match(out) {
		t.Errorf("MarshalResolved: got %v\n%s", err, out)
	}
}

// TestLaunchAllowNative: a native file's launch.allow counts in the user's
// configuration folder, or once trusted elsewhere, as its hooks do; a
// name the policy does not know is an error with a suggestion; a name the
// server does not need is a warning.
func TestLaunchAllowNative(t *testing.T) {
	_, cfgDir := userHome(t)
	src := "servers:\n  - name: a\n    command: uvx\n    args: [--with, psycopg2-binary, mcp-alchemy]\n    launch: {allow: [uvx.with, env.LD_PRELOAD]}\n"
	state := t.TempDir()

	repo := repoFile(t, "switchboard.yaml", src)
	err := startErr(config.Load(repo, config.Options{StateDir: state}))
	if err == nil || !strings.Contains(err.Error(), repo+`:4:12: servers.a.args[0]: uvx argument "--with psycopg2-binary" is refused`) ||
		!strings.Contains(err.Error(), "counts only in a file you trust; if you wrote or reviewed it, run: switchboard config trust "+repo) {
		t.Fatalf("repository's native file: got %v", err)
	}
	if _, err := config.Trust(state, repo); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(repo, config.Options{StateDir: state})
	if err != nil {
		t.Fatalf("trusted native file: %v", err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].String(), repo+":5:32: servers.a.launch.allow[1]: env.LD_PRELOAD is not needed: the server uses nothing it allows; remove it") {
		t.Errorf("warnings: got %v, want env.LD_PRELOAD not needed", cfg.Warnings)
	}

	own := filepath.Join(cfgDir, "switchboard", "switchboard.yaml")
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := startErr(config.Load(own, config.Options{})); err != nil {
		t.Errorf("the user's own native file: %v", err)
	}

	bad := repoFile(t, "switchboard.yaml", "servers:\n  - name: a\n    command: npx\n    args: [pkg]\n    launch: {allow: [docker.privilege], other: 1}\n")
	err = startErr(config.Load(bad, config.Options{StateDir: state}))
	for _, want := range []string{
		bad + `:5:22: servers.a.launch.allow[0]: "docker.privilege" is not something the launch policy refuses; did you mean "docker.privileged"?`,
		bad + `:5:41: servers.a.launch.other: unknown field`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad allow: got %v, want %q", err, want)
		}
	}
}

// TestLaunchPolicyEnvPositions: a refused variable is reported where it
// was set: the env key, the env file's line, or inherit_env.
func TestLaunchPolicyEnvPositions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	envFile := filepath.Join(dir, "server.env")
	if err := os.WriteFile(envFile, []byte("# settings\nA=1\nNODE_OPTIONS=--require ./hook.js\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "switchboard.yaml")
	src := `servers:
  - name: a
    command: npx
    args: [-y, pkg]
    env_file: server.env
    env:
      LD_PRELOAD: ./evil.so
      NODE_ENV: production
  - name: d
    docker: {image: mcp/x}
    inherit_env: true
    env: {DOCKER_HOST: "tcp://evil:2375", PYTHONPATH: /app}
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	err := startErr(config.Load(file, config.Options{}))
	trust := "switchboard config trust " + file + " --yes"
	want := []string{
		file + `:7:7: servers.a.env.LD_PRELOAD: environment variable LD_PRELOAD is refused for npx: the dynamic loader loads the library it names into the launcher; remove it; or, if you mean it, add launch: {allow: [env.LD_PRELOAD]} to the server and trust the file: ` + trust,
		file + `:11:18: servers.d.inherit_env: inherit_env is refused for docker: it passes your whole environment, tokens included, to the launcher (and docker -e NAME into the container); remove it; name the variables the server needs under env; or, if you mean it, add launch: {allow: [env.inherit]} to the server and trust the file: ` + trust,
		file + `:12:11: servers.d.env.DOCKER_HOST: environment variable DOCKER_HOST is refused for docker: the Docker CLI sends the container to another daemon, or reads its settings from elsewhere; remove it; pass variables for the container under another name; or, if you mean it, add launch: {allow: [env.DOCKER_HOST]} to the server and trust the file: ` + trust,
		envFile + `:3:1: servers.a.env_file: environment variable NODE_OPTIONS is refused for npx: Node.js options such as --require load any file; remove it, or keep to --max-old-space-size, --no-warnings and the like; or, if you mean it, add launch: {allow: [env.NODE_OPTIONS]} to the server and trust the file: ` + trust,
	}
	if got := problemLines(err); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var ue *config.UnsafeEnvError
	if !errors.As(err, &ue) {
		t.Errorf("got %v, want an *UnsafeEnvError", err)
	}
}

// TestTrustAtFirstUseWidening: a user's own client file whose only need
// beyond the allowlist is its launch.allow is asked about once, naming it.
func TestTrustAtFirstUseWidening(t *testing.T) {
	home, _ := userHome(t)
	file := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `{"mcpServers": {"db": {"command": "uvx", "args": ["--with", "psycopg2-binary", "mcp-alchemy"], "launch": {"allow": ["uvx.with"]}}}}`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var questions []string
	yes := func(q string) (bool, error) { questions = append(questions, q); return true, nil }
	if err := startErr(config.Load(file, config.Options{StateDir: t.TempDir(), ConfirmTrust: yes})); err != nil {
		t.Fatalf("confirmed: %v", err)
	}
	if len(questions) != 1 || !strings.Contains(questions[0], "allows beyond the launch rules uvx.with (server db)") {
		t.Errorf("got questions %q, want one naming uvx.with (server db)", questions)
	}
}
