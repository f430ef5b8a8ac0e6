package brabo_test

// The house rules of DESIGN §2, kept by reading the real import graph with
// `go list`: the domain in the middle, each dependency at the edge in its own
// package, and cmd/brabo the only place that wires adapters together.
//
// The rules are written over the graph, not over a list of today's
// packages: a package added later is held to them as soon as it exists,
// and a package that does not exist yet is simply absent.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// goPackage is what the rules read of one package of `go list -json`.
type goPackage struct {
	ImportPath string
	Imports    []string // direct imports of the non-test files
	Deps       []string // every package those imports pull in, transitively
}

// listPackages lists the module's packages with their imports, the way
// `go list -deps` sees them (test files excluded: the rules are about the
// program, not its tests).
func listPackages(t *testing.T) (module string, pkgs []goPackage) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v%s", err, stderrOf(err))
	}
	module = strings.TrimSpace(string(out))
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v%s", err, stderrOf(err))
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return module, pkgs
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}

// adapterFamilies are the folders whose every subfolder is an adapter of
// its own (store/sqlite and store/postgres, model/openai and
// model/anthropic); adapterRoots are the folders that are one adapter
// with all their subpackages (engine/toolloop and engine/devagent are the
// engine).
var (
	adapterFamilies = []string{"store", "model"}
	adapterRoots    = []string{"http", "executor", "engine", "docker", "notify", "gitrepo"}
)

// adapterOf returns the adapter a package of the module belongs to
// ("store/sqlite", "engine", "http"), or "" for a package that is not an
// adapter (the root package, policy, pipeline, cmd/…). rel is the import
// path relative to the module.
func adapterOf(rel string) string {
	parts := strings.Split(rel, "/")
	if slices.Contains(adapterRoots, parts[0]) {
		return parts[0]
	}
	if slices.Contains(adapterFamilies, parts[0]) {
		if len(parts) == 1 {
			if parts[0] == "model" {
				// The model package is the providers' interface, plain
				// data and no SDK: a core package (coreRules), which the
				// providers and the agents share like the root package.
				return ""
			}
			// A bare store package would be shared by its family's
			// adapters: shared types belong in the root package.
			return parts[0]
		}
		return parts[0] + "/" + parts[1]
	}
	return ""
}

// coreRules lists, for the packages in the middle, the packages of the
// module each may depend on ("" is the root package) and the standard
// library packages none of them may pull in.
var coreRules = []struct {
	rel       string
	mayImport []string
	forbidden []string
}{
	{rel: "", mayImport: nil},
	{rel: "policy", mayImport: []string{""},
		forbidden: []string{"database/sql", "net", "net/http", "os/exec"}},
	// The shell analyzer is policy's (DESIGN §4.3): held to policy's rules,
	// and below it, so it imports nothing of the module, not even the root.
	{rel: "policy/internal/shell", mayImport: nil,
		forbidden: []string{"database/sql", "net", "net/http", "os/exec"}},
	// internal/progfind resolves a program name in the PATH a command
	// will run with (the policy input's Programs): the standard library
	// only, shared with brabo check, so both resolve alike.
	{rel: "pipeline", mayImport: []string{"", "policy", "internal/progfind"}},
	{rel: "model", mayImport: []string{""},
		forbidden: []string{"database/sql", "net", "net/http", "os/exec"}},
	// The hook runs before every tool call of an agent: it links the
	// domain, policy and the standard library only, so that brabo-hook
	// starts fast; the MCP SDK stays in mcpserver, its edge. It may use
	// internal/progfind (the standard library only) to find the codex
	// install starts in a PATH without the folders an agent writes.
	{rel: "agenthook", mayImport: []string{"", "policy", "client", "internal/progfind"}, forbidden: []string{"database/sql"}},
	{rel: "mcpserver", mayImport: []string{"", "policy", "agenthook", "client", "internal/progfind"}, forbidden: []string{"database/sql"}},
	{rel: "cmd/brabo-hook", mayImport: []string{"", "policy", "agenthook", "client", "internal/progfind"}, forbidden: []string{"database/sql"}},
	// The one /v1 client: the root package and the standard library, so
	// that the hook linking it stays light (client_test.go's rule).
	{rel: "client", mayImport: []string{""}, forbidden: []string{"database/sql"}},
	// brabo-check is brabo check for scripts that run it once per
	// decision: the domain, policy and the standard library, so that it
	// starts fast (docs/PERFORMANCE.md); no network, no database.
	{rel: "internal/checkcmd", mayImport: []string{"", "policy", "internal/progfind", "internal/protect"},
		forbidden: []string{"database/sql", "net", "net/http", "os/exec"}},
	{rel: "cmd/brabo-check", mayImport: []string{"", "policy", "internal/progfind", "internal/protect", "internal/checkcmd"},
		forbidden: []string{"database/sql", "net", "net/http", "os/exec"}},
	// brabo-sandbox starts on every sandboxed command's path (the root
	// helper, the Landlock launcher, the egress forwarder): it links
	// those alone, so that it starts fast.
	{rel: "cmd/brabo-sandbox", mayImport: []string{"", "policy", "internal/confine", "internal/sandbox", "internal/egress", "internal/procs"},
		forbidden: []string{"database/sql"}},
}

// wiring is the only package that may depend on several adapters: the one
// wiring (cmd/brabo/internal/app), and the command table that fills its
// configuration.
var wiring = []string{"cmd/brabo", "cmd/brabo/internal/app"}

// houseRuleViolations checks the graph and returns one sentence per broken
// rule, sorted.
func houseRuleViolations(module string, pkgs []goPackage) []string {
	rel := func(path string) (string, bool) {
		if path == module {
			return "", true
		}
		if r, ok := strings.CutPrefix(path, module+"/"); ok {
			return r, true
		}
		return "", false
	}
	name := func(r string) string {
		if r == "" {
			return "the root package"
		}
		return r
	}
	var out []string
	for _, p := range pkgs {
		self, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		// Test-support packages (…test, like store/storetest) are imported
		// by _test.go files only, and may wire real adapters as tests do;
		// no other package may import them.
		for _, d := range p.Imports {
			if r, ok := rel(d); ok && testSupport(r) && !testSupport(self) {
				out = append(out, fmt.Sprintf("%s imports the test-support package %s; only tests may", name(self), r))
			}
		}
		// mock holds fakes of the services: only _test.go files, which
		// the graph leaves out, may import it.
		for _, d := range p.Imports {
			if r, ok := rel(d); ok && r == "mock" && self != "mock" {
				out = append(out, fmt.Sprintf("%s imports mock; only _test.go files may", name(self)))
			}
		}
		if testSupport(self) {
			continue
		}
		// Every package of the module this one depends on, with the
		// direct import that brings it in, for the message.
		var ours []string
		for _, d := range p.Deps {
			if r, ok := rel(d); ok {
				ours = append(ours, r)
			}
		}
		via := func(dep string) string {
			if slices.Contains(p.Imports, dep) || slices.Contains(p.Imports, module+"/"+dep) || (dep == "" && slices.Contains(p.Imports, module)) {
				return ""
			}
			return " (indirectly)"
		}

		for _, rule := range coreRules {
			if rule.rel != self {
				continue
			}
			for _, d := range ours {
				if !mayDependOn(self, rule.mayImport, d) {
					out = append(out, fmt.Sprintf("%s imports %s%s; it may import only %s",
						name(self), name(d), via(d), describe(rule.mayImport, name)))
				}
			}
			for _, f := range rule.forbidden {
				if slices.Contains(p.Deps, f) {
					out = append(out, fmt.Sprintf("%s imports %s%s: it does no I/O", name(self), f, via(f)))
				}
			}
		}

		// http carries requests to the root's service interfaces: it does
		// not reach the pipeline that implements them (imports_http_test.go
		// checks it names no store either).
		if self == "http" || strings.HasPrefix(self, "http/") {
			if slices.Contains(ours, "pipeline") {
				out = append(out, fmt.Sprintf("%s imports pipeline%s; http works through the root's service interfaces", self, via("pipeline")))
			}
		}

		// Adapters never import each other; only cmd/brabo wires several.
		adapters := map[string]bool{}
		if a := adapterOf(self); a != "" {
			adapters[a] = true
		}
		for _, d := range ours {
			a := adapterOf(d)
			if a == "" {
				continue
			}
			adapters[a] = true
			if own := adapterOf(self); own != "" && a != own {
				out = append(out, fmt.Sprintf("the adapter %s imports the adapter %s: %s imports %s%s; adapters talk through the root package's interfaces",
					own, a, self, d, via(d)))
			}
		}
		if len(adapters) > 1 && !slices.Contains(wiring, self) && adapterOf(self) == "" {
			names := make([]string, 0, len(adapters))
			for a := range adapters {
				names = append(names, a)
			}
			sort.Strings(names)
			out = append(out, fmt.Sprintf("%s imports several adapters (%s); only %s wire adapters together",
				name(self), strings.Join(names, ", "), strings.Join(wiring, " and ")))
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// mayDependOn reports whether self may depend on the package d of the
// module: d is listed, or d is internal to self or to a listed package
// (policy/internal/shell is policy's: what may import policy may depend
// on it, and the internal package has rules of its own).
func mayDependOn(self string, list []string, d string) bool {
	if slices.Contains(list, d) {
		return true
	}
	for _, p := range append([]string{self}, list...) {
		if p != "" && strings.HasPrefix(d, p+"/internal/") {
			return true
		}
	}
	return false
}

// testSupport reports whether a package of the module exists for tests
// only: its last element ends in "test" (store/storetest, engine/enginetest).
func testSupport(rel string) bool {
	return strings.HasSuffix(rel[strings.LastIndexByte(rel, '/')+1:], "test") && rel != ""
}

func describe(list []string, name func(string) string) string {
	if len(list) == 0 {
		return "packages outside the module"
	}
	names := make([]string, len(list))
	for i, l := range list {
		names[i] = name(l)
	}
	return strings.Join(names, " and ")
}

// recordSources opens every folder of the module from the test process.
// go test caches a passing result keyed by the files the test itself opened,
// and it cannot see what the go list subprocess read: opening the folders
// (whose listings it hashes with each file's size and time) makes a cached
// pass invalid as soon as a Go file is added, removed or edited.
func recordSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dockerClient is the module of the Docker Engine API client.
const dockerClient = "github.com/moby/moby/"

// TestDockerClientOnlyWhereUsed keeps the Docker client in its own
// package: only docker (and its test support) imports it, and nothing the
// agents' hook or brabo check runs depends on it, so that it adds nothing
// to their start. cmd/brabo links it for brabo serve's wiring alone.
func TestDockerClientOnlyWhereUsed(t *testing.T) {
	recordSources(t)
	module, pkgs := listPackages(t)
	found := false
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		direct := slices.ContainsFunc(p.Imports, func(d string) bool { return strings.HasPrefix(d, dockerClient) })
		deps := slices.ContainsFunc(p.Deps, func(d string) bool { return strings.HasPrefix(d, dockerClient) })
		switch {
		case rel == "docker":
			found = direct
		case direct && rel != "docker/dockertest":
			t.Errorf("%s imports the Docker client; only the docker package may", p.ImportPath)
		}
		if deps && slices.Contains(noDocker, rel) {
			t.Errorf("%s depends on the Docker client: it must start without it", p.ImportPath)
		}
	}
	if !found {
		t.Fatalf("go list: the docker package does not import %s…: the test reads a graph it does not know", dockerClient)
	}
}

// goGit is the module of the pure-Go git the previews read repositories
// with.
const goGit = "github.com/go-git/"

// TestGoGitOnlyWhereUsed keeps go-git in its edge package: only gitrepo
// imports it, and the agents' hook and brabo check start without it.
func TestGoGitOnlyWhereUsed(t *testing.T) {
	recordSources(t)
	module, pkgs := listPackages(t)
	found := false
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		direct := slices.ContainsFunc(p.Imports, func(d string) bool { return strings.HasPrefix(d, goGit) })
		deps := slices.ContainsFunc(p.Deps, func(d string) bool { return strings.HasPrefix(d, goGit) })
		switch {
		case rel == "gitrepo":
			found = direct
		case direct:
			t.Errorf("%s imports go-git; only the gitrepo package may", p.ImportPath)
		}
		if deps && slices.Contains(noDocker, rel) {
			t.Errorf("%s depends on go-git: it must start without it", p.ImportPath)
		}
	}
	if !found {
		t.Fatalf("go list: the gitrepo package does not import %s…: the test reads a graph it does not know", goGit)
	}
}

// noDocker are the packages of brabo check and of the agents' hook.
var noDocker = []string{"", "policy", "agenthook", "cmd/brabo-hook", "pipeline", "model", "mcpserver"}

func TestHouseRules(t *testing.T) {
	recordSources(t)
	module, pkgs := listPackages(t)
	if module != "github.com/brabo-dev/brabo" {
		t.Fatalf("go list -m: module %q", module)
	}
	// The graph is real: the packages the rules are about are in it, and
	// policy does depend on the root package and the shell parser.
	found := map[string]goPackage{}
	for _, p := range pkgs {
		found[p.ImportPath] = p
	}
	for _, want := range []string{module, module + "/policy", module + "/cmd/brabo"} {
		if _, ok := found[want]; !ok {
			t.Fatalf("go list ./... does not list %s", want)
		}
	}
	policy := found[module+"/policy"]
	if !slices.Contains(policy.Imports, module) || !slices.Contains(policy.Deps, "mvdan.cc/sh/v3/syntax") {
		t.Fatalf("go list: policy imports %q: the graph is not what the rules expect", policy.Imports)
	}
	for _, v := range houseRuleViolations(module, pkgs) {
		t.Error(v)
	}
}

// TestHouseRulesCatchViolations feeds the checker graphs that break each
// rule, so that a checker that can no longer fail is caught too.
func TestHouseRulesCatchViolations(t *testing.T) {
	const m = "example.com/b"
	stdlib := []string{"fmt", "net", "net/http", "os/exec", "database/sql"}
	// pkg makes a package of m with its dependencies, written relative to
	// m ("" is the root package) unless they are outside it; the first
	// one is a direct import, the others come in through it.
	pkg := func(rel string, deps ...string) goPackage {
		p := goPackage{ImportPath: m}
		if rel != "" {
			p.ImportPath = m + "/" + rel
		}
		for i, d := range deps {
			full := d
			switch {
			case d == "":
				full = m
			case strings.Contains(d, ".") || slices.Contains(stdlib, d):
				// outside the module
			default:
				full = m + "/" + d
			}
			p.Deps = append(p.Deps, full)
			if i == 0 {
				p.Imports = append(p.Imports, full)
			}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pkgs []goPackage
		want []string // parts of the violations, one per expected violation
	}{
		{"a sound graph", []goPackage{
			pkg(""), pkg("policy", "", "policy/internal/shell", "mvdan.cc/sh/v3/syntax", "fmt"),
			pkg("policy/internal/shell", "mvdan.cc/sh/v3/syntax", "fmt"), pkg("pipeline", "policy", "policy/internal/shell", ""),
			pkg("agenthook", "policy", "policy/internal/shell", ""),
			pkg("store/sqlite", ""), pkg("store/sqlite/migrations"), pkg("store/storetest", ""),
			pkg("engine/devagent", "engine/toolloop", ""), pkg("engine/toolloop", ""),
			pkg("model/openai", ""), pkg("http", "policy", ""), pkg("http/web"),
			pkg("cmd/brabo", "http", "store/sqlite", "store/postgres", "engine/devagent", "engine/toolloop", "model/openai", "executor", ""),
		}, nil},
		{"the root imports policy", []goPackage{pkg("", "policy")},
			[]string{"the root package imports policy; it may import only packages outside the module"}},
		{"policy imports an adapter", []goPackage{pkg("policy", "", "store/sqlite")},
			[]string{"policy imports store/sqlite (indirectly); it may import only the root package"}},
		{"policy does I/O", []goPackage{pkg("policy", "os/exec", "", "net", "net/http", "database/sql")},
			[]string{"policy imports database/sql", "policy imports net (indirectly)", "policy imports net/http", "policy imports os/exec: it does no I/O"}},
		{"the shell analyzer does I/O", []goPackage{pkg("policy/internal/shell", "os/exec")},
			[]string{"policy/internal/shell imports os/exec: it does no I/O"}},
		{"the shell analyzer imports the root package", []goPackage{pkg("policy/internal/shell", "")},
			[]string{"policy/internal/shell imports the root package; it may import only packages outside the module"}},
		{"pipeline imports another package's internals", []goPackage{pkg("pipeline", "engine/internal/gitwork")},
			[]string{"pipeline imports engine/internal/gitwork; it may import only"}},
		{"pipeline imports the executor", []goPackage{pkg("pipeline", "executor", "policy", "")},
			[]string{"pipeline imports executor; it may import only the root package and policy and internal/progfind"}},
		{"one store imports the other", []goPackage{pkg("store/postgres", "store/sqlite", "")},
			[]string{"the adapter store/postgres imports the adapter store/sqlite: store/postgres imports store/sqlite;"}},
		{"a store imports the store family", []goPackage{pkg("store/postgres", "store")},
			[]string{"the adapter store/postgres imports the adapter store: store/postgres imports store;"}},
		{"an engine subpackage imports a model", []goPackage{pkg("engine/gate", "engine/toolloop", "model/scripted")},
			[]string{"the adapter engine imports the adapter model/scripted: engine/gate imports model/scripted (indirectly)"}},
		{"http imports a store subpackage", []goPackage{pkg("http/api", "store/sqlite/queries")},
			[]string{"the adapter http imports the adapter store/sqlite: http/api imports store/sqlite/queries;"}},
		{"an adapter through a core package", []goPackage{pkg("executor", "pipeline", "engine/wake")},
			[]string{"the adapter executor imports the adapter engine: executor imports engine/wake (indirectly)"}},
		{"another command wires adapters", []goPackage{pkg("cmd/other", "store/sqlite", "http")},
			[]string{"cmd/other imports several adapters (http, store/sqlite); only cmd/brabo and cmd/brabo/internal/app wire adapters together"}},
		{"a test-support package wires adapters, as tests do", []goPackage{pkg("engine/enginetest", "store/sqlite", "executor", "pipeline", "")}, nil},
		{"the client imports policy", []goPackage{pkg("client", "policy", "")},
			[]string{"client imports policy; it may import only the root package"}},
		{"the hook imports an adapter through the client", []goPackage{pkg("agenthook", "client", "http")},
			[]string{"agenthook imports http (indirectly); it may import only the root package and policy and client"}},
		{"a package imports test support", []goPackage{pkg("engine/devagent", "engine/enginetest")},
			[]string{"engine/devagent imports the test-support package engine/enginetest; only tests may"}},
		{"http imports the pipeline", []goPackage{pkg("http", "pipeline", "policy", "")},
			[]string{"http imports pipeline; http works through the root's service interfaces"}},
		{"http reaches the pipeline through another package", []goPackage{pkg("http/web", "internal/glue", "pipeline")},
			[]string{"http/web imports pipeline (indirectly)"}},
		{"a program imports mock", []goPackage{pkg("mock", ""), pkg("http", "mock", "")},
			[]string{"http imports mock; only _test.go files may"}},
		{"a helper wires adapters", []goPackage{pkg("internal/wire", "engine/devagent", "executor")},
			[]string{"internal/wire imports several adapters (engine, executor)"}},
	} {
		got := houseRuleViolations(m, tc.pkgs)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d violations, want %d:\n%s", tc.name, len(got), len(tc.want), strings.Join(got, "\n"))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: violation %q does not say %q", tc.name, got[i], w)
			}
		}
	}
}
