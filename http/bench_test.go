package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/cputime"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
	"github.com/brabo-dev/brabo/store/storetest"
)

// noExecution settles every action at once without running anything: the
// benchmark measures deciding and recording, not the commands.
type noExecution struct{}

func (noExecution) Execute(context.Context, brabo.ExecRequest) (*brabo.Result, error) {
	return &brabo.Result{}, nil
}

// BenchmarkProposeHTTP measures auto-approved proposals per second through
// the real HTTP server with 16 concurrent clients and no execution: decide,
// record the action and its created event, settle. The command that
// reproduces it is in docs/PERFORMANCE.md.
func BenchmarkProposeHTTP(b *testing.B) {
	forEachStore(b, func(b *testing.B, s brabo.Store) {
		bs := benchServer(b, s)
		b.ReportAllocs()
		post16(b, bs.client, bs.url, bs.agent, benchBody, "proposals/s")
	})
}

// BenchmarkProposalWrites is the like-for-like floor of BenchmarkProposeHTTP
// on the database: the same 16 clients making, per proposal, the same two
// Update transactions the pipeline makes (the action and its created
// event; the settlement and its executed event), with rows copied from a
// real proposal, but no HTTP, no authentication, no policy and no JSON
// answer: what the proposal's writes alone allow. The like-for-like floor
// of ProposeHTTP is BenchmarkProposalWritesHTTP, which adds the HTTP
// exchange a proposal cannot go without (docs/PERFORMANCE.md, "Issue 16").
func BenchmarkProposalWrites(b *testing.B) {
	forEachStore(b, func(b *testing.B, s brabo.Store) {
		ctx := context.Background()
		bs := benchServer(b, s)
		b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
		b.ReportAllocs()
		b.ResetTimer()
		start, cpu := time.Now(), cputime.Used()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := bs.proposalWrites(ctx, s); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "proposals/s")
		b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-us/op")
	})
}

// BenchmarkProposalWritesHTTP is BenchmarkProposalWrites behind the same
// HTTP exchange as BenchmarkProposeHTTP: the same 16 clients post the same
// body to a handler that reads it, makes the proposal's two transactions
// and answers a body of the size a proposal's answer has. It is the floor
// of BenchmarkProposeHTTP made of only what a proposal cannot go without
// (its HTTP exchange and its writes), running on the same cores in the
// same way, so ProposeHTTP over it is what the pipeline's own work
// (authentication, the facts read, the policy, permissions.json, the
// integrity snapshot, JSON, logging) costs (docs/PERFORMANCE.md).
func BenchmarkProposalWritesHTTP(b *testing.B) {
	forEachStore(b, func(b *testing.B, s brabo.Store) {
		bs := benchServer(b, s)
		answer := bytes.Repeat([]byte("x"), 971) // a proposal's answer in BenchmarkProposeHTTP
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if err := bs.proposalWrites(r.Context(), s); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			w.Write(answer)
		}))
		defer srv.Close()
		b.ReportAllocs()
		post16(b, bs.client, srv.URL+"/v1/projects/p/actions", bs.agent, benchBody, "proposals/s")
	})
}

// proposalWrites makes, for one new action copied from the first
// proposal, the two Update transactions a proposal makes: the action and
// its created event; the settlement and its executed event.
func (bs *benchSetup) proposalWrites(ctx context.Context, s brabo.Store) error {
	a := *bs.first
	a.ID, a.Status, a.Result, a.CreatedAt, a.SettledAt = brabo.NewID("act"), brabo.StatusAutoApproved, nil, time.Now(), time.Time{}
	err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.InsertAction(ctx, &a); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventActionCreated,
			ActorID: a.ActorID, ActionID: a.ID, Payload: bs.created, CreatedAt: a.CreatedAt})
	})
	if err != nil {
		return err
	}
	now := time.Now()
	return s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusAutoApproved},
			brabo.ActionUpdate{Status: brabo.StatusExecuted, Result: &brabo.Result{}, SettledAt: now})
		if err != nil || !ok {
			return fmt.Errorf("settle %s: %v %v", a.ID, ok, err)
		}
		if err := tx.FinishRunning(ctx, a.ID); err != nil { // as settle does
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventActionExecuted,
			ActorID: brabo.SystemActor, ActionID: a.ID, Payload: bs.settled, CreatedAt: now})
	})
}

// forEachStore runs bench on a fresh SQLite file and on a fresh
// PostgreSQL schema (skipped without BRABO_TEST_POSTGRES).
func forEachStore(b *testing.B, bench func(*testing.B, brabo.Store)) {
	b.Run("sqlite", func(b *testing.B) {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "brabo.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		bench(b, s)
	})
	b.Run("postgres", func(b *testing.B) {
		s, err := postgres.Open(context.Background(), storetest.PostgresURL(b))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		bench(b, s)
	})
}

// benchSetup is a running API with a project whose permissions.json
// allows the benchmark's command, an agent, and one proposal already made.
type benchSetup struct {
	url    string // where the agent proposes
	agent  string // the agent's token
	client *http.Client
	// first is the first proposal as the store holds it, and created and
	// settled the payloads of its created and executed events.
	first            *brabo.ProposedAction
	created, settled json.RawMessage
}

// benchServer starts the real HTTP server on s and makes the first
// proposal.
func benchServer(b *testing.B, s brabo.Store) *benchSetup {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := &pipeline.Service{Store: s, Executor: noExecution{}, WorkspacesRoot: b.TempDir(), Log: quiet}
	api := (&brabohttp.Server{DirProbe: probeDir, Log: quiet}).Use(svc)
	srv := httptest.NewServer(api.Handler())
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	admin, err := svc.Bootstrap(context.Background(), "admin")
	if err != nil {
		b.Fatal(err)
	}
	call := func(method, path, token, body string, want int) map[string]any {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			b.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	project := call("POST", "/v1/projects", admin, `{"slug":"bench","mode":"local","root":"`+b.TempDir()+`"}`, 201)["id"].(string)
	agent := call("POST", "/v1/projects/"+project+"/agents", admin, `{"name":"coder"}`, 201)["token"].(string)
	call("PUT", "/v1/projects/"+project+"/permissions", admin, `{"allow":["Terminal(pnpm test)"]}`, 200)
	bs := &benchSetup{url: srv.URL + "/v1/projects/" + project + "/actions", agent: agent, client: client}
	id := call("POST", "/v1/projects/"+project+"/actions", agent, string(benchBody), 201)["id"].(string)
	ctx := context.Background()
	err = s.View(ctx, func(tx brabo.Tx) error {
		var err error
		if bs.first, err = tx.Action(ctx, id); err != nil {
			return err
		}
		evs, err := tx.Events(ctx, project, 0, 1000)
		for _, e := range evs {
			switch {
			case e.ActionID != id:
			case e.Type == brabo.EventActionCreated:
				bs.created = e.Payload
			case e.Type == brabo.EventActionExecuted:
				bs.settled = e.Payload
			}
		}
		return err
	})
	if err != nil || bs.first.Status != brabo.StatusExecuted || bs.created == nil || bs.settled == nil {
		b.Fatalf("the first proposal: %+v, created %s, settled %s: %v", bs.first, bs.created, bs.settled, err)
	}
	return bs
}

// benchBody is what every benchmark client posts: a proposal.
var benchBody = []byte(`{"type":"terminal","payload":{"command":"cd src && pnpm test --filter api"}}`)

// post16 posts body to url from 16 concurrent clients until b.N requests
// were answered 201, and reports their rate (named rate) and the CPU the
// process used per request.
func post16(b *testing.B, client *http.Client, url, token string, body []byte, rate string) {
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start, cpu := time.Now(), cputime.Used()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), rate)
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-us/op")
}

// BenchmarkHTTPFloor is what the same 16 clients reach against a handler
// that does nothing but read the request and answer a body of the size a
// proposal's answer has: the HTTP part of BenchmarkProposeHTTP alone, with
// no store, no policy and no JSON. It bounds what any proposal rate can be
// on this machine (docs/PERFORMANCE.md).
func BenchmarkHTTPFloor(b *testing.B) {
	answer := bytes.Repeat([]byte("x"), 971) // a proposal's answer in BenchmarkProposeHTTP
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(answer)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post16(b, client, srv.URL+"/v1/projects/p/actions", "token", benchBody, "requests/s")
}

// probeDir is the server's check of a project folder: a directory brabo
// can write in.
func probeDir(path string) (bool, bool, error) {
	info, err := os.Stat(path)
	if err != nil {
		return false, false, nil
	}
	if !info.IsDir() {
		return false, false, nil
	}
	f, err := os.CreateTemp(path, ".probe-*")
	if err != nil {
		return true, false, nil
	}
	f.Close()
	os.Remove(f.Name())
	return true, true, nil
}
