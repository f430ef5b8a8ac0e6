package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/notify"
	"github.com/brabo-dev/brabo/store/sqlite"
)

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

type receiver struct {
	mu   sync.Mutex
	got  []received
	code int
	srv  *httptest.Server
}

func newReceiver(t *testing.T, code int) *receiver {
	r := &receiver{code: code}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: b, at: time.Now()})
		r.mu.Unlock()
		w.WriteHeader(r.code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) wait(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		if len(r.got) >= n {
			out := append([]received(nil), r.got...)
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d messages, want %d", len(r.got), n)
	return nil
}

func world(t *testing.T) (brabo.Store, *brabo.Project, *brabo.ProposedAction) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	m := &brabo.Member{ID: "mem_1", Name: "ana", TokenHash: "h", CreatedAt: now}
	p := &brabo.Project{ID: "prj_1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: "/srv/shop",
		WorkspaceDir: "shop-1", OwnerID: m.ID, CreatedAt: now}
	ag := &brabo.Agent{ID: "agt_1", ProjectID: p.ID, Name: "ci-bot", PrincipalID: m.ID, TokenHash: "a", CreatedAt: now}
	must(t, st.Update(ctx, func(tx brabo.Tx) error {
		must(t, tx.CreateMember(ctx, m))
		must(t, tx.CreateProject(ctx, p))
		return tx.CreateAgent(ctx, ag)
	}))
	a := &brabo.ProposedAction{ID: "act_1", ProjectID: p.ID, Type: brabo.WriteFile, ActorID: ag.ID, ActorKind: "agent",
		Payload: brabo.Payload{Path: "Makefile", Content: "SECRET-CONTENT"}, Status: brabo.StatusPending, Reason: "default: no rule approves it",
		Preview: &brabo.Preview{NeedRole: brabo.Developer, Flags: []brabo.Flag{{Kind: brabo.FlagNetwork, What: "curl"}},
			Diff: &brabo.FileDiff{Path: "Makefile", Unified: "@@ -1 +1,2 @@\n+\tcurl x | sh\n"}}, CreatedAt: now}
	return st, p, a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestNotifyFormatsAndSignature(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, p, a := world(t)
	js, slack, ntfy, details := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 204), newReceiver(t, 200)
	must(t, st.Update(ctx, func(tx brabo.Tx) error {
		must(t, tx.SetWebhookSecret(ctx, p.ID, "whsec_test", time.Now()))
		return tx.SetWebhooks(ctx, p.ID, []*brabo.Webhook{
			{ID: "w1", URL: js.srv.URL + "/hook", Format: brabo.FormatJSON, CreatedBy: "mem_1", CreatedAt: time.Now()},
			{ID: "w2", URL: slack.srv.URL, Format: brabo.FormatSlack, CreatedBy: "mem_1", CreatedAt: time.Now()},
			{ID: "w3", URL: ntfy.srv.URL + "/topic", Format: brabo.FormatNtfy, CreatedBy: "mem_1", CreatedAt: time.Now()},
			{ID: "w4", URL: details.srv.URL, Format: brabo.FormatJSON, Details: true, CreatedBy: "mem_1", CreatedAt: time.Now()},
		})
	}))
	n := notify.New(st, "http://brabo.test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	wait := n.Start(ctx)
	defer func() { cancel(); wait() }()
	start := time.Now()
	n.Notify(brabo.Notice{Kind: brabo.NoticeWaiting, Action: a})
	got := js.wait(t, 1)[0]
	if d := got.at.Sub(start); d > time.Second {
		t.Errorf("the message came %s after the notice", d)
	}
	if err := notify.Verify("whsec_test", got.header, got.body, time.Now(), time.Minute); err != nil {
		t.Errorf("the signature: %v", err)
	}
	if err := notify.Verify("other", got.header, got.body, time.Now(), time.Minute); err == nil {
		t.Error("another secret verifies")
	}
	var m notify.JSONMessage
	must(t, json.Unmarshal(got.body, &m))
	if m.Event != brabo.NoticeWaiting || m.Project.Slug != "shop" || m.Action.Agent != "ci-bot" || m.Action.URL != "http://brabo.test/ui/actions/act_1" ||
		m.Action.Subject != "Makefile" || len(m.Action.Flags) != 1 || m.Diff != "" || m.Output != "" {
		t.Errorf("the json message: %s", got.body)
	}
	for _, r := range []*receiver{js, slack, ntfy} {
		if b := string(r.wait(t, 1)[0].body); strings.Contains(b, "curl x | sh") || strings.Contains(b, "SECRET-CONTENT") {
			t.Errorf("details off, and the message holds the diff: %s", b)
		}
	}
	if b := string(slack.wait(t, 1)[0].body); !strings.Contains(b, "waits for a human") || !strings.Contains(b, "http://brabo.test/ui/actions/act_1|Open the action") {
		t.Errorf("the slack message: %s", b)
	}
	nt := ntfy.wait(t, 1)[0]
	if nt.header.Get("Click") != "http://brabo.test/ui/actions/act_1" || !strings.Contains(nt.header.Get("Title"), "waits for a human") ||
		!strings.Contains(string(nt.body), "Touches: the network") {
		t.Errorf("the ntfy message: %v %s", nt.header, nt.body)
	}
	if b := string(details.wait(t, 1)[0].body); !strings.Contains(b, "curl x | sh") {
		t.Errorf("details on, and no diff: %s", b)
	}
	// The decision.
	d := *a
	d.Status, d.DecidedBy, d.Result = brabo.StatusFailed, "mem_1", &brabo.Result{ExitCode: 3, Output: "boom"}
	n.Notify(brabo.Notice{Kind: brabo.NoticeDecided, Action: &d})
	got = js.wait(t, 2)[1]
	must(t, json.Unmarshal(got.body, &m))
	if m.Event != brabo.NoticeDecided || m.Action.DecidedBy != "ana" || m.Action.ExitCode == nil || *m.Action.ExitCode != 3 ||
		!strings.Contains(m.Action.Outcome, "FAILED") || m.Output != "" {
		t.Errorf("the decided message: %s", got.body)
	}
	if b := string(details.wait(t, 2)[1].body); !strings.Contains(b, `"output":"boom"`) {
		t.Errorf("details on, and no output: %s", b)
	}
}

func TestNotifyFailureIsRecorded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, p, a := world(t)
	bad := newReceiver(t, 500)
	gone := newReceiver(t, 404)
	must(t, st.Update(ctx, func(tx brabo.Tx) error {
		return tx.SetWebhooks(ctx, p.ID, []*brabo.Webhook{
			{ID: "w1", URL: bad.srv.URL + "/secret-path", Format: brabo.FormatSlack, CreatedBy: "mem_1", CreatedAt: time.Now()},
			{ID: "w2", URL: gone.srv.URL, Format: brabo.FormatNtfy, CreatedBy: "mem_1", CreatedAt: time.Now()},
		})
	}))
	n := notify.New(st, "http://brabo.test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	n.Backoff = 10 * time.Millisecond
	wait := n.Start(ctx)
	defer func() { cancel(); wait() }()
	n.Notify(brabo.Notice{Kind: brabo.NoticeWaiting, Action: a})
	bad.wait(t, 3) // three tries on a 5xx
	var evs []brabo.Event
	deadline := time.Now().Add(5 * time.Second)
	for len(evs) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		st.View(ctx, func(tx brabo.Tx) error {
			evs, _ = tx.EventsOfType(ctx, p.ID, brabo.EventNotifyFailed, 0, 10)
			return nil
		})
	}
	if len(evs) != 2 {
		t.Fatalf("%d notification.failed events, want 2", len(evs))
	}
	if len(gone.wait(t, 1)) != 1 {
		t.Error("a 404 was tried again")
	}
	for _, e := range evs {
		if strings.Contains(string(e.Payload), "secret-path") || e.ActionID != "act_1" {
			t.Errorf("the event: %s", e.Payload)
		}
	}
}

func TestNotifyNeverBlocks(t *testing.T) {
	st, p, a := world(t)
	ctx := context.Background()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(200 * time.Millisecond) }))
	defer slow.Close()
	must(t, st.Update(ctx, func(tx brabo.Tx) error {
		return tx.SetWebhooks(ctx, p.ID, []*brabo.Webhook{{ID: "w1", URL: slow.URL, Format: brabo.FormatJSON, CreatedBy: "mem_1", CreatedAt: time.Now()}})
	}))
	n := notify.New(st, "http://brabo.test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	// Not started: nothing drains the queue, so a Notify that waited for
	// room would wait for ever; every one returns. (The bound only ends a
	// test that hangs; how fast Notify is belongs in a benchmark.)
	queued := make(chan struct{})
	go func() {
		defer close(queued)
		for range notify.DefaultQueue * 4 {
			n.Notify(brabo.Notice{Kind: brabo.NoticeWaiting, Action: a})
		}
	}()
	select {
	case <-queued:
	case <-time.After(10 * time.Second):
		t.Fatalf("Notify blocked: %d notices into a queue of %d nobody drains did not return", notify.DefaultQueue*4, notify.DefaultQueue)
	}
	cctx, cancel := context.WithCancel(ctx)
	wait := n.Start(cctx)
	var evs []brabo.Event
	deadline := time.Now().Add(10 * time.Second)
	for len(evs) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		st.View(ctx, func(tx brabo.Tx) error {
			evs, _ = tx.EventsOfType(ctx, p.ID, brabo.EventNotifyFailed, 0, 10)
			return nil
		})
	}
	cancel()
	wait()
	if len(evs) == 0 || !strings.Contains(string(evs[0].Payload), "the queue was full") {
		t.Fatalf("the drops were not recorded: %v", evs)
	}
}
