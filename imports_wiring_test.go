package brabo_test

// Two rules the import graph cannot see, read from the syntax of the
// program's files (test files excluded, as in imports_test.go): only the
// one wiring constructs the pipeline, and the hook, the MCP server and
// the commands reach brabo's API only through the one client.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// theWiring is the one package that constructs the pipeline.
const theWiring = "cmd/brabo/internal/app"

// apiClients are the folders (with their subfolders) that talk to a
// brabo server and must do it through package client.
var apiClients = []string{"agenthook", "mcpserver", "cmd/brabo", "cmd/brabo-hook"}

// httpClientCalls are the net/http names a hand-written API client uses.
var httpClientCalls = []string{"NewRequest", "NewRequestWithContext", "Get", "Post", "PostForm", "Head", "DefaultClient", "Client"}

// sourceViolations checks one file of the package at rel (relative to
// the module) and returns a sentence per broken rule.
func sourceViolations(module, rel, name string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := func(path, def string) string { // the file's name for an import path, "" if not imported
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == path {
				if im.Name != nil {
					return im.Name.Name
				}
				return def
			}
		}
		return ""
	}
	pipeline := local(module+"/pipeline", "pipeline")
	nethttp := local("net/http", "http")
	client := slices.ContainsFunc(apiClients, func(c string) bool { return rel == c || strings.HasPrefix(rel, c+"/") })
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel := func(e ast.Expr) (pkg, name string) {
			if s, ok := e.(*ast.SelectorExpr); ok {
				if id, ok := s.X.(*ast.Ident); ok {
					return id.Name, s.Sel.Name
				}
			}
			return "", ""
		}
		switch n := n.(type) {
		case *ast.CompositeLit:
			if p, t := sel(n.Type); pipeline != "" && p == pipeline && t == "Service" && rel != theWiring {
				out = append(out, name+" constructs the pipeline (a pipeline.Service literal); only "+theWiring+" does")
			}
		case *ast.CallExpr:
			if p, fn := sel(n.Fun); pipeline != "" && p == pipeline && fn == "New" && rel != theWiring {
				out = append(out, name+" constructs the pipeline (pipeline.New); only "+theWiring+" does")
			}
		case *ast.SelectorExpr:
			if p, x := sel(n); client && nethttp != "" && p == nethttp && slices.Contains(httpClientCalls, x) && rel != theWiring {
				out = append(out, name+" makes its own HTTP requests (http."+x+"); it reaches brabo's API through package client")
			}
		}
		return true
	})
	return out, nil
}

func TestOnlyTheWiringBuildsThePipelineAndOnlyTheClientCallsTheAPI(t *testing.T) {
	recordSources(t)
	const module = "github.com/brabo-dev/brabo"
	constructs := false
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel := filepath.ToSlash(filepath.Dir(path))
		if rel == "." {
			rel = ""
		}
		if testSupport(rel) {
			return nil // imported by tests only, which may build what they test
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := sourceViolations(module, rel, path, src)
		for _, v := range got {
			t.Error(v)
		}
		if rel == theWiring && strings.Contains(string(src), "&pipeline.Service{") {
			constructs = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !constructs {
		t.Fatalf("%s constructs no pipeline.Service: the test reads a tree it does not know", theWiring)
	}
}

// The checker fails on each rule broken, and passes what keeps them.
func TestSourceRulesCatchViolations(t *testing.T) {
	const m = "example.com/b"
	for _, tc := range []struct {
		rel, src string
		want     string // "" for no violation
	}{
		{"cmd/brabo", `package main; import p "example.com/b/pipeline"; var s = &p.Service{}`, "constructs the pipeline (a pipeline.Service literal)"},
		{"engine/x", `package x; import "example.com/b/pipeline"; var s = pipeline.New(nil)`, "constructs the pipeline (pipeline.New)"},
		{theWiring, `package app; import "example.com/b/pipeline"; var s = &pipeline.Service{}`, ""},
		{"agenthook", `package agenthook; import "net/http"; var r, _ = http.NewRequest("GET", "/v1/me", nil)`, "makes its own HTTP requests (http.NewRequest)"},
		{"cmd/brabo", `package main; import h "net/http"; var c = h.DefaultClient`, "makes its own HTTP requests (http.DefaultClient)"},
		{"mcpserver", `package mcpserver; import "net/http"; var c = &http.Client{}`, "makes its own HTTP requests (http.Client)"},
		{"agenthook", `package agenthook; import "net/http"; const s = http.StatusConflict`, ""},
		{"notify", `package notify; import "net/http"; var c = &http.Client{}`, ""},
	} {
		got, err := sourceViolations(m, tc.rel, "x.go", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q: violations %v, want none", tc.rel, tc.src, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: %q: violations %v, want one saying %q", tc.rel, tc.src, got, tc.want)
		}
	}
}

// TestClientImportsOnlyTheRootAndTheStandardLibrary: the one API client
// is linked by the agents' hook, so it depends on the root package and the
// standard library only (a path whose first element has no dot), nothing
// of another module.
func TestClientImportsOnlyTheRootAndTheStandardLibrary(t *testing.T) {
	recordSources(t)
	module, pkgs := listPackages(t)
	found := false
	for _, p := range pkgs {
		if p.ImportPath != module+"/client" {
			continue
		}
		found = true
		for _, d := range p.Deps {
			first, _, _ := strings.Cut(d, "/")
			if d != module && strings.Contains(first, ".") {
				t.Errorf("client depends on %s: it may import only the root package and the standard library", d)
			}
		}
	}
	if !found {
		t.Fatal("go list ./... does not list the client package")
	}
}

// systemTests is the one test-only package of the system tests.
const systemTests = "cmd/brabo/e2e"

// TestSystemTestsAreOnePackageOnTheWiring: the system tests (end to end,
// the browser, the README, the crashes, the instances) are one package
// of test files only, and open brabo by the one wiring; no other
// package's tests start a server of brabo's on a pipeline of their own,
// but the benchmarks that measure the pipeline alone (http/bench_test.go).
func TestSystemTestsAreOnePackageOnTheWiring(t *testing.T) {
	ents, err := os.ReadDir(systemTests)
	if err != nil {
		t.Fatal(err)
	}
	wired := false
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		if !strings.HasSuffix(name, "_test.go") {
			t.Errorf("%s/%s is not a test file: the system tests' package holds only tests", systemTests, name)
			continue
		}
		src, err := os.ReadFile(filepath.Join(systemTests, name))
		if err != nil {
			t.Fatal(err)
		}
		wired = wired || strings.Contains(string(src), `"github.com/brabo-dev/brabo/`+theWiring+`"`)
	}
	if !wired {
		t.Errorf("%s does not import %s: its end-to-end tests must open brabo as brabo serve does", systemTests, theWiring)
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, systemTests+"/") ||
			path == "http/bench_test.go" || path == "http/sandbox_bench_test.go" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		var pipeline, http bool
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			pipeline = pipeline || p == "github.com/brabo-dev/brabo/pipeline"
			http = http || p == "github.com/brabo-dev/brabo/http"
		}
		if pipeline && http {
			t.Errorf("%s starts brabo's HTTP server on a pipeline of its own: an end-to-end test belongs in %s, on the one wiring", path, systemTests)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
