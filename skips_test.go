package brabo_test

// No test skips under CI for a missing part or privilege: every
// t.Skip, Skipf or SkipNow in the module's test code names, on its own
// line, what turns it into a failure or a run under CI, and the code
// around it backs the claim:
//
//   - "-short": the skip sits in a function that asks testing.Short() (the
//     race pass runs -short; the plain pass runs the test);
//   - a BRABO_REQUIRE_… variable or CI: the package reads that variable
//     (and fails where it is set), and .ci/run exports every BRABO_REQUIRE_…
//     variable the code reads;
//   - "// not a missing part: why": a skip that is not about the machine
//     (a fuzzed input out of range, a tool run by hand, a store without
//     the capability under test), said so in a comment on the line.
//
// So `grep -rn 't.Skip' --include=*_test.go .` shows, for each skip, why
// CI never passes over it.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var (
	requireVarRE = regexp.MustCompile(`\bBRABO_REQUIRE_[A-Z0-9_]+\b`)
	ciWordRE     = regexp.MustCompile(`\bCI\b`)
)

// notMissingPart marks a skip that is not about the machine.
const notMissingPart = "// not a missing part:"

// goSource is one Go file of the module: its path and its text.
type goSource struct {
	path string
	src  string
}

// moduleTestSources reads every Go file of the module that imports
// "testing" (the _test.go files and the test helpers beside them).
func moduleTestSources(t *testing.T) []goSource {
	t.Helper()
	var out []goSource
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), `"testing"`) {
			out = append(out, goSource{path: p, src: string(b)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// skipProblems returns, for each skip in files that does not say (or
// whose code does not back) what makes CI run or fail it, one line
// "path:line: why". Files are grouped by folder: a variable is read where
// any file of the package reads it.
func skipProblems(files []goSource) ([]string, error) {
	fset := token.NewFileSet()
	type parsed struct {
		src  goSource
		file *ast.File
	}
	var all []parsed
	literals := map[string]map[string]bool{} // folder → string literals
	for _, f := range files {
		af, err := parser.ParseFile(fset, f.path, f.src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		all = append(all, parsed{f, af})
		dir := filepath.Dir(f.path)
		if literals[dir] == nil {
			literals[dir] = map[string]bool{}
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					literals[dir][s] = true
				}
			}
			return true
		})
	}
	var problems []string
	for _, p := range all {
		lines := strings.Split(p.src.src, "\n")
		var stack []ast.Node
		ast.Inspect(p.file, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !slices.Contains([]string{"Skip", "Skipf", "SkipNow"}, sel.Sel.Name) {
				return true
			}
			from, to := fset.Position(call.Pos()).Line, fset.Position(call.End()).Line
			text := strings.Join(lines[from-1:to], "\n")
			where := p.src.path + ":" + strconv.Itoa(from) + ": "
			if why := skipUnbacked(text, stack, literals[filepath.Dir(p.src.path)]); why != "" {
				problems = append(problems, where+why)
			}
			return true
		})
	}
	sort.Strings(problems)
	return problems, nil
}

// skipUnbacked says what is wrong with one skip whose source lines are
// text, inside the nodes of stack (outermost first), in a package whose
// string literals are lits; "" when nothing is.
func skipUnbacked(text string, stack []ast.Node, lits map[string]bool) string {
	if strings.Contains(text, notMissingPart) {
		return ""
	}
	if strings.Contains(text, "-short") {
		if enclosingCallsShort(stack) {
			return ""
		}
		return "the skip says -short, but no function around it asks testing.Short()"
	}
	names := requireVarRE.FindAllString(text, -1)
	if ciWordRE.MatchString(text) {
		names = append(names, "CI")
	}
	if len(names) == 0 {
		return "the skip names neither -short, a BRABO_REQUIRE_ variable nor CI (nor says " + notMissingPart + " …)"
	}
	for _, n := range names {
		if lits[n] {
			return ""
		}
	}
	return "the skip names " + strings.Join(names, ", ") + ", but no code of its package reads it"
}

// enclosingCallsShort reports whether a function around the skip calls
// testing.Short().
func enclosingCallsShort(stack []ast.Node) bool {
	for _, n := range stack {
		var body *ast.BlockStmt
		switch f := n.(type) {
		case *ast.FuncDecl:
			body = f.Body
		case *ast.FuncLit:
			body = f.Body
		}
		if body == nil {
			continue
		}
		found := false
		ast.Inspect(body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Short" {
					if x, ok := s.X.(*ast.Ident); ok && x.Name == "testing" {
						found = true
					}
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// requireVarsRead lists the BRABO_REQUIRE_… variables the code reads (a
// string literal that is exactly such a name).
func requireVarsRead(files []goSource) []string {
	var out []string
	for _, f := range files {
		for _, m := range regexp.MustCompile(`"(BRABO_REQUIRE_[A-Z0-9_]+)"`).FindAllStringSubmatch(f.src, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestNoSkipUnderCI(t *testing.T) {
	files := moduleTestSources(t)
	problems, err := skipProblems(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCIExportsEveryRequireVariable: a BRABO_REQUIRE_… variable the tests
// read but .ci/run does not export would let CI skip what it names.
func TestCIExportsEveryRequireVariable(t *testing.T) {
	run, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range requireVarsRead(moduleTestSources(t)) {
		if !regexp.MustCompile(`(?m)^\s*export ` + v + `=1\b`).Match(run) {
			t.Errorf(".ci/run does not export %s: add `export %s=1` to it", v, v)
		}
	}
}

// TestSkipCheckCatchesViolations: the check refuses a bare skip, a -short
// skip outside testing.Short(), a variable no code reads, and accepts the
// three kinds it allows.
func TestSkipCheckCatchesViolations(t *testing.T) {
	src := func(body string) []goSource {
		return []goSource{{path: "x/x_test.go", src: "package x\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nvar _ = os.Getenv\n\n" + body}}
	}
	for _, c := range []struct {
		name, body string
		bad        bool
	}{
		{"a bare skip", "func TestA(t *testing.T) {\n\tt.Skip(\"no diff here\")\n}\n", true},
		{"a bare SkipNow", "func TestA(t *testing.T) {\n\tt.SkipNow()\n}\n", true},
		{"-short without testing.Short", "func TestA(t *testing.T) {\n\tt.Skip(\"-short: slow\")\n}\n", true},
		{"a variable nobody reads", "func TestA(t *testing.T) {\n\tt.Skip(\"BRABO_REQUIRE_NOTHING fails this\")\n}\n", true},
		{"-short under testing.Short", "func TestA(t *testing.T) {\n\tif testing.Short() {\n\t\tt.Skip(\"-short: slow\")\n\t}\n}\n", false},
		{"-short in a subtest of a test that asks", "func TestA(t *testing.T) {\n\tshort := testing.Short()\n\tt.Run(\"x\", func(t *testing.T) {\n\t\tif short {\n\t\t\tt.Skip(\"-short: slow\")\n\t\t}\n\t})\n}\n", false},
		{"a variable read", "func TestA(t *testing.T) {\n\tif os.Getenv(\"BRABO_REQUIRE_X\") == \"1\" {\n\t\tt.Fatal(\"x\")\n\t}\n\tt.Skip(\"BRABO_REQUIRE_X=1 fails this\")\n}\n", false},
		{"CI read", "func TestA(t *testing.T) {\n\tif os.Getenv(\"CI\") != \"\" {\n\t\tt.Fatal(\"x\")\n\t}\n\tt.Skip(\"no x; under CI this fails\")\n}\n", false},
		{"CI named, not read", "func TestA(t *testing.T) {\n\tt.Skip(\"no x; under CI this fails\")\n}\n", true},
		{"not a missing part", "func TestA(t *testing.T) {\n\tt.Skip(\"odd input\") // not a missing part: a fuzzed input\n}\n", false},
	} {
		problems, err := skipProblems(src(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := len(problems) > 0; got != c.bad {
			t.Errorf("%s: problems %q, want refused=%v", c.name, problems, c.bad)
		}
	}
}
