package app

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The executor every subcommand builds runs the engine's types: none of
// them ends "no executor is registered". The plan's and parallelize's own
// tests are in engine/devlead and parallel_test.go.
func TestTheExecutorRunsTheEnginesTypes(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ex := newExecutor(nil, "", s, nil, nil)
	extra := map[brabo.ActionType]string{
		brabo.ProposeExecutionPlan:   `{"plan":"two agents","agents":{"api":2}}`,
		brabo.AssessImplementability: `{"story":"s","verdict":"implementable"}`,
		brabo.Parallelize:            `{"module":"api","agents":2}`,
		brabo.RaiseMaxParallel:       `{"maxParallel":5}`,
	}
	for typ, e := range extra {
		res, err := ex.Execute(context.Background(), brabo.ExecRequest{Action: &brabo.ProposedAction{ID: "act_1", ProjectID: "prj_none",
			Type: typ, Payload: brabo.Payload{Extra: json.RawMessage(e)}}})
		var nr *executor.NoRunnerError
		if errors.As(err, &nr) || (err != nil && strings.Contains(err.Error(), "no executor")) {
			t.Errorf("%s: %v", typ, err)
		}
		if typ == brabo.AssessImplementability && (err != nil || !strings.Contains(res.Output, "approved")) {
			t.Errorf("%s: %+v, %v", typ, res, err)
		}
		if typ != brabo.AssessImplementability && (err == nil || !strings.Contains(err.Error(), "prj_none")) {
			t.Errorf("%s on a missing project: %+v, %v; want an error naming it", typ, res, err)
		}
	}
}
