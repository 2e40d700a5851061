package release

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const root = "../.."

// goreleaser is the part of .goreleaser.yaml the tests look into; the
// schema checks the rest.
type goreleaser struct {
	Version int `yaml:"version"`
	Builds  []struct {
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	} `yaml:"builds"`
	Checksum struct {
		Algorithm string `yaml:"algorithm"`
	} `yaml:"checksum"`
	Sboms []struct {
		Artifacts string `yaml:"artifacts"`
	} `yaml:"sboms"`
	DockersV2 []struct {
		Dockerfile string   `yaml:"dockerfile"`
		Images     []string `yaml:"images"`
		Platforms  []string `yaml:"platforms"`
	} `yaml:"dockers_v2"`
}

func loadGoreleaser(t *testing.T) ([]byte, goreleaser) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var g goreleaser
	if err := yaml.Unmarshal(data, &g); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return data, g
}

// TestGoreleaserConfigMatchesItsSchema validates .goreleaser.yaml against
// the JSON Schema GoReleaser generates from its own configuration types
// (unknown keys, types and enums), as `goreleaser check` would.
func TestGoreleaserConfigMatchesItsSchema(t *testing.T) {
	data, _ := loadGoreleaser(t)
	schema := compileSchema(t)
	if err := validateYAML(schema, data); err != nil {
		t.Fatalf(".goreleaser.yaml does not match GoReleaser's schema:\n%v", err)
	}
	// The check can fail: a misspelt key is refused.
	bad := bytes.Replace(data, []byte("\nchecksum:"), []byte("\nchecksums:"), 1)
	if err := validateYAML(schema, bad); err == nil {
		t.Fatal("a configuration with the unknown key checksums: passed the schema; the check proves nothing")
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("goreleaser.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://goreleaser.com/static/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateYAML(s *jsonschema.Schema, data []byte) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestGoreleaserReleasesStaticBinariesForEveryPlatform checks what the
// schema cannot: the targets, a static build, checksums, an SBOM and the
// image.
func TestGoreleaserReleasesStaticBinariesForEveryPlatform(t *testing.T) {
	_, g := loadGoreleaser(t)
	if g.Version != 2 {
		t.Errorf("version: got %d, want 2 (GoReleaser v2)", g.Version)
	}
	if len(g.Builds) != 1 {
		t.Fatalf("builds: got %d, want 1", len(g.Builds))
	}
	b := g.Builds[0]
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, os) {
			t.Errorf("builds[0].goos %v lacks %s", b.Goos, os)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("builds[0].goarch %v lacks %s", b.Goarch, arch)
		}
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("builds[0].env %v: want CGO_ENABLED=0 (static binaries)", b.Env)
	}
	if !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("builds[0].flags %v: want -trimpath (reproducible)", b.Flags)
	}
	if g.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum.algorithm: got %q, want sha256", g.Checksum.Algorithm)
	}
	if len(g.Sboms) == 0 {
		t.Error("no sboms: each archive needs an SBOM")
	}
	if len(g.DockersV2) != 1 {
		t.Fatalf("dockers_v2: got %d entries, want 1", len(g.DockersV2))
	}
	d := g.DockersV2[0]
	if _, err := os.Stat(filepath.Join(root, d.Dockerfile)); err != nil {
		t.Errorf("dockers_v2 dockerfile: %v", err)
	}
	if len(d.Images) == 0 || !slices.Contains(d.Platforms, "linux/amd64") || !slices.Contains(d.Platforms, "linux/arm64") {
		t.Errorf("dockers_v2: images %v platforms %v, want an image for linux/amd64 and linux/arm64", d.Images, d.Platforms)
	}
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

func parseDockerfile(t *testing.T, path string) [][]instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]instruction
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.cmd == "ARG" {
				continue
			}
			t.Fatalf("%s: %s before the first FROM", path, in.cmd)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	return stages
}

// TestContainerImagesAreStaticNonRootAndShellless checks both image
// definitions: the multi-stage source build (Dockerfile) and the release
// image around GoReleaser's binary, whose final stages must agree.
func TestContainerImagesAreStaticNonRootAndShellless(t *testing.T) {
	_, g := loadGoreleaser(t)
	src := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	rel := parseDockerfile(t, filepath.Join(root, g.DockersV2[0].Dockerfile))
	if len(src) < 2 {
		t.Fatalf("Dockerfile: %d stage(s), want a build stage and a runtime stage", len(src))
	}
	checkRuntime := func(name string, stage []instruction) {
		from := stage[0].args
		if !strings.HasPrefix(from, "gcr.io/distroless/static") && from != "scratch" {
			t.Errorf("%s: final stage FROM %s: want a distroless static or scratch base (no shell)", name, from)
		}
		var user, stateDir string
		var volumes []string
		for _, in := range stage {
			switch in.cmd {
			case "RUN":
				t.Errorf("%s: RUN %q in the final stage: it has no shell", name, in.args)
			case "USER":
				user = in.args
			case "ENV":
				if v, ok := strings.CutPrefix(in.args, "SWITCHBOARD_STATE_DIR="); ok {
					stateDir = v
				}
			case "VOLUME":
				volumes = append(volumes, in.args)
			case "ENTRYPOINT":
				if !strings.HasPrefix(in.args, "[") {
					t.Errorf("%s: ENTRYPOINT %s: want the exec form, [\"...\"]", name, in.args)
				}
			}
		}
		if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
			t.Errorf("%s: USER %q: want a non-root user", name, user)
		}
		if stateDir == "" || !strings.Contains(strings.Join(volumes, " "), `"`+stateDir+`"`) {
			t.Errorf("%s: the state directory (SWITCHBOARD_STATE_DIR=%q) must be a VOLUME; volumes: %v", name, stateDir, volumes)
		}
	}
	checkRuntime("Dockerfile", src[len(src)-1])
	checkRuntime(g.DockersV2[0].Dockerfile, rel[len(rel)-1])

	// The source build compiles as the release does.
	var build string
	for _, in := range src[0] {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	ldflags := strings.ReplaceAll(g.Builds[0].Ldflags[0], "{{.Version}}", "${VERSION}")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", ldflags, "./cmd/switchboard"} {
		if !strings.Contains(build, want) {
			t.Errorf("Dockerfile's build stage: %q lacks %q (keep it in step with .goreleaser.yaml)", build, want)
		}
	}

	// The two runtime stages differ only in where the binary comes from.
	strip := func(stage []instruction) []instruction {
		var out []instruction
		for _, in := range stage {
			if in.cmd == "ARG" || (in.cmd == "COPY" && strings.HasSuffix(in.args, " /usr/local/bin/switchboard")) {
				continue
			}
			out = append(out, in)
		}
		return out
	}
	if a, b := strip(src[len(src)-1]), strip(rel[len(rel)-1]); !slices.Equal(a, b) {
		t.Errorf("the runtime stages differ:\nDockerfile: %v\nrelease:    %v", a, b)
	}
}
