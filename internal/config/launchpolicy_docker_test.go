package config

import (
	"bufio"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The Docker CLI's options, as `docker --help` and `docker run --help`
// print them, captured from a real docker (the first line is its version).
// They are the oracle the launch policy is checked against: the table must
// know every run option with the right arity, and FuzzLaunchPolicy parses
// what the policy accepts with pflag — the parser docker uses — and these
// definitions.
const (
	dockerHelpFile    = "testdata/launchpolicy/docker-help.txt"
	dockerRunHelpFile = "testdata/launchpolicy/docker-run-help.txt"
)

// dockerHidden are run options docker accepts but its help hides.
var dockerHidden = map[string]bool{"--net": true, "--net-alias": true, "--dns-opt": true}

// dockerHelpOption is one option line of docker's help.
type dockerHelpOption struct {
	long, short string
	valued      bool
}

var dockerHelpLine = regexp.MustCompile(`^\s+(?:-(\w), )?--([\w-]+)(?: (\w[\w-]*))?(?:\s{2,}|$)`)

// readDockerHelp reads the options of a captured help text; section, if
// not "", is the heading whose options are read ("Global Options:").
func readDockerHelp(t testing.TB, file, section string) []dockerHelpOption {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dockerHelpOption
	in := section == ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if section != "" && strings.HasPrefix(line, section) {
			in = true
			continue
		}
		if !in {
			continue
		}
		if m := dockerHelpLine.FindStringSubmatch(line); m != nil {
			out = append(out, dockerHelpOption{long: "--" + m[2], short: m[1], valued: m[3] != ""})
		}
	}
	if len(out) == 0 {
		t.Fatalf("no options in %s", file)
	}
	return out
}

// TestDockerHelpCaptured: the captured help is the installed docker's.
func TestDockerHelpCaptured(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not on PATH: install the Docker CLI to check testdata/launchpolicy against it")
	}
	for file, args := range map[string][]string{dockerHelpFile: {"--help"}, dockerRunHelpFile: {"run", "--help"}} {
		version, err := exec.Command("docker", "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		help, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %v: %v", args, err)
		}
		got := string(version) + string(help)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		captured := string(data)
		if got == captured {
			continue
		}
		if *Update {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !strings.HasPrefix(captured, string(version)) {
			t.Skipf("the launch policy was checked against %s; this machine has %s: run go test ./internal/config -run TestDockerHelpCaptured -update, then TestLaunchPolicyMatchesDocker says what changed", strings.SplitN(captured, "\n", 2)[0], strings.TrimSpace(string(version)))
		}
		t.Errorf("%s differs from docker %v: run with -update", file, args)
	}
}

// TestLaunchPolicyMatchesDocker: the table lists every option of docker run
// and docker's global options it names as docker defines them (a value or
// not), and no option docker run does not have.
func TestLaunchPolicyMatchesDocker(t *testing.T) {
	check := func(scope string, opts []dockerHelpOption, all bool) {
		ix := optionIndexes()[scope]
		seen := map[string]bool{}
		for _, o := range opts {
			for _, name := range []string{o.long, "-" + o.short} {
				if name == "-" {
					continue
				}
				seen[name] = true
				_, valued, ok := ix.lookup(name)
				switch {
				case !ok && all:
					t.Errorf("%s: docker's %s is not in the launch policy's table: add it to the allowed row or to a refused one", scope, name)
				case ok && valued != o.valued:
					t.Errorf("%s: %s takes a value in docker: %v, in the table: %v", scope, name, o.valued, valued)
				}
			}
		}
		for name, rules := range ix.rules {
			if !seen[name] && !dockerHidden[name] && !(scope == launcherDocker && refusedOnly(rules)) {
				t.Errorf("%s: the table has %s, which docker does not", scope, name)
			}
		}
	}
	check(launcherDocker, readDockerHelp(t, dockerRunHelpFile, "Options:"), true)
	check(launcherDocker+" global", readDockerHelp(t, dockerHelpFile, "Global Options:"), false)
}

// refusedOnly reports whether every rule naming an option refuses it (a
// global option refused after run as well, such as --host).
func refusedOnly(rules []*launchRule) bool {
	for _, r := range rules {
		if r.id == "" || r.refuses != nil {
			return false
		}
	}
	return true
}

// dockerOracle parses docker arguments with pflag and docker's own option
// definitions, and reports whether docker would run with a construct the
// policy refuses: its own reading, written from Docker's documentation and
// source, apart from the checker's.
type dockerOracle struct {
	global, run []dockerHelpOption
	dir         string // the configuration's folder
}

func newDockerOracle(t testing.TB, dir string) *dockerOracle {
	return &dockerOracle{
		global: readDockerHelp(t, dockerHelpFile, "Global Options:"),
		run:    readDockerHelp(t, dockerRunHelpFile, "Options:"),
		dir:    dir,
	}
}

func flagSet(opts []dockerHelpOption, extra ...string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("docker", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(discard{})
	fs.Usage = func() {}
	for _, o := range opts {
		if o.valued {
			fs.StringArrayP(strings.TrimPrefix(o.long, "--"), o.short, nil, "")
		} else {
			fs.BoolP(strings.TrimPrefix(o.long, "--"), o.short, false, "")
		}
	}
	for _, name := range extra {
		if fs.Lookup(name) == nil {
			fs.StringArray(name, nil, "")
		}
	}
	return fs
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// unsafe returns what docker would run that the policy refuses, or "" when
// docker would run nothing refused (or not run at all: a parse error).
func (o *dockerOracle) unsafe(args []string) string {
	root := flagSet(o.global)
	if root.Parse(args) != nil {
		return ""
	}
	for _, name := range []string{"host", "context", "config"} {
		if root.Changed(name) {
			return "global --" + name
		}
	}
	rest := root.Args()
	switch {
	case len(rest) == 0:
		return ""
	case rest[0] == "run":
		rest = rest[1:]
	case len(rest) > 1 && rest[0] == "container" && rest[1] == "run":
		rest = rest[2:]
	case len(rest) == 3 && rest[0] == "mcp" && rest[1] == "gateway" && rest[2] == "run":
		return ""
	default:
		return "subcommand " + rest[0]
	}
	run := flagSet(o.run, "net", "net-alias", "dns-opt", "host", "context", "config")
	if run.Parse(rest) != nil {
		return ""
	}
	var bad string
	run.Visit(func(f *pflag.Flag) {
		if bad != "" {
			return
		}
		var values []string
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		} else {
			values = []string{f.Value.String()}
		}
		for _, v := range values {
			if why := o.unsafeValue(f.Name, v); why != "" {
				bad = "--" + f.Name + " " + v + ": " + why
				return
			}
		}
	})
	return bad
}

// unsafeValue says why docker's reading of one option is refused, or "".
func (o *dockerOracle) unsafeValue(name, v string) string {
	lower := strings.ToLower(v)
	switch name {
	case "privileged", "use-api-socket", "publish-all", "detach":
		if v == "true" {
			return "on"
		}
	case "cap-add", "device", "device-cgroup-rule", "gpus", "volumes-from", "entrypoint", "runtime", "annotation",
		"cgroup-parent", "cidfile", "host", "context", "config":
		return "set"
	case "network", "net":
		n := lower
		if strings.Contains(v, "=") {
			n = ""
			fields, err := csv.NewReader(strings.NewReader(v)).Read()
			if err != nil {
				return "" // docker refuses it
			}
			for _, f := range fields {
				if k, val, _ := strings.Cut(f, "="); strings.EqualFold(strings.TrimSpace(k), "name") {
					n = strings.ToLower(val)
				}
			}
		}
		if n == "host" || strings.HasPrefix(n, "container:") {
			return "shares a namespace"
		}
	case "pid", "ipc", "uts", "userns", "cgroupns":
		if lower == "host" || strings.HasPrefix(lower, "container:") {
			return "shares a namespace"
		}
	case "security-opt":
		if !strings.HasPrefix(lower, "no-new-privileges") {
			return "confinement"
		}
	case "restart":
		if lower != "no" {
			return "persists"
		}
	case "publish":
		if !regexp.MustCompile(`^(127\.\d+\.\d+\.\d+|\[::1\]):[^:]*:`).MatchString(v) {
			return "not loopback"
		}
	case "env-file":
		if !o.insideDir(v) {
			return "outside the folder"
		}
	case "volume":
		parts := strings.Split(v, ":")
		if len(parts) < 2 || parts[0] == "" || regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`).MatchString(parts[0]) {
			return ""
		}
		if len(parts) == 2 && regexp.MustCompile(`^(ro|rw|z|Z|shared|rshared|slave|rslave|private|rprivate|nocopy|consistent|cached|delegated)(,(ro|rw|z|Z|shared|rshared|slave|rslave|private|rprivate|nocopy|consistent|cached|delegated))*$`).MatchString(parts[1]) {
			return ""
		}
		ro := len(parts) > 2 && strings.Contains(","+parts[2]+",", ",ro,")
		if !ro || !o.insideDir(parts[0]) {
			return "bind mount"
		}
	case "mount":
		fields, err := csv.NewReader(strings.NewReader(v)).Read()
		if err != nil {
			return ""
		}
		typ, src, ro := "volume", "", false
		for _, f := range fields {
			k, val, hasVal := strings.Cut(f, "=")
			switch k {
			case "type":
				typ = strings.ToLower(val)
			case "source", "src":
				src = val
			case "readonly", "ro":
				ro = !hasVal || val == "1" || strings.EqualFold(val, "true") || val == "t" || val == "T"
			case "volume-opt":
				return "volume options"
			}
		}
		switch typ {
		case "bind":
			if !ro || !o.insideDir(src) {
				return "bind mount"
			}
		case "npipe":
			return "named pipe"
		}
	}
	return ""
}

// insideDir reports whether a host path, as docker resolves it (relative
// to the folder, which is the servers' working directory here), is in the
// configuration's folder and not a socket or run directory.
func (o *dockerOracle) insideDir(p string) bool {
	if !filepath.IsAbs(p) {
		p = filepath.Join(o.dir, p)
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	dir, _ := filepath.EvalSymlinks(o.dir)
	if strings.HasSuffix(strings.ToLower(p), ".sock") {
		return false
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
