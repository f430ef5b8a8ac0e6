package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/mock"
)

// The deny route on fakes of the services: the handler only carries the
// request. It hands the action, the calling member and the reason to
// ActionService.Deny and answers what Deny returned; an agent's token is
// refused before any service is asked to decide, and Deny's typed refusal
// keeps its status and code.
func TestDenyHandlerCarriesTheDecision(t *testing.T) {
	ana := &brabo.Member{ID: "mem_ana", Name: "ana"}
	coder := &brabo.Agent{ID: "agt_coder", ProjectID: "prj_1", Name: "coder"}
	projects := &mock.ProjectService{
		// The answer's sentence names the member who decided.
		MemberFn: func(_ context.Context, id string) (*brabo.Member, error) {
			if id == ana.ID {
				return ana, nil
			}
			return nil, brabo.ErrNotFound
		},
		ByTokenHashFn: func(_ context.Context, hash string) (*brabo.Member, *brabo.Agent, error) {
			switch hash {
			case brabo.HashToken("member-token"):
				return ana, nil, nil
			case brabo.HashToken("agent-token"):
				return nil, coder, nil
			}
			return nil, nil, brabo.ErrNotFound
		},
	}
	events := &mock.EventService{SubscribeFn: func(string) (<-chan struct{}, func()) { return nil, func() {} }}
	type denial struct{ action, member, reason string }
	var denied []denial
	actions := &mock.ActionService{
		ActionFn: func(context.Context, string) (*brabo.ProposedAction, error) { return nil, brabo.ErrNotFound },
		DenyFn: func(_ context.Context, id string, m *brabo.Member, reason string) (*brabo.ProposedAction, error) {
			denied = append(denied, denial{id, m.ID, reason})
			if id == "act_done" {
				return nil, brabo.Errorf(brabo.CodeActionAlreadyDenied, "action act_done was already denied")
			}
			return &brabo.ProposedAction{ID: id, Status: brabo.StatusDenied, Reason: reason, DecidedBy: m.ID}, nil
		},
	}
	srv := httptest.NewServer((&brabohttp.Server{Actions: actions, Events: events, Projects: projects}).Handler())
	defer srv.Close()
	deny := func(token, id, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/actions/"+id+"/deny", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}

	status, out := deny("member-token", "act_1", `{"reason": "not on main"}`)
	if status != http.StatusOK {
		t.Fatalf("deny: %d %v", status, out)
	}
	if len(denied) != 1 || denied[0] != (denial{"act_1", ana.ID, "not on main"}) {
		t.Fatalf("Deny was called with %+v", denied)
	}
	a, _ := out["action"].(map[string]any)
	if a["id"] != "act_1" || a["status"] != string(brabo.StatusDenied) || a["reason"] != "not on main" {
		t.Fatalf("the answer is not what Deny returned: %v", out)
	}
	if a["reasonText"] != "denied by ana: not on main" || out["outcome"] != "denied" {
		t.Fatalf("the answer's sentence or outcome: %v", out)
	}

	if status, out := deny("agent-token", "act_2", `{"reason": "self-denial"}`); status != http.StatusForbidden || out["code"] != string(brabo.CodeForbiddenRole) {
		t.Fatalf("an agent denying: %d %v", status, out)
	}
	if len(denied) != 1 {
		t.Fatalf("an agent's denial reached the service: %+v", denied)
	}

	if status, out := deny("member-token", "act_done", `{"reason": "again"}`); status != http.StatusConflict || out["code"] != string(brabo.CodeActionAlreadyDenied) {
		t.Fatalf("Deny's refusal: %d %v", status, out)
	}
	if status, _ := deny("nobody", "act_1", `{"reason": "x"}`); status != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d", status)
	}
}
