package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// listed is the part of `go list -json` typeCheck reads.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
}

// maxTypeErrors is how many type errors a target reports before it stops
// listing them.
const maxTypeErrors = 20

// typeCheck type-checks b's main package for goos/goarch from source, with
// b's environment and flags as its build would have them: the packages go
// list selects for the target (build constraints, CGO_ENABLED) parsed and
// checked with go/types, dependencies first. It finds what makes a target
// fail to compile in practice (a file for one OS naming what another lacks,
// a build constraint leaving a name undefined) for a few seconds of CPU,
// where compiling the target compiles the standard library and every
// dependency for it (about two minutes of CPU on a cold build cache). Code
// generation and linking are [compile]'s. A target whose sources have not
// changed since it passed is not checked again: the pass is kept, keyed by
// the contents of every file checked, in cacheDir ("" to keep nothing).
// go runs in dir ("": the current directory).
func typeCheck(b build, goos, goarch, dir, cacheDir string) (cached bool, err error) {
	pkgs, err := list(b, goos, goarch, dir)
	if err != nil {
		return false, err
	}
	key, err := inputsKey(pkgs, goos, goarch)
	if err != nil {
		return false, err
	}
	stamp := ""
	if cacheDir != "" {
		stamp = filepath.Join(cacheDir, "typecheck-"+key)
		if _, err := os.Stat(stamp); err == nil {
			return true, nil
		}
	}
	if err := check(pkgs, goarch); err != nil {
		return false, err
	}
	if stamp != "" {
		if err := os.MkdirAll(cacheDir, 0o755); err == nil {
			_ = os.WriteFile(stamp, nil, 0o644) // only a cache: a pass not kept is checked again
		}
	}
	return false, nil
}

// list returns b.Main and its dependencies as go list selects them for the
// target, dependencies before the packages that import them.
func list(b build, goos, goarch, dir string) ([]*listed, error) {
	args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,ImportMap,Module,Error"}, b.Flags...)
	args = append(args, b.Main)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), b.Env...)
	cmd.Env = append(cmd.Env, "GOOS="+goos, "GOARCH="+goarch)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []*listed
	for {
		p := new(listed)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	var errs []string
	for _, p := range pkgs {
		if p.Error != nil {
			errs = append(errs, p.Error.Err)
		}
		if len(p.CgoFiles) > 0 {
			errs = append(errs, fmt.Sprintf("%s uses cgo (%s), which the release builds without (CGO_ENABLED=0 in .goreleaser.yaml)", p.ImportPath, strings.Join(p.CgoFiles, ", ")))
		}
	}
	if errs != nil {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return pkgs, nil
}

// inputsKey is a hash of everything a type check of pkgs depends on: the
// checker's Go version, the target, and each package's path, language
// version, import map, and files' names and contents.
func inputsKey(pkgs []*listed, goos, goarch string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "crossbuild typecheck 1\n%s\n%s/%s\n", runtime.Version(), goos, goarch)
	for _, p := range pkgs {
		fmt.Fprintf(h, "package %s %s\n", p.ImportPath, goVersion(p))
		for _, from := range slices.Sorted(maps.Keys(p.ImportMap)) {
			fmt.Fprintf(h, "import %s %s\n", from, p.ImportMap[from])
		}
		for _, name := range p.GoFiles {
			data, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				return "", err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "file %s %x\n", name, sum)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goVersion is the language version p is checked at: its module's go
// line; "" (the checker's own) for the standard library.
func goVersion(p *listed) string {
	if p.Module == nil || p.Module.GoVersion == "" {
		return ""
	}
	return "go" + p.Module.GoVersion
}

// check parses and type-checks pkgs in order, for goarch's sizes.
func check(pkgs []*listed, goarch string) error {
	fset := token.NewFileSet()
	checked := map[string]*types.Package{"unsafe": types.Unsafe}
	sizes := types.SizesFor("gc", goarch)
	var errs []string
	report := func(err error) {
		if len(errs) < maxTypeErrors {
			errs = append(errs, err.Error())
		} else if len(errs) == maxTypeErrors {
			errs = append(errs, "(more errors not shown)")
		}
	}
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				report(err)
				continue
			}
			files = append(files, f)
		}
		conf := types.Config{
			GoVersion: goVersion(p),
			Sizes:     sizes,
			Importer: importer(func(path string) (*types.Package, error) {
				if to, ok := p.ImportMap[path]; ok {
					path = to
				}
				if dep := checked[path]; dep != nil {
					return dep, nil
				}
				return nil, fmt.Errorf("%s imports %s, which go list did not list before it", p.ImportPath, path)
			}),
			Error: report,
		}
		pkg, _ := conf.Check(p.ImportPath, fset, files, nil)
		checked[p.ImportPath] = pkg
	}
	if errs != nil {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

type importer func(path string) (*types.Package, error)

func (f importer) Import(path string) (*types.Package, error) { return f(path) }
