package brabo_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// rootCodes parses the root package's sources and returns every constant
// declared of type Code, by name, with its value.
func rootCodes(t *testing.T) map[string]brabo.Code {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]brabo.Code{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Code" {
					continue
				}
				for i, n := range v.Names {
					if i >= len(v.Values) {
						t.Fatalf("%s: the code %s has no value of its own", name, n.Name)
					}
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: the code %s is not a string literal", name, n.Name)
					}
					s, _ := strconv.Unquote(lit.Value)
					out[n.Name] = brabo.Code(s)
				}
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("found %d codes in the root package: the parse misses them", len(out))
	}
	return out
}

// Every code the root declares has its row in the one status table
// (Codes), and the table holds no code the root does not declare; every
// code is declared in error.go, the one file a reader looks in.
func TestEveryCodeHasAStatus(t *testing.T) {
	declared := rootCodes(t)
	table := brabo.Codes()
	for name, c := range declared {
		if !slices.Contains(table, c) {
			t.Errorf("%s (%q) has no row in the status table of error.go", name, c)
		}
		if st, ok := c.HTTPStatus(); ok && (st < 400 || st > 599) {
			t.Errorf("%s answers HTTP %d: an error code answers 4xx or 5xx", name, st)
		}
	}
	values := map[brabo.Code]bool{}
	for _, c := range declared {
		values[c] = true
	}
	for _, c := range table {
		if !values[c] {
			t.Errorf("the status table lists %q, which no constant declares", c)
		}
	}
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if name == "error.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if v, ok := n.(*ast.ValueSpec); ok {
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
					t.Errorf("%s: the code %s is declared outside error.go", fset.Position(v.Pos()), v.Names[0].Name)
				}
			}
			return true
		})
	}
	// A code only a failed result carries answers nothing; every other
	// one has its status (the http package's own test checks that its
	// answers carry it).
	for _, c := range []brabo.Code{brabo.CodeSandboxFailed, brabo.CodeProjectFolderMissing, brabo.CodeContainerGone} {
		if st, ok := c.HTTPStatus(); ok {
			t.Errorf("%s, a failed result's code, answers HTTP %d", c, st)
		}
	}
	for c, want := range map[brabo.Code]int{brabo.CodeNotFound: 404, brabo.CodeConflict: 409, brabo.CodeTooManyPending: 429, brabo.CodeRetry: 503} {
		if st, ok := c.HTTPStatus(); !ok || st != want {
			t.Errorf("%s answers %d (%v), want %d", c, st, ok, want)
		}
	}
	if st, ok := brabo.Code("no_such_code").HTTPStatus(); ok {
		t.Errorf("an unknown code answers HTTP %d", st)
	}
}

// No code is written as a string literal outside the root package: a
// code passed to Errorf or to http's errorf, converted with Code(…), set
// as a Code field or declared as a brabo.Code constant is one of
// error.go's constants, so the table sees it.
func TestNoCodeLiteralOutsideTheRoot(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		literal := func(e ast.Expr) bool {
			lit, ok := e.(*ast.BasicLit)
			return ok && lit.Kind == token.STRING
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				var name string
				switch fn := x.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					if pkg, ok := fn.X.(*ast.Ident); ok && pkg.Name == "brabo" {
						name = fn.Sel.Name
					}
				}
				switch {
				case (name == "Errorf" || name == "Code") && len(x.Args) > 0 && literal(x.Args[0]):
					t.Errorf("%s: %s(%s…): name the code by its constant in error.go", fset.Position(x.Pos()), name, x.Args[0].(*ast.BasicLit).Value)
				case name == "errorf" && len(x.Args) > 1 && literal(x.Args[1]):
					t.Errorf("%s: errorf(…, %s…): name the code by its constant in error.go", fset.Position(x.Pos()), x.Args[1].(*ast.BasicLit).Value)
				}
			case *ast.ValueSpec:
				if sel, ok := x.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "brabo" {
						t.Errorf("%s: %s declares a code outside error.go", fset.Position(x.Pos()), x.Names[0].Name)
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && (k.Name == "Code" || k.Name == "code") && literal(x.Value) {
					t.Errorf("%s: %s: %s: name the code by its constant in error.go", fset.Position(x.Pos()), k.Name, x.Value.(*ast.BasicLit).Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk misses the module", checked)
	}
}

// Errorf formats its message as fmt.Sprintf does.
func TestErrorfFormats(t *testing.T) {
	e := brabo.Errorf(brabo.CodeNotFound, "task %s of %d", "t1", 3)
	if e.Code != brabo.CodeNotFound || e.Message != "task t1 of 3" {
		t.Fatalf("Errorf: %+v", e)
	}
	if got := brabo.Errorf(brabo.CodeInvalidAction, "%s", "100% sure").Message; got != "100% sure" {
		t.Fatalf("Errorf of a message holding %%: %q", got)
	}
	if brabo.ErrorCode(e) != brabo.CodeNotFound || e.Error() != "not_found: task t1 of 3" {
		t.Fatalf("ErrorCode/Error: %q %q", brabo.ErrorCode(e), e.Error())
	}
}
