package policy

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// reviewedMapRanges lists, by enclosing function, the map ranges of the
// package that were reviewed by hand: each copies or collects every entry,
// so its result does not depend on iteration order. A new map range fails
// TestPackage_Purity until it sorts its keys (sortedKeys) or is reviewed
// and added here.
var reviewedMapRanges = map[string]int{
	"sortedKeys":           1, // collects the keys, then sorts them
	"copyCounts":           1, // map copy
	"Params.RecordFailure": 1, // map copy of failureCounts
	"cloneMap":             1, // map copy (World: the profile states, the stored orders)
}

// TestPackage_Purity fails when a non-test file of the package reads the
// wall clock (time.Now, Since, Until, timers, Sleep), imports a random
// source (math/rand, math/rand/v2, crypto/rand) or ranges over a map
// outside the reviewed list.
func TestPackage_Purity(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "math/rand", "math/rand/v2", "crypto/rand", "os", "io", "net", "net/http":
				t.Errorf("%s imports %s", p, path)
			}
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: exportImporter(t, fset)}
	if _, err := conf.Check("github.com/fledger/fledger/commands/policy", fset, files, info); err != nil {
		t.Fatalf("type-check: %v", err)
	}
	forbidden := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}
	ranges := map[string]int{}
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := funcName(fn)
			ast.Inspect(fn, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if obj := info.Uses[n.Sel]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "time" && forbidden[obj.Name()] {
						t.Errorf("%s: %s calls time.%s", fset.Position(n.Pos()), name, obj.Name())
					}
				case *ast.RangeStmt:
					if tv, ok := info.Types[n.X]; ok {
						if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
							ranges[name]++
						}
					}
				}
				return true
			})
		}
	}
	var names []string
	for n := range ranges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if ranges[n] > reviewedMapRanges[n] {
			t.Errorf("%s ranges over a map %d time(s) (reviewed: %d): sort the keys (sortedKeys) or review it and update reviewedMapRanges",
				n, ranges[n], reviewedMapRanges[n])
		}
	}
}

// exportImporter imports from the build cache's export data, located with
// `go list -export` (module packages are not under GOROOT, so the default
// gc importer cannot find them, and the source importer would type-check
// all of nats).
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Skipf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	var b strings.Builder
	switch r := fn.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		b.WriteString("(*" + r.X.(*ast.Ident).Name + ").")
	case *ast.Ident:
		b.WriteString(r.Name + ".")
	}
	return b.String() + fn.Name.Name
}
