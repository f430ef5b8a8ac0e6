package executor_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

func TestUnregisteredTypeIsANamedError(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	for _, typ := range []brabo.ActionType{brabo.Spend, brabo.ContainerStart, "no_such_type", ""} {
		res, err := e.Execute(context.Background(), request(t.TempDir(), typ, brabo.Payload{}))
		var nr *executor.NoRunnerError
		if !errors.As(err, &nr) {
			t.Fatalf("%q: got %v, %v; want a *NoRunnerError", typ, res, err)
		}
		if nr.Type != typ || res != nil {
			t.Errorf("%q: NoRunnerError.Type = %q, result %v", typ, nr.Type, res)
		}
	}
	_, err := e.Execute(context.Background(), request(t.TempDir(), brabo.Spend, brabo.Payload{}))
	if want := "no executor is registered for spend"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestEveryTypeWithoutRunnerIsRefusedNotPanicked(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	builtin := map[brabo.ActionType]bool{brabo.Terminal: true, brabo.WriteFile: true, brabo.GitCommit: true,
		brabo.GitBranchCreate: true, brabo.GitPush: true, brabo.PrOpen: true, brabo.GitMerge: true}
	for _, typ := range brabo.ActionTypes() {
		if builtin[typ] {
			continue
		}
		_, err := e.Execute(context.Background(), request(t.TempDir(), typ, brabo.Payload{}))
		if !strings.Contains(err.Error(), string(typ)) {
			t.Errorf("%s: error %v does not name the type", typ, err)
		}
	}
}

func TestRegisterAddsReplacesAndRemovesARunner(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	var got brabo.ExecRequest
	e.Register(brabo.Spend, func(_ context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
		got = req
		return &brabo.Result{Output: "spent"}, nil
	})
	req := request(t.TempDir(), brabo.Spend, brabo.Payload{Extra: []byte(`{"usd":3}`)})
	res := mustSucceed(t, e, req)
	if res.Output != "spent" || string(got.Action.Payload.Extra) != `{"usd":3}` {
		t.Errorf("runner not called with the request: output %q, extra %s", res.Output, got.Action.Payload.Extra)
	}

	// Replacing a built-in is allowed.
	e.Register(brabo.Terminal, func(context.Context, brabo.ExecRequest) (*brabo.Result, error) {
		return &brabo.Result{Output: "fake terminal"}, nil
	})
	res = mustSucceed(t, e, request(t.TempDir(), brabo.Terminal, brabo.Payload{Command: "exit 9"}))
	if res.Output != "fake terminal" {
		t.Errorf("the replacement runner was not used: %+v", res)
	}

	e.Register(brabo.Spend, nil)
	_, err := e.Execute(context.Background(), req)
	var nr *executor.NoRunnerError
	if !errors.As(err, &nr) {
		t.Errorf("after Register(nil) got %v, want a *NoRunnerError", err)
	}
}

func TestExecutedAsOnlyWithACredential(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	e.Register(brabo.Spend, func(context.Context, brabo.ExecRequest) (*brabo.Result, error) {
		return &brabo.Result{Detail: map[string]string{"k": "v"}}, nil
	})
	req := request(t.TempDir(), brabo.Spend, brabo.Payload{})
	res := mustSucceed(t, e, req)
	if res.Detail["k"] != "v" {
		t.Errorf("the runner's detail was lost: %v", res.Detail)
	}
	req.Credential = nil
	res = mustRun(t, e, req)
	if _, ok := res.Detail["executedAs"]; ok {
		t.Errorf("executedAs set without a credential: %v", res.Detail)
	}
}

func TestPanickingRunnerIsAnError(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	e.Register(brabo.Spend, func(context.Context, brabo.ExecRequest) (*brabo.Result, error) {
		panic("boom")
	})
	res, err := e.Execute(context.Background(), request(t.TempDir(), brabo.Spend, brabo.Payload{}))
	if err == nil || !strings.Contains(err.Error(), "boom") || res != nil {
		t.Errorf("got %v, %v; want an error carrying the panic", res, err)
	}
}

func TestRequestWithoutActionIsRefused(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	_, err := e.Execute(context.Background(), brabo.ExecRequest{Root: t.TempDir()})
	var pe *executor.PayloadError
	if !errors.As(err, &pe) {
		t.Errorf("got %v, want a *PayloadError", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	o := executor.New(executor.Options{}).Options()
	if o.MaxOutputBytes != 64<<10 || o.DefaultTimeout != 2*time.Minute || o.MaxTimeout != time.Hour ||
		o.GitPath != "git" || o.Shell != "bash" || o.GitTimeout != 2*time.Minute || o.WaitDelay <= 0 {
		t.Errorf("defaults = %+v", o)
	}
	o = executor.New(executor.Options{DefaultTimeout: time.Hour, MaxTimeout: time.Minute}).Options()
	if o.DefaultTimeout != time.Minute {
		t.Errorf("DefaultTimeout above MaxTimeout kept: %v", o.DefaultTimeout)
	}
}

// The branch check must never accept what git itself refuses, and must
// refuse what git would read as an option or a reflog expression.
func TestBranchNameCheckAgreesWithGit(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := t.TempDir()
	good := []string{"main", "feature/x", "fix-1.2", "a_b", "user@host", "release/v1.0.0", "ünïcode"}
	bad := []string{"", "-f", "--force", "-", "a..b", "x:y", "a b", "a~1", "a^", "a?", "a*", "a[", `a\b`,
		"@{-1}", "x@{u}", "@", "HEAD", "foo.lock", "a/b.lock", ".hidden", "a/.b", "a/", "/a", "a//b",
		"end.", "tab\tname", "nl\nname", "del\x7f"}
	for _, name := range good {
		if out, err := exec.Command("git", "check-ref-format", "--branch", name).CombinedOutput(); err != nil {
			t.Fatalf("test data: git refuses %q: %s", name, out)
		}
		_, err := e.Execute(context.Background(), request(root, brabo.GitBranchCreate, brabo.Payload{Branch: name}))
		var pe *executor.PayloadError
		if errors.As(err, &pe) && pe.Field == "branch" {
			t.Errorf("%q refused: %v", name, err)
		}
	}
	for _, name := range bad {
		for _, typ := range []brabo.ActionType{brabo.GitBranchCreate, brabo.GitPush, brabo.PrOpen} {
			pe := mustRefuse[*executor.PayloadError](t, e, request(root, typ,
				brabo.Payload{Branch: name, Base: "main"}))
			if pe.Field != "branch" {
				t.Errorf("%s %q: refused for %q, want branch", typ, name, pe.Field)
			}
		}
	}
}
