// Command crossbuild compiles switchboard for every target that
// .goreleaser.yaml releases, with the same environment, flags and ldflags,
// and checks that each binary is static (no ELF interpreter or shared
// libraries; a Mach-O or PE file of the right architecture). It is what
// `make release-check` runs, so that a build that only breaks on another
// platform fails CI instead of the release.
//
// With -typecheck it type-checks each target from source instead (see
// typeCheck): what `make test` runs, every target for a few seconds of CPU
// each, where a compile costs minutes on a cold build cache.
//
//	go run ./test/release/crossbuild [-config .goreleaser.yaml] [-targets linux/amd64,windows/arm64] [-typecheck]
package main

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// build is the part of a GoReleaser build this command honours.
type build struct {
	ID      string   `yaml:"id"`
	Main    string   `yaml:"main"`
	Binary  string   `yaml:"binary"`
	Env     []string `yaml:"env"`
	Flags   []string `yaml:"flags"`
	Ldflags []string `yaml:"ldflags"`
	Goos    []string `yaml:"goos"`
	Goarch  []string `yaml:"goarch"`
}

func main() {
	cfgPath := flag.String("config", ".goreleaser.yaml", "the GoReleaser configuration")
	only := flag.String("targets", "", "comma-separated GOOS/GOARCH pairs to build (default: every target in the configuration)")
	typecheck := flag.Bool("typecheck", false, "type-check each target from source instead of compiling it (no code generation, no link, no binary to check)")
	flag.Parse()
	if err := run(*cfgPath, *only, *typecheck); err != nil {
		fmt.Fprintln(os.Stderr, "crossbuild:", err)
		os.Exit(1)
	}
}

func run(cfgPath, only string, typecheck bool) error {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	var cfg struct {
		Builds []build `yaml:"builds"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}
	if len(cfg.Builds) == 0 {
		return fmt.Errorf("%s has no builds", cfgPath)
	}
	var want []string
	if only != "" {
		want = strings.Split(only, ",")
	}
	out, err := os.MkdirTemp("", "switchboard-crossbuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	cacheDir := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cacheDir = filepath.Join(dir, "switchboard-crossbuild")
	}
	if typecheck {
		// go/types allocates much and keeps little: a larger heap between
		// collections cuts its CPU by about a third (2.8 s per target
		// instead of 4; about 0.6 GB at most).
		debug.SetGCPercent(400)
	}
	var failed []string
	seen := map[string]bool{}
	for _, b := range cfg.Builds {
		for _, goos := range b.Goos {
			for _, goarch := range b.Goarch {
				target := goos + "/" + goarch
				seen[target] = true
				if want != nil && !slices.Contains(want, target) {
					continue
				}
				start := time.Now()
				what := ""
				if typecheck {
					var cached bool
					cached, err = typeCheck(b, goos, goarch, "", cacheDir)
					what = "type-checked"
					if cached {
						what = "type-checked (unchanged since it passed)"
					}
				} else {
					var bin string
					bin, err = compile(b, goos, goarch, out)
					if err == nil {
						err = checkBinary(bin, goos, goarch)
					}
				}
				if err != nil {
					fmt.Printf("FAIL %-14s %v\n", target, err)
					failed = append(failed, target)
					continue
				}
				fmt.Printf("ok   %-14s %s %s\n", target, time.Since(start).Round(time.Millisecond), what)
			}
		}
	}
	for _, t := range want {
		if !seen[t] {
			return fmt.Errorf("-targets names %s, which %s does not release", t, cfgPath)
		}
	}
	if failed != nil {
		return fmt.Errorf("%d target(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// compile runs go build for one target as GoReleaser would, with the
// templates in ldflags given fixed values.
func compile(b build, goos, goarch, out string) (string, error) {
	name := b.Binary
	if goos == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(out, goos+"_"+goarch, name)
	ldflags := strings.NewReplacer("{{.Version}}", "0.0.0-crossbuild", "{{ .Version }}", "0.0.0-crossbuild").Replace(strings.Join(b.Ldflags, " "))
	args := append([]string{"build"}, b.Flags...)
	args = append(args, "-ldflags", ldflags, "-o", bin, b.Main)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), b.Env...)
	cmd.Env = append(cmd.Env, "GOOS="+goos, "GOARCH="+goarch)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, msg)
	}
	return bin, nil
}

// checkBinary checks the file format and architecture, and that a Linux
// binary is static: no interpreter and no shared libraries.
func checkBinary(path, goos, goarch string) error {
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if m := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]; f.Machine != m {
			return fmt.Errorf("ELF machine %s, want %s", f.Machine, m)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return errors.New("not static: the ELF file names an interpreter (was CGO_ENABLED=0 lost?)")
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			return fmt.Errorf("not static: links %s", strings.Join(libs, ", "))
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if c := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]; f.Cpu != c {
			return fmt.Errorf("Mach-O CPU %s, want %s", f.Cpu, c)
		}
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if m := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]; f.Machine != m {
			return fmt.Errorf("PE machine %#x, want %#x", f.Machine, m)
		}
	}
	return nil
}
