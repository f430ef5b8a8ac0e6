package brabo_test

// http carries requests to the services (service.go) and owns no
// transaction: its program names neither brabo.Store nor brabo.Tx. The
// rule is checked on the type-checked package, not on its text, so that a
// renamed import, a type alias or a value of the type obtained without
// spelling its name is caught as well as a plain brabo.Tx.

import (
	"encoding/json"
	"errors"
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
	"slices"
	"sort"
	"strings"
	"testing"
)

// typedPackage is what the check reads of `go list -export -deps -json`.
type typedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

// exportData lists pattern's packages and every dependency with its
// export data file (go list builds them), keyed by import path.
func exportData(t *testing.T, pattern string) map[string]typedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export", pattern).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v%s", pattern, err, stderrOf(err))
	}
	pkgs := map[string]typedPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p typedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// typeCheck type-checks files (parsed in fset) as package path, its
// imports read from the export data of deps.
func typeCheck(fset *token.FileSet, path string, files []*ast.File, deps map[string]typedPackage) (*types.Info, error) {
	imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		d, ok := deps[p]
		if !ok || d.Export == "" {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(d.Export)
	})
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	_, err := conf.Check(path, fset, files, info)
	return info, err
}

// storeNames reports every place the checked files name one of the
// module root's Store or Tx, or hold a value of either type (a pointer
// to one included), as "file:line: what".
func storeNames(fset *token.FileSet, module string, info *types.Info) []string {
	forbidden := func(t types.Type) string {
		for {
			p, ok := t.(*types.Pointer)
			if !ok {
				break
			}
			t = p.Elem()
		}
		n, ok := types.Unalias(t).(*types.Named)
		if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != module {
			return ""
		}
		if name := n.Obj().Name(); name == "Store" || name == "Tx" {
			return "brabo." + name
		}
		return ""
	}
	seen := map[string]bool{}
	var out []string
	add := func(pos token.Pos, what string) {
		p := fset.Position(pos)
		s := fmt.Sprintf("%s:%d: %s", filepath.Base(p.Filename), p.Line, what)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for id, obj := range info.Uses {
		if tn, ok := obj.(*types.TypeName); ok {
			if name := forbidden(tn.Type()); name != "" {
				add(id.Pos(), "names "+name)
			}
		}
	}
	for id, obj := range info.Defs {
		if obj == nil {
			continue
		}
		if name := forbidden(obj.Type()); name != "" {
			add(id.Pos(), id.Name+" is a "+name)
		}
	}
	for e, tv := range info.Types {
		if tv.IsType() {
			continue
		}
		if name := forbidden(tv.Type); name != "" {
			add(e.Pos(), "holds a "+name)
		}
	}
	sort.Strings(out)
	return out
}

func TestHTTPNamesNoStore(t *testing.T) {
	recordSources(t)
	const module = "github.com/brabo-dev/brabo"
	deps := exportData(t, "./http")
	httpPkg, ok := deps[module+"/http"]
	if !ok || len(httpPkg.GoFiles) == 0 {
		t.Fatalf("go list does not list %s/http with its files", module)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range httpPkg.GoFiles { // the program's files: no _test.go
		f, err := parser.ParseFile(fset, filepath.Join(httpPkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info, err := typeCheck(fset, httpPkg.ImportPath, files, deps)
	if err != nil {
		t.Fatalf("type-checking http: %v", err)
	}
	// The check sees the package: it resolves the root's types http does
	// use, so an empty answer is not a check that saw nothing.
	sawRoot := false
	for _, obj := range info.Uses {
		if tn, ok := obj.(*types.TypeName); ok && tn.Pkg() != nil && tn.Pkg().Path() == module && tn.Name() == "ActionService" {
			sawRoot = true
		}
	}
	if !sawRoot {
		t.Fatal("http's type-checked files use no brabo.ActionService: the check reads a package it does not know")
	}
	for _, v := range storeNames(fset, module, info) {
		t.Errorf("http %s; it works through the service interfaces and opens no transaction", v)
	}
}

// TestHTTPNamesNoStoreCatches feeds the check files that break the rule
// in each way it knows, so that a check that can no longer fail is caught.
func TestHTTPNamesNoStoreCatches(t *testing.T) {
	const module = "github.com/brabo-dev/brabo"
	deps := exportData(t, module)
	for _, tc := range []struct{ name, src, want string }{
		{"a field of the store", `type S struct{ Store brabo.Store }`, "names brabo.Store"},
		{"a transaction in a callback", `func f(s brabo.Store) { _ = s.View(nil, func(tx brabo.Tx) error { return nil }) }`, "names brabo.Tx"},
		{"an import under another name", `var _ b2.Tx`, "names brabo.Tx"},
		{"an alias", `type T = brabo.Tx; func f(x T) {}`, "x is a brabo.Tx"},
		{"a value never spelled", `func f(x interface{ S() brabo.Store }) { y := x.S(); _ = y }`, "y is a brabo.Store"},
		{"a sound file", `var _ brabo.ActionService`, ""},
	} {
		src := "package http\nimport (\n\"github.com/brabo-dev/brabo\"\nb2 \"github.com/brabo-dev/brabo\"\n)\nvar _ brabo.Role\nvar _ b2.Role\n" + tc.src + "\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		info, err := typeCheck(fset, module+"/http", []*ast.File{f}, deps)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := storeNames(fset, module, info)
		if tc.want == "" {
			if len(got) != 0 {
				t.Errorf("%s: reported %q", tc.name, got)
			}
			continue
		}
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s: reported %q, want one saying %q", tc.name, got, tc.want)
		}
	}
}

// TestPipelineTakesNoTx keeps the transactions inside the pipeline: no
// exported function or method of it takes or returns a brabo.Tx, so no
// caller can hand it one (or get one) and spread a transaction across
// packages. It reads the compiled package's exported API.
func TestPipelineTakesNoTx(t *testing.T) {
	recordSources(t)
	const module = "github.com/brabo-dev/brabo"
	deps := exportData(t, "./pipeline")
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		d, ok := deps[p]
		if !ok || d.Export == "" {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(d.Export)
	})
	pkg, err := imp.Import(module + "/pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if v := txInSignatures(pkg, module); len(v) > 0 {
		t.Errorf("pipeline's exported API passes a brabo.Tx: %s; open the transaction inside the method", strings.Join(v, ", "))
	}
	// The check can fail: the store's own API does pass Tx (Store.View's
	// callback), and brabo.Store is in the root's exported API.
	root, err := imp.Import(module)
	if err != nil {
		t.Fatal(err)
	}
	if v := txInSignatures(root, module); !slices.Contains(v, "Store.Update") {
		t.Errorf("the check finds %q in the root package, which must include Store.Update", v)
	}
}

// txInSignatures names the exported functions and methods of pkg (methods
// of exported types and interfaces) whose signature mentions brabo.Tx.
func txInSignatures(pkg *types.Package, module string) []string {
	mentions := func(sig *types.Signature) bool {
		return strings.Contains(types.TypeString(sig, nil), module+".Tx")
	}
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Func:
			if mentions(o.Type().(*types.Signature)) {
				out = append(out, name)
			}
		case *types.TypeName:
			if iface, ok := o.Type().Underlying().(*types.Interface); ok {
				for i := range iface.NumMethods() {
					if m := iface.Method(i); m.Exported() && mentions(m.Type().(*types.Signature)) {
						out = append(out, name+"."+m.Name())
					}
				}
			}
			ms := types.NewMethodSet(types.NewPointer(o.Type()))
			for i := range ms.Len() {
				m := ms.At(i).Obj()
				if m.Exported() && mentions(m.Type().(*types.Signature)) && !slices.Contains(out, name+"."+m.Name()) {
					out = append(out, name+"."+m.Name())
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
