package brabo_test

// Every place brabo's programs start a process, read from the syntax of
// the module's files (test files excluded): each is listed below with why
// it cannot run code an agent wrote, or that it goes through the sandbox.
// A new call fails this test until it is added here with its reason, and
// a listed one that is gone fails it too, so the list stays the truth.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// processStarts are the calls that start or replace a process.
var processStarts = map[string][]string{
	"os/exec": {"Command", "CommandContext", "Cmd"},
	"os":      {"StartProcess"},
	"syscall": {"Exec", "ForkExec", "StartProcess"},
}

// execSites maps "file: function" to why the process it starts cannot run
// code an agent wrote outside the sandbox.
var execSites = map[string]string{
	// The sandbox itself.
	"executor/process.go: runIn": "every process of an action: under bwrap (sandbox.Prepared.Apply), " +
		"unless the operator chose --no-sandbox, which every card and /healthz names",
	"internal/sandbox/prepare.go: usernsFor": "brabo's own brabo-sandbox binary (the root helper) " +
		"holding a user namespace; it runs no project file",
	"internal/sandbox/prepare.go: check":     "bwrap checking the set-up with /usr's true",
	"internal/sandbox/prepare.go: available": "bwrap probing that user namespaces work, with /usr's true",
	"internal/sandbox/helper.go: Main":       "the root helper replacing itself with bwrap",
	"internal/confine/launcher.go: Main": "inside the sandbox: the Landlock launcher replacing itself " +
		"with the confined command",
	"internal/egress/forward.go: Main": "inside the sandbox: the egress forwarder starting the confined " +
		"command with the proxy's address",
	// brabo's own git on the host. gitwork's runs in a repository an agent
	// may have written, so its configuration is checked as data first; the
	// other two run where no agent writes.
	"engine/internal/gitwork/gitwork.go: Git": "brabo's git on its own worktrees, bound by the scope root, " +
		"with the repository's config read as data and hooks, filters and helpers off (gitguard)",
	"executor/gitnet.go: hostCredential": "git credential fill in / with no GIT_* variable: the server " +
		"user's own configuration, no repository's",
	"cmd/brabo/demo.go: demoRepo": "git making the demo's repositories in a fresh temp folder, before " +
		"its agent runs",
	// Programs brabo starts for the user who runs the command.
	"agenthook/install_codex.go: codexHooks": "codex app-server, found by CodexBinary outside every " +
		"folder an agent writes (TestImportNeverStartsACodexAnAgentWrote)",
	"cmd/brabo/internal/ruleimport/codex.go: codexCheck": "codex execpolicy check, found by CodexBinary " +
		"(TestImportNeverStartsACodexAnAgentWrote)",
	"agenthook/watch_unix.go: startWatcher": "brabo's own hook binary (os.Executable) watching Codex's " +
		"or Gemini CLI's transcript, in the agent's own process tree",
	// Test support, linked into no brabo binary.
	"docker/dockertest/dockertest.go: *":                      "test support: podman for the container tests",
	"engine/enginetest/git.go: *":                             "test support: git in the tests' own repositories",
	"internal/sshtest/sshtest.go: *":                          "test support: sshd and ssh-keygen for the ssh push tests",
	"policy/internal/shell/testdata/bashdiff/stub/main.go: *": "test data: the differential test's stub programs",
}

func TestEveryProcessStartIsListedWithItsReason(t *testing.T) {
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, fn := range processStartsIn(t, path, src) {
			found[path+": "+fn] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	listed := func(site string) (string, bool) {
		file, fn, _ := strings.Cut(site, ": ")
		for k := range execSites {
			kf, kfn, _ := strings.Cut(k, ": ")
			if m, _ := filepath.Match(kf, file); (m || strings.HasPrefix(file, strings.TrimSuffix(kf, "*")) && strings.HasSuffix(kf, "/*")) && (kfn == "*" || kfn == fn) {
				return k, true
			}
		}
		return "", false
	}
	used := map[string]bool{}
	var missing []string
	for site := range found {
		if k, ok := listed(site); ok {
			used[k] = true
		} else {
			missing = append(missing, site)
		}
	}
	sort.Strings(missing)
	for _, s := range missing {
		t.Errorf("%s starts a process and is not in execSites: say why it cannot run code an agent wrote, or start it in the sandbox", s)
	}
	for k := range execSites {
		if !used[k] {
			t.Errorf("execSites lists %q, which starts no process any more: remove it", k)
		}
	}
}

// processStartsIn returns the functions of the file (a method as its
// name, a file-level call as "*") that call one of processStarts.
func processStartsIn(t *testing.T, path string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string][]string{} // the file's name of an import → its starting calls
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		calls, ok := processStarts[p]
		if !ok {
			continue
		}
		n := filepath.Base(p)
		if im.Name != nil {
			n = im.Name.Name
		}
		names[n] = calls
	}
	if len(names) == 0 {
		return nil
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		hit := false
		starts := func(e ast.Expr) bool { // e names one of processStarts
			s, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			id, ok := s.X.(*ast.Ident)
			return ok && slices.Contains(names[id.Name], s.Sel.Name)
		}
		ast.Inspect(fd, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr: // exec.Command(…), syscall.Exec(…)
				hit = hit || starts(n.Fun)
			case *ast.CompositeLit: // &exec.Cmd{…}: a *exec.Cmd named as a type starts nothing
				hit = hit || starts(n.Type)
			}
			return true
		})
		if hit {
			out = append(out, fd.Name.Name)
		}
	}
	return out
}
