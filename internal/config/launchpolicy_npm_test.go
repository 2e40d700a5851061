package config

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npmReading is how the installed npm reads one npx argument vector
// (testdata/launchpolicy/npx-parse.js).
type npmReading struct {
	Options map[string]any `json:"options"`
	Remain  []string       `json:"remain"`
	Pkg     *string        `json:"pkg"`
	PkgType string         `json:"pkgType"`
	Error   string         `json:"error"`
}

// npmSafeSettings are the npm settings an accepted npx vector may set.
var npmSafeSettings = map[string]bool{
	"yes": true, "loglevel": true, "prefer-offline": true, "prefer-online": true, "offline": true,
	"ignore-scripts": true, "audit": true, "fund": true, "update-notifier": true, "progress": true,
	"color": true, "legacy-peer-deps": true,
}

// TestLaunchPolicyAgreesWithNpm runs npx argument vectors through the
// installed npm's own reading of them — its npx wrapper and option parser,
// and npm-package-arg for the package — and checks that every vector the
// policy accepts sets only harmless npm settings and runs a package from
// the registry, and that each refusal of -c, -p, --registry or
// --node-options is of a setting npm really reads.
func TestLaunchPolicyAgreesWithNpm(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: install Node.js and npm to check the npx rules against npm's own parser")
	}
	out, err := exec.Command("npm", "root", "-g").Output()
	if err != nil {
		t.Skipf("npm root -g: %v: install npm to check the npx rules against npm's own parser", err)
	}
	npmDir := filepath.Join(strings.TrimSpace(string(out)), "npm")
	if _, err := os.Stat(filepath.Join(npmDir, "bin", "npx-cli.js")); err != nil {
		t.Skipf("npm's npx-cli.js is not in %s: install npm globally to check the npx rules against it", npmDir)
	}

	vectors := npxVectors()
	cmd := exec.Command(node, "testdata/launchpolicy/npx-parse.js", npmDir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		enc := json.NewEncoder(stdin)
		for _, v := range vectors {
			if err := enc.Encode(v); err != nil {
				break
			}
		}
		stdin.Close()
	}()

	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	dir := t.TempDir()
	p := LaunchPolicy{Allowed: DefaultAllowedCommands, Dir: dir, WorkDir: dir}
	accepted := 0
	for i, args := range vectors {
		if !sc.Scan() {
			t.Fatalf("npx-parse.js stopped after %d of %d vectors: %v", i, len(vectors), sc.Err())
		}
		var npm npmReading
		if err := json.Unmarshal(sc.Bytes(), &npm); err != nil {
			t.Fatalf("npx-parse.js: %v: %s", err, sc.Bytes())
		}
		var rules []string
		for _, err := range p.CheckServer(Server{Command: "npx", Args: args}) {
			var ua *UnsafeArgumentError
			if errors.As(err, &ua) {
				rules = append(rules, ua.Rule)
			}
		}
		if npm.Error != "" {
			continue // npm refuses it itself
		}
		if len(rules) == 0 {
			accepted++
			for k, v := range npm.Options {
				if k == "node-options" && safeNodeOptions(v.(string)) {
					continue
				}
				if !npmSafeSettings[k] {
					t.Errorf("npx %q was accepted, but npm reads it as setting %s=%v", args, k, v)
				}
			}
			if npm.Pkg != nil && !slices.Contains([]string{"tag", "version", "range"}, npm.PkgType) {
				t.Errorf("npx %q was accepted, but npm runs %q, a %s package", args, *npm.Pkg, npm.PkgType)
			}
			if npm.Pkg != nil && slices.Contains(npxRunners, strings.ToLower(npmSpecName(*npm.Pkg))) {
				t.Errorf("npx %q was accepted, but npm runs %q", args, *npm.Pkg)
			}
			continue
		}
		// A refusal of one setting is of a setting npm reads (unless
		// --loglevel, which takes the next argument as its value, may
		// have taken it: the policy reads such an argument both ways).
		if slices.Contains(args, "--loglevel") {
			continue
		}
		for rule, key := range map[string]string{"npx.call": "call", "npx.package": "package", "npx.node-options": "node-options"} {
			if slices.Equal(rules, []string{rule}) {
				if _, ok := npm.Options[key]; !ok {
					t.Errorf("npx %q: refused as %s, but npm reads no %s from it: %v", args, rule, key, npm.Options)
				}
			}
		}
	}
	t.Logf("%d vectors, %d accepted", len(vectors), accepted)
	if accepted < 50 {
		t.Errorf("only %d vectors accepted: the corpus no longer exercises what is allowed", accepted)
	}
}

// npxVectors are the vectors TestLaunchPolicyAgreesWithNpm checks: the
// spellings the policy's tests use, and random sequences of them.
func npxVectors() [][]string {
	options := []string{"-y", "--yes", "-q", "--quiet", "-s", "-d", "-dd", "-yq", "-qy", "--no", "--yes=false", "--prefer-offline",
		"--loglevel", "warn", "--loglevel=silent", "--ignore-scripts", "--no-audit", "--color",
		"-c", "--call", "--call=id", "-yc", "--c=id", "---call=x", "-call", "--cal", "id",
		"--node-options", "--node-options=--require=./x.js", "--node-options=--max-old-space-size=512", "--node-opt", "--require=./x",
		"-p", "--package=x", "--registry", "https://r.example.com", "--@s:registry=https://r.example.com",
		"--userconfig", "./npmrc", "--prefix", "-C", "--cache", "--shell", "--script-shell=sh", "--foo", "-", "--", "-n", "--node-arg"}
	packages := []string{"pkg", "pkg@1.2.3", "@s/pkg", "@s/pkg@latest", "pkg@>=1 <2", "u/r", "github:u/r", "git+https://x/y.git",
		"./x", "../x", "/tmp/x", "~/x", "evil.tgz", "x.tar", "file:x", "https://x/y.tgz", "node", "node@20", "true", "@s/p/q", "pkg@github:u/r"}
	var out [][]string
	for _, pkg := range packages {
		out = append(out, []string{pkg}, []string{"-y", pkg}, []string{"--", pkg})
	}
	for _, o := range options {
		out = append(out, []string{o, "pkg"}, []string{"-y", o, "pkg", "-c", "x"})
	}
	rng := rand.New(rand.NewPCG(18, 3))
	vocab := append(slices.Clone(options), packages...)
	for range 2000 {
		n := 1 + rng.IntN(5)
		v := make([]string, n)
		for i := range v {
			v[i] = vocab[rng.IntN(len(vocab))]
		}
		out = append(out, v)
	}
	return out
}
