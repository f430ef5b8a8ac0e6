package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

func TestCommandEnvKeepsBuildVariablesAndDropsSecrets(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "OPENAI_API_KEY=sk-secret",
		"BRABO_DB=postgres://u:pw@db/x", "BASH_ENV=/tmp/evil", "CDPATH=/etc", "GOPATH=/go", "CI_TOKEN=t", "EXTRA=1"}
	got := commandEnv(environ, []string{" EXTRA ", "", "CDPATH"})
	want := []string{"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "GOPATH=/go", "EXTRA=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("commandEnv = %q, want %q", got, want)
	}
}

func TestTheExecutorRunsTheDevLeadsDecisions(t *testing.T) {
	ex := newExecutor(nil)
	for _, typ := range []brabo.ActionType{brabo.ProposeExecutionPlan, brabo.AssessImplementability} {
		payload := brabo.Payload{Extra: json.RawMessage(`{"plan":"two agents","agents":{"api":2},"story":"s","verdict":"implementable"}`)}
		res, err := ex.Execute(context.Background(), brabo.ExecRequest{Action: &brabo.ProposedAction{ID: "act_1", Type: typ, Payload: payload}})
		if err != nil || res == nil || res.Error != "" || !strings.Contains(res.Output, "approved") {
			t.Errorf("%s: %+v, %v", typ, res, err)
		}
	}
}
