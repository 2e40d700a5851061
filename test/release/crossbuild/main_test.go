package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeCheckFindsWhatATargetLacks: a name defined for Linux only is
// undefined on darwin, which the type check of darwin/arm64 reports with
// its place, while linux/amd64 passes; a pass is kept and found again
// until a file changes, and then the file is checked again.
func TestTypeCheckFindsWhatATargetLacks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A library, not a main package: go list gives a main package the
	// runtime as a dependency, whose type check costs a second of CPU
	// under -race; the checks are the same.
	write("go.mod", "module example.com/app\n\ngo 1.22\n")
	write("app.go", "package app\n\nvar name = platform()\n")
	write("platform_linux.go", "package app\n\nfunc platform() string { return \"linux\" }\n")
	b := build{Main: ".", Env: []string{"CGO_ENABLED=0"}, Flags: []string{"-trimpath"}}
	cache := t.TempDir()

	if _, err := typeCheck(b, "darwin", "arm64", dir, cache); err == nil {
		t.Fatal("darwin/arm64 passed, want it to report platform undefined")
	} else if !strings.Contains(err.Error(), "app.go:3:") || !strings.Contains(err.Error(), "undefined: platform") {
		t.Fatalf("darwin/arm64: got %v, want app.go:3: … undefined: platform", err)
	}

	for i, want := range []bool{false, true} {
		cached, err := typeCheck(b, "linux", "amd64", dir, cache)
		if err != nil {
			t.Fatalf("linux/amd64, check %d: %v", i+1, err)
		}
		if cached != want {
			t.Errorf("linux/amd64, check %d: got cached %v, want %v", i+1, cached, want)
		}
	}

	write("platform_linux.go", "package app\n\nfunc platform() {}\n")
	if cached, err := typeCheck(b, "linux", "amd64", dir, cache); cached || err == nil || !strings.Contains(err.Error(), "used as value") {
		t.Fatalf("after platform_linux.go changed: got cached %v, error %v; want it checked again: platform() (no value) used as value", cached, err)
	}
}
