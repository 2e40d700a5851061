package fault_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasADocComment enforces the house rule that every package
// says what it is for in one package comment.
func TestEveryPackageHasADocComment(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() || d.Name() == "testdata" {
				if d != nil && d.IsDir() && d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return err
			}
			files, err := filepath.Glob(filepath.Join(path, "*.go"))
			if err != nil {
				return err
			}
			pkgs := map[string]int{} // package name -> files with a package comment
			fset := token.NewFileSet()
			for _, file := range files {
				if strings.HasSuffix(file, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.PackageClauseOnly)
				if err != nil {
					return err
				}
				if _, ok := pkgs[f.Name.Name]; !ok {
					pkgs[f.Name.Name] = 0
				}
				if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
					pkgs[f.Name.Name]++
				}
			}
			for name, documented := range pkgs {
				switch {
				case documented == 0:
					t.Errorf("package %s (%s) has no package comment", name, path)
				case documented > 1:
					t.Errorf("package %s (%s) has %d package comments; keep one", name, path, documented)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
