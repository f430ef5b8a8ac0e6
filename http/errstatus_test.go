package http

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// Every code answers with the status of the root's one table: an error
// carrying a code the table gives a status is answered with it and that
// code; one carrying a code no answer carries (a failed result's) is an
// internal error. The lead and gate APIs answer their codes alike.
func TestErrorAnswersCarryTheTableStatus(t *testing.T) {
	s := &Server{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
	answered := 0
	for _, code := range brabo.Codes() {
		err := brabo.Errorf(code, "the %s sentence", code)
		ae := s.classify(r, err)
		want, ok := code.HTTPStatus()
		switch {
		case ok && (ae.status != want || ae.code != code):
			t.Errorf("%s: answered %d %s, the table says %d", code, ae.status, ae.code, want)
		case !ok && (ae.status != http.StatusInternalServerError || ae.code != brabo.CodeInternal):
			t.Errorf("%s, a failed result's code: answered %d %s, want 500 internal", code, ae.status, ae.code)
		}
		if ok {
			answered++
		}
		if slicesContains(leadCodes, code) {
			var lae *apiError
			if !errors.As(leadError(err), &lae) || lae.status != want || lae.code != code {
				t.Errorf("leadError(%s): %v, the table says %d", code, leadError(err), want)
			}
		}
		w := httptest.NewRecorder()
		s.writeError(w, r, err)
		if wantStatus := map[bool]int{true: want, false: 500}[ok]; w.Code != wantStatus {
			t.Errorf("writeError(%s) answered HTTP %d, want %d", code, w.Code, wantStatus)
		}
	}
	if answered < 30 {
		t.Fatalf("%d codes answered: the table is not the one error.go holds", answered)
	}
}

func slicesContains(cs []brabo.Code, c brabo.Code) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// httpStatuses are the net/http constants errorf is called with.
var httpStatuses = map[string]int{
	"StatusBadRequest": 400, "StatusUnauthorized": 401, "StatusForbidden": 403, "StatusNotFound": 404,
	"StatusRequestTimeout": 408, "StatusConflict": 409, "StatusRequestEntityTooLarge": 413,
	"StatusTooManyRequests": 429, "StatusInternalServerError": 500, "StatusNotImplemented": 501,
	"StatusServiceUnavailable": 503,
}

// Every error the http package builds with its own status (errorf, an
// apiError literal) gives the code the status the root's table gives it,
// so that the table is the one place a code's status is said.
func TestErrorStatusesAgreeWithTheTable(t *testing.T) {
	fset := token.NewFileSet()
	// The codes' values, by constant name, from the root's error.go.
	root, err := parser.ParseFile(fset, filepath.Join("..", "error.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]brabo.Code{}
	ast.Inspect(root, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok {
			for i, name := range v.Names {
				if i >= len(v.Values) {
					break
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					codes[name.Name] = brabo.Code(s)
				}
			}
		}
		return true
	})
	files, _ := filepath.Glob("*.go")
	checked := 0
	check := func(pos token.Pos, statusExpr, codeExpr ast.Expr) {
		st, ok := statusExpr.(*ast.SelectorExpr)
		if !ok {
			return // a status passed on (errorf's own body)
		}
		cd, ok := codeExpr.(*ast.SelectorExpr)
		if !ok {
			return
		}
		status, ok := httpStatuses[st.Sel.Name]
		if !ok {
			t.Errorf("%s: http.%s: add it to httpStatuses", fset.Position(pos), st.Sel.Name)
			return
		}
		code, ok := codes[cd.Sel.Name]
		if !ok {
			t.Errorf("%s: brabo.%s is not a code of error.go", fset.Position(pos), cd.Sel.Name)
			return
		}
		checked++
		if want, ok := code.HTTPStatus(); !ok || want != status {
			t.Errorf("%s: %s answers HTTP %d here, the table says %d", fset.Position(pos), code, status, want)
		}
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "errorf" && len(x.Args) >= 2 {
					check(x.Pos(), x.Args[0], x.Args[1])
				}
			case *ast.CompositeLit:
				if id, ok := x.Type.(*ast.Ident); ok && id.Name == "apiError" {
					var status, code ast.Expr
					for _, e := range x.Elts {
						kv := e.(*ast.KeyValueExpr)
						switch kv.Key.(*ast.Ident).Name {
						case "status":
							status = kv.Value
						case "code":
							code = kv.Value
						}
					}
					if status != nil && code != nil {
						check(x.Pos(), status, code)
					}
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("checked %d errors: the parse misses http's errorf calls", checked)
	}
}
