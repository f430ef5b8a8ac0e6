package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The demo, run as a person would with --approve: the agent works,
// suspends on the pending command, is approved, and resumes with the
// command's real output.
func TestDemoSuspendsAndResumes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, braboBin, "demo", "--approve", "--addr", "127.0.0.1:0").CombinedOutput()
	if err != nil {
		t.Fatalf("brabo demo: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"auto_approved: permissions.json allow: Terminal(ls)",
		"auto_approved: permissions.json allow: Terminal(make test)",
		"ok: 3 tests passed",
		"pending: compound: the segment \"touch CHANGELOG.md\" has no rule",
		"The agent is suspended",
		"/approve -H 'Authorization: Bearer brb_",
		"In the browser: http://127.0.0.1:",
		"Approved by a human",
		"changelog created",
		"auto_approved: agent_autonomy: auto_approve (specific)", // the seeded git_commit
		"→ the agent proposes: git_push brabo/task_",
		"* [new branch]      brabo/task_", // the task's branch, pushed by the typed git_push
		"a pull request waits for your approval",
		"The task is done: pull request #1 is open.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, s)
		}
	}
	// The command's real output (indented) comes only after the suspension.
	if strings.Index(s, "The agent is suspended") > strings.Index(s, "\n    changelog created") {
		t.Error("the pending command's output came before the suspension")
	}
}
