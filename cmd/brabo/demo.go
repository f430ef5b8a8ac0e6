package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/model/scripted"
	"github.com/brabo-dev/brabo/pipeline"
)

// demoScript is what the demo's dev agent does, in its worktree on the
// task's branch: it looks, reads, runs the tests (all auto-approved by the
// seeded list), then runs a command the list does not cover, which
// suspends it until a human decides; then it commits, pushes with git_push
// (a push always asks) and reports the task done, which asks for the pull request.
const demoScript = `{"turns": [
  {"content": "Let me look around first.",
   "toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"toolCalls": [{"id": "c2", "name": "read_file", "arguments": {"path": "README.md"}}]},
  {"content": "Now the tests.",
   "toolCalls": [{"id": "c3", "name": "terminal", "arguments": {"command": "make test"}}]},
  {"content": "Tests pass. Adding the changelog.",
   "toolCalls": [{"id": "c4", "name": "terminal", "arguments": {"command": "touch CHANGELOG.md && echo changelog created"}}]},
  {"toolCalls": [{"id": "c5", "name": "git_commit", "arguments": {"message": "Add a CHANGELOG"}}]},
  {"toolCalls": [{"id": "c6", "name": "git_push", "arguments": {}}]},
  {"toolCalls": [{"id": "c7", "name": "report_done", "arguments": {"title": "Add a CHANGELOG", "summary": "CHANGELOG.md added; make test passes."}}]}
]}`

func runDemo(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("demo")
	addr := fl.String("addr", "127.0.0.1:8080", "where the demo's API and web page listen")
	approve := fl.Bool("approve", false, "approve each pending action by itself after 1 s, and end when the task is done (a tour without a second terminal)")
	keep := fl.Bool("keep", false, "keep the throwaway folder, and print the command that serves it again")
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C (or SIGTERM) is how a person ends the demo: it ends with the
	// shell's status for the signal, and no error.
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	var sig os.Signal
	stopped := make(chan struct{})
	go func() {
		select {
		case sig = <-sigc:
			cancel()
		case <-ctx.Done():
		}
		close(stopped)
	}()
	err := demo(ctx, *addr, *approve, *keep, stdout)
	cancel()
	<-stopped
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	if err != nil {
		return fail(stderr, "demo", "%v", err)
	}
	return 0
}

// demoFolder is the throwaway folder's layout: the project, its bare
// origin, the data folder (the database, apart from the project, as
// brabo serve requires) and the script the dev agent replays.
type demoFolder struct{ dir, project, data, script string }

func newDemoFolder(dir string) demoFolder {
	return demoFolder{dir: dir, project: filepath.Join(dir, "shop"), data: filepath.Join(dir, "data"),
		script: filepath.Join(dir, "demo-script.json")}
}

// revive is the one command that serves a kept demo again, with its agent:
// approving the pull request there wakes it as in the demo.
func (f demoFolder) revive(addr string) string {
	return fmt.Sprintf("brabo serve --data %s --model scripted:%s --addr %s", shellQuote(f.data), shellQuote(f.script), addr)
}

func demo(ctx context.Context, addr string, autoApprove, keep bool, out io.Writer) error {
	dir, err := os.MkdirTemp("", "brabo-demo-")
	if err != nil {
		return err
	}
	f := newDemoFolder(dir)
	if keep {
		fmt.Fprintf(out, "The throwaway folder is %s (kept).\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := demoRepo(f.project); err != nil {
		return err
	}
	if err := os.WriteFile(f.script, []byte(demoScript), 0o644); err != nil {
		return err
	}
	m, err := scripted.ParseNamed("demo", []byte(demoScript))
	if err != nil {
		return err
	}
	// The demo is wired as brabo serve is (app.Open): its cards read its
	// own repository, its commands are sandboxed where bubblewrap runs and
	// said to be unsandboxed where it does not (its own script's, so
	// chosen all the same).
	a, err := app.Open(ctx, app.Config{Name: "brabo demo", Data: f.data, Addr: addr, Env: procenv.Own(), Model: m,
		UnsandboxedChosen: true, AdminName: "you", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if errors.Is(err, syscall.EADDRINUSE) {
		// The usual case: the walkthrough's brabo serve still holds 8080.
		return fmt.Errorf("%s is taken (a brabo serve still running?): stop it, or give the demo another port with --addr 127.0.0.1:8081", addr)
	}
	if err != nil {
		return err
	}
	defer a.Close()
	store, svc, token := a.Store, a.Pipeline, a.AdminToken
	project, task, err := demoProject(ctx, svc, f.project, token)
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	defer a.Shutdown("brabo demo was stopped")
	base := a.URL()
	ln := a.Listener

	events, cancel := store.Subscribe(project.ID)
	defer cancel()

	fmt.Fprintf(out, "brabo demo: a dev agent works on %q in a throwaway git repository.\n", task.Title)
	fmt.Fprintf(out, "The API and the web page are at %s (admin token %s).\n", base, token)
	if autoApprove {
		fmt.Fprintf(out, "--approve: each pending action is approved after a second; the demo ends with the task.\n\n")
	} else {
		fmt.Fprintf(out, "The demo serves until you press Ctrl-C.\n\n")
	}
	defer func() {
		if ctx.Err() == nil {
			return
		}
		fmt.Fprintf(out, "\nStopped.\n")
		if keep {
			fmt.Fprintf(out, "The demo is kept in %s. Serve it again, with its agent, by\n\n    %s\n\n(the admin token stays %s).\n", dir, f.revive(ln.Addr().String()), token)
		} else {
			fmt.Fprintf(out, "The throwaway folder is removed (brabo demo --keep keeps it).\n")
		}
	}()
	var seq int64
	for {
		var evs []brabo.Event
		if err := store.View(ctx, func(tx brabo.Tx) error {
			var err error
			evs, err = tx.Events(ctx, project.ID, seq, 100)
			return err
		}); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		// The task's end is said after the events read with it: the
		// pr_open that moves it to review is recorded in the same
		// transaction, and its output belongs before the last word.
		var ending string
		for _, e := range evs {
			seq = e.Seq
			end, err := narrate(ctx, out, store, svc, e, base, token, autoApprove)
			if err != nil {
				return err
			}
			if end != "" {
				ending = end
			}
		}
		if ending != "" {
			fmt.Fprint(out, ending)
			if autoApprove {
				fmt.Fprintf(out, "The demo ends here (--approve). Without --approve you decide, and it serves until Ctrl-C.\n")
				return nil
			}
			fmt.Fprintf(out, "The demo keeps serving %s/ (the queue, the session log) until Ctrl-C.\n", base)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-events:
		case <-time.After(time.Second):
		}
	}
}

// narrate prints one event for a person; when the task has ended it
// returns, instead of printing it, the sentence that says how.
func narrate(ctx context.Context, out io.Writer, store brabo.Store, svc *pipeline.Service, e brabo.Event, base, token string, autoApprove bool) (string, error) {
	p := map[string]any{}
	json.Unmarshal(e.Payload, &p)
	action := func() *brabo.ProposedAction {
		var a *brabo.ProposedAction
		store.View(ctx, func(tx brabo.Tx) error {
			var err error
			a, err = tx.Action(ctx, e.ActionID)
			return err
		})
		return a
	}
	switch e.Type {
	case brabo.EventActionCreated:
		a := action()
		if a == nil {
			return "", nil
		}
		fmt.Fprintf(out, "→ the agent proposes: %s\n  %s: %s\n", describe(a), p["status"], p["reason"])
	case brabo.EventActionExecuted:
		if a := action(); a != nil && a.Result != nil {
			fmt.Fprintf(out, "  ran, exit %d; the agent gets the real output:\n%s", a.Result.ExitCode, indent(a.Result.Output))
		}
	case "dev.awaiting_approval":
		id, _ := p["actionId"].(string)
		fmt.Fprintf(out, "\n⏸ The agent is suspended, waiting for a human. Nothing runs, no iteration is spent.\n")
		fmt.Fprintf(out, "  In the browser: %s/  (log in with the token %s)\n", base, token)
		fmt.Fprintf(out, "  See the queue:  curl -s %s/v1/queue -H 'Authorization: Bearer %s'\n", base, token)
		fmt.Fprintf(out, "  Approve:        curl -s -XPOST %s/v1/actions/%s/approve -H 'Authorization: Bearer %s' -d '{\"revision\":\"%s\"}'\n", base, id, token, revisionNow(ctx, svc, id))
		fmt.Fprintf(out, "  Deny:           curl -s -XPOST %s/v1/actions/%s/deny -H 'Authorization: Bearer %s' -d '{\"reason\":\"not now\"}'\n\n", base, id, token)
		if autoApprove {
			approveSoon(ctx, out, store, svc, token, id)
		}
	case "dev.awaiting_pr":
		id, _ := p["actionId"].(string)
		fmt.Fprintf(out, "\n⏸ The agent reports the task done: a pull request waits for your approval.\n")
		fmt.Fprintf(out, "  In the browser: %s/\n", base)
		fmt.Fprintf(out, "  Approve it:     curl -s -XPOST %s/v1/actions/%s/approve -H 'Authorization: Bearer %s' -d '{\"revision\":\"%s\"}'\n\n", base, id, token, revisionNow(ctx, svc, id))
		if autoApprove {
			approveSoon(ctx, out, store, svc, token, id)
		}
	case brabo.EventActionApproved:
		fmt.Fprintf(out, "✔ Approved by a human: the agent is woken with the real result.\n")
	case brabo.EventActionDenied:
		fmt.Fprintf(out, "✘ Denied (%v): the agent is woken with the reason.\n", p["reason"])
	case brabo.EventTaskStatusChanged:
		switch p["status"] {
		case string(brabo.TaskInReview):
			// The task is done when its PR is merged (a git_merge a human
			// approves), once; the demo ends with the PR open.
			pr, _ := p["pr"].(float64)
			return fmt.Sprintf("\nThe task is in review: pull request #%d is open; merging it (git_merge) makes the task done.\n", int(pr)), nil
		case string(brabo.TaskDone):
			return "\nThe task is done.\n", nil
		}
	case "backlog.task_blocked":
		return fmt.Sprintf("\nThe task is blocked (%v): %v\n", p["origin"], p["reason"]), nil
	}
	return "", nil
}

// approveSoon approves an action as the demo's admin after a second: the
// tour of --approve.
func approveSoon(ctx context.Context, out io.Writer, store brabo.Store, svc *pipeline.Service, token, id string) {
	go func() {
		time.Sleep(time.Second)
		fmt.Fprintf(out, "(--approve: approving it now)\n")
		var m *brabo.Member
		store.View(ctx, func(tx brabo.Tx) error {
			var err error
			m, err = tx.MemberByTokenHash(ctx, brabohttp.HashToken(token))
			return err
		})
		if m != nil {
			svc.Approve(ctx, id, m, revisionNow(ctx, svc, id))
		}
	}()
}

// revisionNow is the revision of the action's card as it is now: what the
// demo's approve line names (an approve names the card it approves).
func revisionNow(ctx context.Context, svc *pipeline.Service, id string) string {
	return svc.RevisionNow(ctx, id)
}

func describe(a *brabo.ProposedAction) string {
	switch a.Type {
	case brabo.Terminal:
		return "terminal `" + a.Payload.Command + "`"
	case brabo.GitCommit:
		return fmt.Sprintf("git_commit %q", a.Payload.Message)
	case brabo.GitPush:
		remote := a.Payload.Remote
		if remote == "" {
			remote = "origin"
		}
		return fmt.Sprintf("git_push %s to %s", a.Payload.Branch, remote)
	case brabo.PrOpen:
		return fmt.Sprintf("pr_open %s → %s %q", a.Payload.Branch, a.Payload.Base, a.Payload.Title)
	}
	return string(a.Type)
}

func indent(s string) string {
	if s == "" {
		return "    (no output)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// demoRepo makes the throwaway project: a git repository with a README
// and a Makefile whose tests pass. Its permissions.json is what activating
// execution writes (demoProject).
func demoRepo(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"README.md": "# shop\n\nA tiny project for the brabo demo.\n",
		"Makefile":  "test:\n\t@echo 'ok: 3 tests passed'\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	origin := filepath.Join(filepath.Dir(root), "origin.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", origin).CombinedOutput(); err != nil {
		return fmt.Errorf("git init --bare: %v: %s", err, out)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=brabo", "-c", "user.email=demo@brabo.local", "commit", "-q", "-m", "initial"},
		{"config", "user.name", "brabo demo"}, {"config", "user.email", "demo@brabo.local"},
		{"remote", "add", "origin", origin}, {"push", "-q", "origin", "main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}

// demoProject records the project (owned by the admin), its dev agent and
// the task, and activates execution as a maintainer would
// (pipeline.ActivateExecution): the seeded allow list in permissions.json
// and git_commit: auto_approve for the dev agent.
func demoProject(ctx context.Context, svc *pipeline.Service, root, adminToken string) (*brabo.Project, *brabo.Task, error) {
	if adminToken == "" {
		return nil, nil, errors.New("the demo needs a new store: its admin token was not created")
	}
	admin, _, err := svc.ByTokenHash(ctx, brabohttp.HashToken(adminToken))
	if err != nil {
		return nil, nil, err
	}
	p, err := svc.CreateProject(ctx, admin, brabo.NewProject{Slug: "shop", Name: "shop", Mode: brabo.ModeLocal, Root: root})
	if err != nil {
		return nil, nil, err
	}
	if _, _, err := svc.CreateAgent(ctx, p.ID, admin.ID, "dev-shop", ""); err != nil {
		return nil, nil, err
	}
	task, err := svc.CreateTask(ctx, p.ID, "Add a CHANGELOG", "Create CHANGELOG.md; keep the tests green.")
	if err != nil {
		return nil, nil, err
	}
	if _, err := svc.ActivateExecution(ctx, p.ID, admin); err != nil {
		return nil, nil, fmt.Errorf("activating execution: %w", err)
	}
	return p, task, nil
}
