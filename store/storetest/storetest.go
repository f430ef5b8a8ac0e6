// Package storetest is the contract every brabo.Store passes: one suite,
// run by store/sqlite against a real file and by store/postgres against a
// real server.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// Opener returns a new, empty store for one test; the test closes it.
type Opener func(t *testing.T) brabo.Store

// Run runs the contract suite.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s brabo.Store)
	}{
		{"ProjectsMembersRoles", testProjectsMembersRoles},
		{"AgentsAndAutonomy", testAgentsAndAutonomy},
		{"ActionRoundTripAndFilter", testActionRoundTrip},
		{"TransitionIsConditional", testTransitionConditional},
		{"ConcurrentClaimHasOneWinner", testConcurrentClaim},
		{"EventsNumberedWithoutGaps", testEventsNumbered},
		{"FailedUpdateWritesNothing", testRollback},
		{"ConcurrentFailuresRollBackAlone", testConcurrentFailures},
		{"OutboxLeaseAndDelivery", testOutbox},
		{"PullRequestsAndLiveMerge", testPullRequests},
		{"SubscribeSignalsAfterCommit", testSubscribe},
		{"NotFound", testNotFound},
		{"Tasks", testTasks},
		{"RunsSuspendAndClaim", testRunsSuspendAndClaim},
		{"AgentLeases", testAgentLeases},
		{"AgentLeasesInBulk", testAgentLeasesInBulk},
		{"OutboxForLeaseHolder", testOutboxForLeaseHolder},
		{"ProjectProcesses", testProjectProcesses},
		{"InstancesAndRunning", testInstancesAndRunning},
		{"TokenRevocation", testTokenRevocation},
		{"Admins", testAdmins},
		{"Sessions", testSessions},
		{"CountAndPages", testCountAndPages},
		{"PendingOfAgent", testPendingOfAgent},
		{"AgentPatterns", testAgentPatterns},
		{"EventsOfType", testEventsOfType},
		{"PermissionsTrust", testPermissionsTrust},
		{"PermissionsTrustLock", testPermissionsTrustLock},
		{"ExternalExecution", testExternalExecution},
		{"ExpiredWaits", testExpiredWaits},
		{"PreviewTextFilterActionEvents", testPreviewTextFilter},
		{"Webhooks", testWebhooks},
		{"ExecutorState", testExecutorState},
		{"ProjectAgents", testProjectAgents},
		{"ClaimTaskWithin", testClaimTaskWithin},
		{"RunDeadlines", testRunDeadlines},
		{"WaitingAgents", testWaitingAgents},
		{"ViewLatest", testViewLatest},
		{"InfraAgent", testInfraAgent},
		{"NotRun", testNotRun},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var seq atomic.Int64

func id(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), seq.Add(1))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixture creates a member and a project it owns.
func fixture(t *testing.T, s brabo.Store) (*brabo.Member, *brabo.Project) {
	t.Helper()
	ctx := context.Background()
	m := &brabo.Member{ID: id("mem"), Name: "ana", TokenHash: id("hash"), CreatedAt: time.Now().UTC()}
	p := &brabo.Project{ID: id("prj"), Slug: id("slug"), Name: "Shop", Mode: brabo.ModeLocal,
		Root: "/srv/shop", WorkspaceDir: "shop-12345678", OwnerID: m.ID, CreatedAt: time.Now().UTC()}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Owner})
	}))
	return m, p
}

func newAction(p *brabo.Project, actor string) *brabo.ProposedAction {
	return &brabo.ProposedAction{
		ID: id("act"), ProjectID: p.ID, Type: brabo.Terminal,
		Payload: brabo.Payload{Command: "pnpm test", Cwd: "."},
		ActorID: actor, ActorKind: "agent", PrincipalID: p.OwnerID,
		Status: brabo.StatusPending, Reason: "default: no rule approves it",
		Decision:  brabo.Decision{Policy: brabo.RequireApproval, Reason: "default: no rule approves it"},
		CreatedAt: time.Now().UTC(),
	}
}

func testProjectsMembersRoles(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Project(ctx, p.ID)
		if err != nil {
			return err
		}
		if got.Slug != p.Slug || got.Mode != brabo.ModeLocal || got.Root != "/srv/shop" || got.OwnerID != m.ID || got.ContainerRunning {
			t.Errorf("project round trip: got %+v", got)
		}
		byHash, err := tx.MemberByTokenHash(ctx, m.TokenHash)
		if err != nil || byHash.ID != m.ID {
			t.Errorf("member by token hash: %v %v", byHash, err)
		}
		role, err := tx.Role(ctx, p.ID, m.ID)
		if err != nil || role != brabo.Owner {
			t.Errorf("role = %q, %v; want owner", role, err)
		}
		none, err := tx.Role(ctx, p.ID, "someone-else")
		if err != nil || none != "" {
			t.Errorf("role of a stranger = %q, %v; want none", none, err)
		}
		n, err := tx.CountMembers(ctx)
		if err != nil || n != 1 {
			t.Errorf("CountMembers = %d, %v", n, err)
		}
		return nil
	}))
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.SetContainerRunning(ctx, p.ID, true); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Developer})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, _ := tx.Project(ctx, p.ID)
		if !got.ContainerRunning {
			t.Error("container_running did not change")
		}
		role, _ := tx.Role(ctx, p.ID, m.ID)
		if role != brabo.Developer {
			t.Errorf("SetRole did not replace the role: %q", role)
		}
		ms, err := tx.Memberships(ctx, m.ID)
		if err != nil || len(ms) != 1 {
			t.Errorf("memberships = %v, %v", ms, err)
		}
		return nil
	}))
	// A second project with the same slug is a conflict.
	err := s.Update(ctx, func(tx brabo.Tx) error {
		dup := *p
		dup.ID = id("prj")
		return tx.CreateProject(ctx, &dup)
	})
	if !errors.Is(err, brabo.ErrConflict) {
		t.Errorf("duplicate slug: err = %v, want ErrConflict", err)
	}
}

func testAgentsAndAutonomy(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	a := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "dev-api", PrincipalID: m.ID, TokenHash: id("agh"), CreatedAt: time.Now().UTC()}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, a); err != nil {
			return err
		}
		if err := tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.AnyActionType, Mode: brabo.AutoApprove}); err != nil {
			return err
		}
		if err := tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.Terminal, Mode: brabo.RequireApproval}); err != nil {
			return err
		}
		// Writing the same key again replaces the mode.
		return tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.Terminal, Mode: brabo.Deny})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		f, err := tx.ProposalFacts(ctx, p.ID, m.ID, a.ID, brabo.Terminal)
		if err != nil {
			return err
		}
		if f.Project.ID != p.ID || f.Owner.ID != m.ID || f.Role != brabo.Owner || f.Specific != brabo.Deny || f.Wildcard != brabo.AutoApprove {
			t.Errorf("ProposalFacts for terminal: %+v", f)
		}
		f, err = tx.ProposalFacts(ctx, p.ID, "stranger", a.ID, brabo.GitPush)
		if err != nil {
			return err
		}
		if f.Role != "" || f.Specific != "" || f.Wildcard != brabo.AutoApprove {
			t.Errorf("ProposalFacts for a stranger's git_push: role %q specific %q wildcard %q", f.Role, f.Specific, f.Wildcard)
		}
		f, err = tx.ProposalFacts(ctx, p.ID, m.ID, "", brabo.Terminal)
		if err != nil || f.Specific != "" || f.Wildcard != "" {
			t.Errorf("ProposalFacts without an agent: %+v %v", f, err)
		}
		if _, err := tx.ProposalFacts(ctx, "nope", m.ID, "", brabo.Terminal); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("ProposalFacts of a missing project: %v", err)
		}
		got, err := tx.AgentByTokenHash(ctx, a.TokenHash)
		if err != nil || got.ID != a.ID || got.PrincipalID != m.ID || !got.IsModuleDev() {
			t.Errorf("agent by token: %+v %v", got, err)
		}
		rules, err := tx.Autonomy(ctx, a.ID)
		if err != nil {
			return err
		}
		want := map[brabo.ActionType]brabo.Policy{brabo.AnyActionType: brabo.AutoApprove, brabo.Terminal: brabo.Deny}
		if len(rules) != 2 {
			t.Fatalf("autonomy = %+v, want 2 rules", rules)
		}
		for _, r := range rules {
			if want[r.ActionType] != r.Mode {
				t.Errorf("autonomy %s = %s, want %s", r.ActionType, r.Mode, want[r.ActionType])
			}
		}
		list, err := tx.Agents(ctx, p.ID)
		if err != nil || len(list) != 1 {
			t.Errorf("agents = %v, %v", list, err)
		}
		return nil
	}))
}

func testActionRoundTrip(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	a := newAction(p, "agt_1")
	a.Decision.Segments = []brabo.Segment{{Text: "pnpm test", Tokens: []string{"pnpm", "test"}, Verdict: brabo.VerdictNoRule, Rule: "no rule"}}
	b := newAction(p, "agt_2")
	b.Type, b.Status = brabo.GitCommit, brabo.StatusAutoApproved
	b.CreatedAt = a.CreatedAt.Add(time.Second)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.InsertAction(ctx, a); err != nil {
			return err
		}
		return tx.InsertAction(ctx, b)
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Action(ctx, a.ID)
		if err != nil {
			return err
		}
		if got.Payload.Command != "pnpm test" || got.Status != brabo.StatusPending || got.DecidedBy != "" ||
			len(got.Decision.Segments) != 1 || got.Decision.Segments[0].Tokens[1] != "test" || got.Result != nil {
			t.Errorf("action round trip: %+v", got)
		}
		if !got.CreatedAt.Equal(a.CreatedAt.Truncate(time.Microsecond)) {
			t.Errorf("created_at %v, want %v", got.CreatedAt, a.CreatedAt)
		}
		pending, err := tx.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID}, Status: brabo.StatusPending})
		if err != nil || len(pending) != 1 || pending[0].ID != a.ID {
			t.Errorf("pending filter: %v %v", pending, err)
		}
		all, err := tx.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID}})
		if err != nil || len(all) != 2 || all[0].ID != b.ID {
			t.Errorf("all, newest first: %v %v", all, err)
		}
		byActor, _ := tx.Actions(ctx, brabo.ActionFilter{ActorID: "agt_2"})
		if len(byActor) != 1 || byActor[0].ID != b.ID {
			t.Errorf("actor filter: %v", byActor)
		}
		byType, _ := tx.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID}, Type: brabo.GitCommit})
		if len(byType) != 1 {
			t.Errorf("type filter: %v", byType)
		}
		other, _ := tx.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{"elsewhere"}})
		if len(other) != 0 {
			t.Errorf("another project's filter found %d", len(other))
		}
		return nil
	}))
}

func testTransitionConditional(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	a := newAction(p, "agt_1")
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.InsertAction(ctx, a) }))
	now := time.Now().UTC()
	var moved, again bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		moved, err = tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
			brabo.ActionUpdate{Status: brabo.StatusApproved, DecidedBy: m.ID, DecidedAt: now})
		if err != nil {
			return err
		}
		again, err = tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
			brabo.ActionUpdate{Status: brabo.StatusDenied, Reason: "late"})
		return err
	}))
	if !moved || again {
		t.Fatalf("pending→approved moved=%v, then pending→denied moved=%v; want true, false", moved, again)
	}
	res := &brabo.Result{ExitCode: 0, Output: "ok\n", Detail: map[string]string{"k": "v"}}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusApproved},
			brabo.ActionUpdate{Status: brabo.StatusExecuted, Result: res, SettledAt: now})
		if !ok {
			t.Error("approved→executed did not move")
		}
		return err
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Action(ctx, a.ID)
		if err != nil {
			return err
		}
		if got.Status != brabo.StatusExecuted || got.DecidedBy != m.ID || got.Result == nil ||
			got.Result.Output != "ok\n" || got.Result.Detail["k"] != "v" || got.SettledAt.IsZero() || got.DecidedAt.IsZero() {
			t.Errorf("after transitions: %+v", got)
		}
		if got.Reason != a.Reason {
			t.Errorf("reason changed to %q although the update left it empty", got.Reason)
		}
		return nil
	}))
}

func testConcurrentClaim(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	a := newAction(p, "agt_1")
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.InsertAction(ctx, a) }))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := s.Update(ctx, func(tx brabo.Tx) error {
				ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
					brabo.ActionUpdate{Status: brabo.StatusApproved, DecidedBy: fmt.Sprint("m", i)})
				if ok {
					wins.Add(1)
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims won, want exactly 1", wins.Load())
	}
}

func testEventsNumbered(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Update(ctx, func(tx brabo.Tx) error {
					return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionCreated,
						ActorID: "agt_1", ActionID: "act_x", Payload: json.RawMessage(`{"status":"pending"}`)})
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		evs, err := tx.Events(ctx, p.ID, 0, 0)
		if err != nil {
			return err
		}
		if len(evs) != writers*each {
			t.Fatalf("%d events, want %d", len(evs), writers*each)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d: the log has a gap or a repeat", i, e.Seq)
			}
		}
		var payload map[string]string
		if err := json.Unmarshal(evs[0].Payload, &payload); err != nil || payload["status"] != "pending" {
			t.Errorf("payload round trip: %s", evs[0].Payload)
		}
		after, _ := tx.Events(ctx, p.ID, 75, 3)
		if len(after) != 3 || after[0].Seq != 76 {
			t.Errorf("events after 75, limit 3: %v", after)
		}
		if last, err := tx.LastEventSeq(ctx, p.ID); err != nil || last != writers*each {
			t.Errorf("LastEventSeq = %d, %v; want %d", last, err, writers*each)
		}
		if last, err := tx.LastEventSeq(ctx, "no-such-project"); err != nil || last != 0 {
			t.Errorf("LastEventSeq of an empty log = %d, %v; want 0", last, err)
		}
		return nil
	}))
}

func testRollback(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	a := newAction(p, "agt_1")
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.InsertAction(ctx, a); err != nil {
			return err
		}
		if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionCreated, ActorID: "agt_1"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want the callback's error", err)
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if _, err := tx.Action(ctx, a.ID); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("the action of a failed transaction exists: %v", err)
		}
		evs, _ := tx.Events(ctx, p.ID, 0, 0)
		if len(evs) != 0 {
			t.Errorf("%d events written by a failed transaction", len(evs))
		}
		return nil
	}))
	// The sequence did not advance either: the next event is 1.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		e := &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionCreated, ActorID: "agt_1"}
		if err := tx.AppendEvent(ctx, e); err != nil {
			return err
		}
		if e.Seq != 1 {
			t.Errorf("first committed event has seq %d, want 1", e.Seq)
		}
		return nil
	}))
}

func testOutbox(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for i := 0; i < 3; i++ {
			if err := tx.Enqueue(ctx, &brabo.OutboxMessage{ProjectID: p.ID, Topic: brabo.TopicActionSettled,
				ActorKey: "agent:agt_1", ActionID: fmt.Sprint("act_", i), Payload: json.RawMessage(`{"status":"executed"}`)}); err != nil {
				return err
			}
		}
		return nil
	}))
	now := time.Now()
	var first []brabo.OutboxMessage
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		first, err = tx.ClaimOutbox(ctx, now, time.Minute, 2)
		return err
	}))
	if len(first) != 2 || first[0].ActionID != "act_0" || first[1].ActionID != "act_1" || first[0].ActorKey != "agent:agt_1" {
		t.Fatalf("first claim: %+v", first)
	}
	var second []brabo.OutboxMessage
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		second, err = tx.ClaimOutbox(ctx, now, time.Minute, 10)
		return err
	}))
	if len(second) != 1 || second[0].ActionID != "act_2" {
		t.Fatalf("a leased message was claimed again: %+v", second)
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.MarkDelivered(ctx, first[0].ID, now) }))
	// After the lease runs out, the undelivered ones come back; the delivered one never.
	var third []brabo.OutboxMessage
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		third, err = tx.ClaimOutbox(ctx, now.Add(2*time.Minute), time.Minute, 10)
		return err
	}))
	if len(third) != 2 || third[0].ActionID != "act_1" || third[1].ActionID != "act_2" {
		t.Fatalf("after the lease: %+v", third)
	}
}

func testPullRequests(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	pr1 := &brabo.PullRequest{ProjectID: p.ID, Title: "Add login", Head: "feat/login", Base: "main", TaskID: "task_1"}
	pr2 := &brabo.PullRequest{ProjectID: p.ID, Title: "Fix", Head: "fix/x", Base: "dev"}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreatePR(ctx, pr1); err != nil {
			return err
		}
		return tx.CreatePR(ctx, pr2)
	}))
	if pr1.Number != 1 || pr2.Number != 2 {
		t.Fatalf("PR numbers %d, %d; want 1, 2", pr1.Number, pr2.Number)
	}
	merge := func() *brabo.ProposedAction {
		a := newAction(p, "agt_1")
		a.Type = brabo.GitMerge
		a.Payload = brabo.Payload{PR: pr1.Number, TargetBranch: "main"}
		return a
	}
	m1 := merge()
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.InsertAction(ctx, m1) }))
	err := s.Update(ctx, func(tx brabo.Tx) error { return tx.InsertAction(ctx, merge()) })
	if !errors.Is(err, brabo.ErrConflict) {
		t.Fatalf("second live merge of PR #1: err = %v, want ErrConflict", err)
	}
	// A denied proposal frees the PR for a new one.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		_, err := tx.TransitionAction(ctx, m1.ID, []brabo.ActionStatus{brabo.StatusPending}, brabo.ActionUpdate{Status: brabo.StatusDenied})
		return err
	}))
	m2 := merge()
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.InsertAction(ctx, m2) }))
	var first, second bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		if first, err = tx.MarkPRMerged(ctx, p.ID, pr1.Number, m2.ID); err != nil {
			return err
		}
		second, err = tx.MarkPRMerged(ctx, p.ID, pr1.Number, "act_other")
		return err
	}))
	if !first || second {
		t.Fatalf("MarkPRMerged: first=%v second=%v; want true, false", first, second)
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.PR(ctx, p.ID, pr1.Number)
		if err != nil {
			return err
		}
		if got.State != brabo.PRMerged || got.MergedBy != m2.ID || got.TaskID != "task_1" || got.Head != "feat/login" {
			t.Errorf("merged PR: %+v", got)
		}
		ms, err := tx.MergeActions(ctx, p.ID, pr1.Number)
		if err != nil || len(ms) != 2 {
			t.Errorf("merge actions of PR #1: %d, %v", len(ms), err)
		}
		all, _ := tx.PRs(ctx, p.ID)
		if len(all) != 2 {
			t.Errorf("PRs = %d", len(all))
		}
		return nil
	}))
}

func testSubscribe(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	ch, cancel := s.Subscribe(p.ID)
	defer cancel()
	all, cancelAll := s.Subscribe("")
	defer cancelAll()
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionCreated, ActorID: "agt_1"})
	}))
	for name, c := range map[string]<-chan struct{}{"project": ch, "all": all} {
		select {
		case <-c:
		case <-time.After(5 * time.Second):
			t.Errorf("the %s subscription got no signal after a commit", name)
		}
	}
	// A failed transaction signals nothing. Signals are coalesced hints, and
	// a store may echo its own commit once more (PostgreSQL hears its own
	// NOTIFY): let the echoes of the commit above arrive and drain them first.
	drain := time.After(500 * time.Millisecond)
	for draining := true; draining; {
		select {
		case <-ch:
		case <-drain:
			draining = false
		}
	}
	_ = s.Update(ctx, func(tx brabo.Tx) error {
		_ = tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionCreated, ActorID: "agt_1"})
		return errors.New("no")
	})
	select {
	case <-ch:
		t.Error("a rolled-back transaction signalled subscribers")
	case <-time.After(300 * time.Millisecond):
	}
}

func testNotFound(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if _, err := tx.Project(ctx, "nope"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("Project: %v", err)
		}
		if _, err := tx.Action(ctx, "nope"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("Action: %v", err)
		}
		if _, err := tx.MemberByTokenHash(ctx, "nope"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("MemberByTokenHash: %v", err)
		}
		if _, err := tx.AgentByTokenHash(ctx, "nope"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("AgentByTokenHash: %v", err)
		}
		if _, err := tx.PR(ctx, "nope", 1); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("PR: %v", err)
		}
		return nil
	}))
	err := s.Update(ctx, func(tx brabo.Tx) error {
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "nope", Type: "x", ActorID: "y"})
	})
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("AppendEvent to a missing project: %v", err)
	}
}

// Concurrent updates may share a commit (group commit on SQLite): a
// failing one must still be rolled back alone, and the others kept.
func testConcurrentFailures(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	const n = 40
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		a := newAction(p, fmt.Sprint("agt_", i))
		ids[i] = a.ID
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := s.Update(ctx, func(tx brabo.Tx) error {
				if err := tx.InsertAction(ctx, a); err != nil {
					return err
				}
				if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionCreated, ActorID: a.ActorID, ActionID: a.ID}); err != nil {
					return err
				}
				if i%2 == 1 {
					return errors.New("odd ones fail")
				}
				return nil
			})
			if (err != nil) != (i%2 == 1) {
				t.Errorf("update %d: err = %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		for i, id := range ids {
			_, err := tx.Action(ctx, id)
			if i%2 == 0 && err != nil {
				t.Errorf("committed action %d is missing: %v", i, err)
			}
			if i%2 == 1 && !errors.Is(err, brabo.ErrNotFound) {
				t.Errorf("failed action %d exists: %v", i, err)
			}
		}
		evs, err := tx.Events(ctx, p.ID, 0, 0)
		if err != nil {
			return err
		}
		if len(evs) != n/2 {
			t.Errorf("%d events, want %d", len(evs), n/2)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d: a failed update left a gap", i, e.Seq)
			}
		}
		return nil
	}))
}
