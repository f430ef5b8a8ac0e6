package executor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// sandboxed returns an executor whose terminal commands run in the
// sandbox, the test binary as helper and launcher; it fails under
// BRABO_REQUIRE_SANDBOX when bubblewrap is missing, and skips otherwise.
func sandboxed(t *testing.T) *executor.Executor {
	t.Helper()
	return sandboxedWith(t, executor.Options{})
}

// sandboxedWith is sandboxed with more options.
func sandboxedWith(t *testing.T, o executor.Options) *executor.Executor {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("BRABO_REQUIRE_SANDBOX is set and the sandbox is missing: %v", err)
		}
		t.Skip("the sandbox is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
	}
	o.Sandbox = &sandbox.Sandbox{Helper: os.Args[0]}
	o.Confine = &executor.Confinement{CacheRoot: t.TempDir()}
	return executor.New(o)
}

// TestSandboxedTerminalWritesItsRootOnly: a sandboxed terminal command
// writes in its project and its cache, not in a protected path nor
// outside; a background child it leaves never writes after it; an
// approved protected write opens the protected paths.
func TestSandboxedTerminalWritesItsRootOnly(t *testing.T) {
	e := sandboxed(t)
	root := realDir(t)
	outside := realDir(t)
	writeFile(t, filepath.Join(root, "permissions.json"), "{}")
	writeFile(t, filepath.Join(outside, "secret"), "s")
	res := mustRun(t, e, request(root, brabo.Terminal, brabo.Payload{Command: `echo in > made; echo c > "$GOCACHE.x" 2>/dev/null; ` +
		`echo x > permissions.json || echo perms-denied; cat ` + outside + `/secret || echo outside-hidden; ` +
		`(setsid bash -c 'sleep 1; echo late > ` + root + `/late' &); echo tmp=$TMPDIR`}))
	for _, want := range []string{"perms-denied", "outside-hidden", "tmp=/tmp"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "made")); string(b) != "in\n" {
		t.Errorf("the write in the root did not happen: %q\n%s", b, res.Output)
	}
	waitGone(t, filepath.Join(root, "late"))
	req := request(root, brabo.Terminal, brabo.Payload{Command: `echo '{"a":1}' > permissions.json`})
	req.MayWriteProtected = func(string) bool { return true }
	if res := mustRun(t, e, req); res.ExitCode != 0 {
		t.Errorf("an approved protected write failed: %+v", res)
	}
}

// TestSandboxFailureFailsTheAction: a sandbox that cannot be set up (no
// bwrap where the executor looks) fails with sandbox_failed and runs
// nothing.
func TestSandboxFailureFailsTheAction(t *testing.T) {
	root := realDir(t)
	e := executor.New(executor.Options{Sandbox: &sandbox.Sandbox{Helper: os.Args[0], Bwrap: "/nonexistent/bwrap"}})
	res, err := e.Execute(t.Context(), request(root, brabo.Terminal, brabo.Payload{Command: "touch ran"}))
	if err != nil || res == nil || res.Code != brabo.CodeSandboxFailed || !strings.Contains(res.Error, "did not run") {
		t.Fatalf("want a sandbox_failed result, got %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Error("the command ran outside the sandbox")
	}
}

// waitGone waits long enough for a left-over child to have written path,
// and fails when it did.
func waitGone(t *testing.T, path string) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("a child the command left wrote %s after the action ended", path)
	}
}
