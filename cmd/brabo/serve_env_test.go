package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

func TestTheExecutorRunsTheDevLeadsDecisions(t *testing.T) {
	ex := newExecutor(nil, "")
	for _, typ := range []brabo.ActionType{brabo.ProposeExecutionPlan, brabo.AssessImplementability} {
		payload := brabo.Payload{Extra: json.RawMessage(`{"plan":"two agents","agents":{"api":2},"story":"s","verdict":"implementable"}`)}
		res, err := ex.Execute(context.Background(), brabo.ExecRequest{Action: &brabo.ProposedAction{ID: "act_1", Type: typ, Payload: payload}})
		if err != nil || res == nil || res.Error != "" || !strings.Contains(res.Output, "approved") {
			t.Errorf("%s: %+v, %v", typ, res, err)
		}
	}
}
