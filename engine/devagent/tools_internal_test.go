package devagent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// The paths the model gives are rebased onto the agent's worktree; a path
// that leaves it is a bad argument.
func TestToolsActInTheWorktree(t *testing.T) {
	wt := newWorktree("/srv/shop", "agt_1", "tsk_1")
	tools := map[string]toolloop.Tool{}
	for _, tool := range append(toolloop.StandardTools(), GitPushTool(wt.branch)) {
		tools[tool.Spec.Name] = inWorktree(tool, wt)
	}
	for _, tc := range []struct {
		tool, args string
		want       brabo.Payload
		err        string
	}{
		{"terminal", `{"command":"ls"}`, brabo.Payload{Command: "ls", Cwd: ".brabo/worktrees/agt_1"}, ""},
		{"terminal", `{"command":"ls","cwd":"src/app"}`, brabo.Payload{Command: "ls", Cwd: ".brabo/worktrees/agt_1/src/app"}, ""},
		{"terminal", `{"command":"ls","cwd":"./src/../lib"}`, brabo.Payload{Command: "ls", Cwd: ".brabo/worktrees/agt_1/lib"}, ""},
		{"terminal", `{"command":"ls","cwd":"/srv/shop/.brabo/worktrees/agt_1/src"}`, brabo.Payload{Command: "ls", Cwd: ".brabo/worktrees/agt_1/src"}, ""},
		{"terminal", `{"command":"ls","cwd":".."}`, brabo.Payload{}, "outside your worktree"},
		{"terminal", `{"command":"ls","cwd":"../agt_2"}`, brabo.Payload{}, "outside your worktree"},
		{"terminal", `{"command":"ls","cwd":"/srv/shop"}`, brabo.Payload{}, "outside your worktree"},
		{"write_file", `{"path":"a/b.txt","content":"x"}`, brabo.Payload{Path: ".brabo/worktrees/agt_1/a/b.txt", Content: "x"}, ""},
		{"write_file", `{"path":"../../../README.md","content":"x"}`, brabo.Payload{}, "outside your worktree"},
		{"write_file", `{"path":".","content":"x"}`, brabo.Payload{}, "not a file"},
		{"git_commit", `{"message":"m"}`, brabo.Payload{Message: "m", Cwd: ".brabo/worktrees/agt_1"}, ""},
		{"git_push", `{}`, brabo.Payload{Branch: "brabo/tsk_1"}, ""},
		{"git_push", `{"remote":"upstream"}`, brabo.Payload{Branch: "brabo/tsk_1", Remote: "upstream"}, ""},
		{"git_push", `{"branch":"main"}`, brabo.Payload{}, "do not fit the schema"},
	} {
		typ, p, err := tools[tc.tool].Action(json.RawMessage(tc.args))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: err %v, want %q", tc.tool, tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(p, tc.want) {
			t.Errorf("%s %s: %s %+v, %v; want %+v", tc.tool, tc.args, typ, p, err, tc.want)
		}
	}
}

// The model is told that its folder is its worktree (the task's first
// message names the branch), in words every agent's tools share.
func TestToolDescriptionsNameTheWorktree(t *testing.T) {
	wt := newWorktree("/srv/shop", "agt_1", "tsk_1")
	other := newWorktree("/srv/shop", "agt_2", "tsk_2")
	for _, tool := range append(toolloop.StandardTools(), ReadFileTool(wt.dir(), nil)) {
		spec := inWorktree(tool, wt).Spec
		if !strings.Contains(spec.Description, "worktree") {
			t.Errorf("%s: %q", spec.Name, spec.Description)
		}
		if o := inWorktree(tool, other).Spec; unsafe.StringData(o.Description) != unsafe.StringData(spec.Description) {
			t.Errorf("%s: two agents hold two copies of the description", spec.Name)
		}
		if !json.Valid(spec.Parameters) || strings.Contains(string(spec.Parameters), "project folder") {
			t.Errorf("%s parameters: %s", spec.Name, spec.Parameters)
		}
	}
}

func TestReportDoneNamesTheTaskBranch(t *testing.T) {
	typ, p, err := ReportDoneTool("tsk_1").Action(json.RawMessage(`{"title":"T","summary":"S"}`))
	if err != nil || typ != brabo.PrOpen || p.Branch != "brabo/tsk_1" || p.Base != BaseBranch || p.TaskID != "tsk_1" {
		t.Fatalf("report_done proposes %s %+v, %v", typ, p, err)
	}
	if _, _, err := ReportDoneTool("tsk_1").Action(json.RawMessage(`{"title":"T","summary":"S","branch":"main"}`)); err == nil {
		t.Fatal("report_done took a branch of the model's")
	}
}
