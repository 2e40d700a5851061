package config_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPatternCompiledAtInit keeps regular expressions out of the package's
// initialisation: every process that links config (each CLI command, each
// test's child server) ran the package-level regexp.MustCompile calls at
// start, whether or not it ever checked such a value. A pattern is declared
// with lazyRegexp instead, which compiles it on first use.
func TestNoPatternCompiledAtInit(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{".", "schema"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				ast.Inspect(gd, func(n ast.Node) bool {
					if _, ok := n.(*ast.FuncLit); ok {
						return false // runs when called, not at init
					}
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "regexp" {
							t.Errorf("%s: package-level regexp.%s runs at every start; declare it with lazyRegexp", fset.Position(call.Pos()), sel.Sel.Name)
						}
					}
					return true
				})
			}
		}
	}
}
