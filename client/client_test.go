package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

// An API answer is an *Error with the API's code and status; an answer
// that is not brabo's keeps its status and body; no answer at all is an
// *UnreachableError naming the server. Callers branch on these types, so
// each must come out as its own.
func TestErrorsAreTyped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("Authorization %q", r.Header.Get("Authorization"))
		}
		switch r.URL.Path {
		case "/v1/actions/act_1/approve":
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]string{"code": "forbidden_role", "message": "a viewer decides nothing"})
		default:
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("upstream gone\n"))
		}
	}))
	defer srv.Close()
	c := client.New(srv.URL+"/", "tok")
	_, err := c.Approve(context.Background(), "act_1", "r1.x", false)
	var e *client.Error
	if !errors.As(err, &e) || e.Code != brabo.CodeForbiddenRole || e.Status != 403 || client.CodeOf(err) != brabo.CodeForbiddenRole {
		t.Fatalf("approve: %#v", err)
	}
	if client.Retryable(err) {
		t.Error("a 403 is retryable")
	}
	_, err = c.Queue(context.Background(), 10)
	if client.StatusOf(err) != 502 || client.CodeOf(err) != "" || !client.Retryable(err) || e.Error() == err.Error() {
		t.Fatalf("queue through a proxy that lost brabo: %v", err)
	}
	srv.Close()
	_, err = c.Projects(context.Background())
	var ue *client.UnreachableError
	if !errors.As(err, &ue) || ue.Base != srv.URL || !client.Retryable(err) {
		t.Fatalf("a stopped server: %#v", err)
	}
}

// A wait asks again through a brabo that stops (503) and returns the
// decision taken after; a wait whose deadline passes abandons the action
// with the reason given, and returns it as brabo answered the abandon.
func TestWaitRetriesAndAbandons(t *testing.T) {
	var polls atomic.Int32
	var abandoned atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/actions/act_ok/wait":
			if polls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				json.NewEncoder(w).Encode(map[string]string{"code": "retry", "message": "brabo is stopping"})
				return
			}
			json.NewEncoder(w).Encode(brabo.ProposedAction{ID: "act_ok", Status: brabo.StatusApproved})
		case "/v1/actions/act_late/wait":
			json.NewEncoder(w).Encode(brabo.ProposedAction{ID: "act_late", Status: brabo.StatusPending})
		case "/v1/actions/act_late/abandon":
			var body map[string]string
			json.NewDecoder(r.Body).Decode(&body)
			abandoned.Store(body["reason"])
			json.NewEncoder(w).Encode(brabo.ProposedAction{ID: "act_late", Status: brabo.StatusAbandoned})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := client.New(srv.URL, "tok")
	a, err := c.Wait(context.Background(), &brabo.ProposedAction{ID: "act_ok", Status: brabo.StatusPending},
		client.WaitOptions{Deadline: time.Now().Add(5 * time.Second), Poll: 100 * time.Millisecond})
	if err != nil || a.Status != brabo.StatusApproved || polls.Load() != 2 {
		t.Fatalf("wait through a restart: %v %v after %d polls", a, err, polls.Load())
	}
	a, err = c.Wait(context.Background(), &brabo.ProposedAction{ID: "act_late", Status: brabo.StatusPending},
		client.WaitOptions{Deadline: time.Now().Add(300 * time.Millisecond), Poll: 50 * time.Millisecond, GiveUp: "too late"})
	if err != nil || a.Status != brabo.StatusAbandoned || abandoned.Load() != "too late" {
		t.Fatalf("wait past its deadline: %v %v, abandoned with %v", a, err, abandoned.Load())
	}
}
