package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// card is one approval card: everything a person needs to decide, and
// only the buttons they may use.
type card struct {
	A       *brabo.ProposedAction
	Project string // slug
	Actor   string // the proposing agent's or member's name
	// Subject is what the action would touch: the command, the path, the
	// branch, the PR.
	Subject string
	// Where is the cwd (terminal) relative to the scope root.
	Where    string
	Sentence string
	// RunBy says who runs an action brabo only decides (execution
	// external), and Unreported that it was decided and its agent has not
	// said what happened; both "" for an action brabo runs.
	RunBy      string
	Unreported bool
	// CanDecide is false for a role below the type's minimum: the card is
	// shown without buttons. CanApprove is false, too, for a role below
	// the one the decision requires (NeedRole): such a viewer may deny.
	CanDecide  bool
	CanApprove bool
	MinRole    brabo.Role
	NeedRole   brabo.Role
	// CanAlways is false for the types and commands always allow refuses
	// (the pipeline's own preview says so; the page keeps no copy of the
	// list).
	CanAlways bool
	// Error is a refusal to show on the card (a 409's sentence).
	Error string
	// Network are the connections the action's sandboxed run was refused
	// (the egress proxy); CanAllowNetwork is true for a maintainer, who may add
	// the patterns that allow them.
	Network         []brabo.NetworkRefusal
	CanAllowNetwork bool

	// Preview is the card's view of the change (brabo.Preview): computed
	// when the action was proposed, or now for one recorded before.
	Preview *brabo.Preview
	// Diff is the first lines of a write's diff a card shows (the action's
	// page shows them all: Full); DiffMore counts the rest.
	Diff     []diffLine
	DiffMore int
	// Full is true on the action's page: the whole diff, and the buttons
	// of a pending action (its decision reloads the page, as decided).
	Full bool
	// Risks are why the card is marked risky (brabo.Risks): a banner at
	// its top, first in the queue, and a second key for its one-key
	// approve.
	Risks []brabo.Risk
	// Words are the agent's own description of the call, as its hook
	// carried it: shown beside the command as the agent's, not brabo's.
	Words string
	// Now is the reason the rules in force now give a pending action, when
	// it differs from the one it was proposed with (permissions.json
	// changed since): shown, never applied.
	Now string
}

// diffLine is one line of a diff as the page shows it.
type diffLine struct {
	Class string // hunk, add, del, ctx
	Text  string
}

// cardDiffLines is how many lines of a diff a queue card shows.
const cardDiffLines = 40

// diffLines turns a unified diff into lines to show, at most n (0: all),
// and how many it left out.
func diffLines(unified string, n int) ([]diffLine, int) {
	lines := brabo.DiffLines(unified)
	more := 0
	if n > 0 && len(lines) > n {
		more, lines = len(lines)-n, lines[:n]
	}
	out := make([]diffLine, 0, len(lines))
	for _, l := range lines {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		out = append(out, diffLine{Class: c, Text: l})
	}
	return out, more
}

// queueView is the queue page's and fragment's data: one page of the
// pending actions, and how many there are in all.
type queueView struct {
	Cards []card
	// Total is the true number of pending actions the viewer may see, on
	// every page; the title and the count show it.
	Total int
	// Page is the page shown (from 1), Size the cards per page; From and
	// To number its first and last card.
	Page, Size, From, To int
	Prev, Next           int // 0 when there is none
}

// queuePageSize is how many cards a page of the queue shows: enough for a
// working session, few enough that a flood does not make the page heavy.
const queuePageSize = 100

// pendingCards reads one page of the pending actions of every project the
// member has a role in, risky first across the pages (queueOrder), newest
// first within each, and their true count.
func (s *Server) pendingCards(ctx context.Context, m *brabo.Member, page int) (queueView, error) {
	view := queueView{Page: page, Size: queuePageSize}
	actions, total, err := s.queueOrder(ctx, m, page)
	view.Total = total
	if err != nil {
		return view, err
	}
	view.Cards = make([]card, 0, len(actions))
	for _, a := range actions {
		c, err := s.cardFor(ctx, m, a)
		if err != nil {
			return view, err
		}
		view.Cards = append(view.Cards, c)
	}
	riskyFirst(view.Cards)
	if len(view.Cards) > 0 {
		view.From = (page-1)*queuePageSize + 1
		view.To = view.From + len(view.Cards) - 1
	}
	if page > 1 {
		view.Prev = min(page-1, max(1, (view.Total+queuePageSize-1)/queuePageSize))
	}
	if page*queuePageSize < view.Total {
		view.Next = page + 1
	}
	return view, nil
}

// queuePage reads the page number a queue request asks for (?page=N, 1
// when absent).
func queuePageOf(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, badRequest("page %q: want a page number from 1", v)
	}
	return n, nil
}

// cardFor builds the card of one action for one member.
func (s *Server) cardFor(ctx context.Context, m *brabo.Member, a *brabo.ProposedAction) (card, error) {
	// The scope root is shown once, in the card's list: not in the
	// sentence too.
	// A pending action's card is the card as it is now (cached by the
	// repository's state): its revision is what the approve form sends.
	a = s.Actions.CardNow(ctx, a)
	c := card{A: a, MinRole: a.Type.MinRole(), NeedRole: brabo.EffectiveRole(a.Type, a.Decision), Subject: subject(a), Where: a.Payload.Cwd,
		RunBy: runBy(a), Unreported: a.Unreported(), Preview: a.Preview, Risks: brabo.Risks(a)}
	if a.Execution != nil {
		c.Words = a.Execution.Description
	}
	if c.Preview == nil {
		// An action recorded before previews: its card as it would be now.
		c.Preview = s.previewNow(ctx, a)
	}
	// The sentence the API, the hook and the CLI give too
	// (brabo.ReasonText), with the card's flags as they are shown.
	shown := *a
	shown.Preview = c.Preview
	c.Sentence = brabo.ReasonText(&shown, s.deciderName(ctx, a, nil))
	if c.Preview != nil && c.Preview.Diff != nil {
		c.Diff, c.DiffMore = diffLines(c.Preview.Diff.Unified, cardDiffLines)
	}
	if a.Status == brabo.StatusPending {
		if now, err := s.Actions.CurrentReason(ctx, a); err == nil && now != "" && now != a.Reason {
			c.Now = brabo.DecisionSentence(brabo.StatusPending, now, brabo.ScopeRoot{})
		}
	}
	if a.Type == brabo.Terminal && c.Where == "" {
		c.Where = "."
	}
	var role brabo.Role
	err := func() error {
		p, err := s.Projects.Project(ctx, a.ProjectID)
		if err != nil {
			return err
		}
		c.Project = p.Slug
		if role, err = s.Projects.Role(ctx, a.ProjectID, m.ID); err != nil {
			return err
		}
		c.Actor = a.ActorID
		if a.ActorKind == "agent" {
			if ag, err := s.Agents.Agent(ctx, a.ActorID); err == nil {
				c.Actor = ag.Name
			}
		} else if mm, err := s.Projects.Member(ctx, a.ActorID); err == nil {
			c.Actor = mm.Name
		}
		return nil
	}()
	if err != nil {
		return c, err
	}
	c.CanDecide = a.Status == brabo.StatusPending && role.AtLeast(c.MinRole)
	c.Network = a.Result.NetworkRefusals()
	c.CanAllowNetwork = len(c.Network) > 0 && role.AtLeast(brabo.Maintainer)
	c.CanApprove = c.CanDecide && role.AtLeast(c.NeedRole)
	if c.CanApprove {
		_, err := s.Actions.AlwaysAllowPreview(ctx, a.ID, m)
		c.CanAlways = err == nil
	}
	return c, nil
}

// previewNow computes the card of an action recorded before previews
// were, with a note saying so; nil when its project cannot be read.
func (s *Server) previewNow(ctx context.Context, a *brabo.ProposedAction) *brabo.Preview {
	p, err := s.Projects.Project(ctx, a.ProjectID)
	if err != nil {
		return nil
	}
	var pr *brabo.PullRequest
	if a.Type == brabo.GitMerge {
		pr, _ = s.Actions.PR(ctx, a.ProjectID, a.Payload.PR)
	}
	pv := s.Actions.Preview(ctx, a, p, pr)
	pv.Notes = append([]string{"This action was recorded before brabo kept its card: what follows is computed now, not when it was proposed."}, pv.Notes...)
	return pv
}

// subject is the line a card shows in monospace for each type.
func subject(a *brabo.ProposedAction) string { return brabo.Subject(a) }

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	page, err := queuePageOf(r)
	if err != nil {
		return err
	}
	view, err := s.pendingCards(r.Context(), v.Member, page)
	if err != nil {
		return err
	}
	return s.renderPage(w, r, v, queueTitle(view.Total), "queue", view)
}

// queueTitle puts the count first, so it shows in a narrow browser tab.
func queueTitle(n int) string {
	if n == 0 {
		return "brabo — approval queue"
	}
	return "(" + strconv.Itoa(n) + ") brabo — approval queue"
}

// queueFragment is one page of the list alone, with the true count in
// the X-Queue-Total header: the page merges it after its stream
// (re)connects, so nothing proposed while it was away is missed.
func (s *Server) queueFragment(w http.ResponseWriter, r *http.Request, v *viewer) error {
	page, err := queuePageOf(r)
	if err != nil {
		return err
	}
	view, err := s.pendingCards(r.Context(), v.Member, page)
	if err != nil {
		return err
	}
	w.Header().Set("X-Queue-Total", strconv.Itoa(view.Total))
	s.render(w, http.StatusOK, "cards", view)
	return nil
}

// requestCard is the card of the action the request names, for the viewer.
func (s *Server) requestCard(r *http.Request, v *viewer) (card, error) {
	a, err := s.visibleAction(r)
	if err != nil {
		return card{}, err
	}
	c, err := s.cardFor(r.Context(), v.Member, a)
	if err == nil && fromActionPage(r) {
		fullCard(&c)
	}
	return c, err
}

func (s *Server) cardFragment(w http.ResponseWriter, r *http.Request, v *viewer) error {
	c, err := s.requestCard(r, v)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "card", c)
	return nil
}

// decided answers a decision that left the queue: the card's place is
// emptied (htmx removes it) and the status line says what happened, in
// red when it failed or was denied, with a link to the action's page.
func (s *Server) decided(w http.ResponseWriter, r *http.Request, a *brabo.ProposedAction, msg string) {
	w.Header().Set("X-Action-Status", string(a.Status))
	if fromActionPage(r) {
		// The action's page shows the card as decided now: load it again.
		w.Header().Set("HX-Redirect", "/ui/actions/"+a.ID)
	}
	s.render(w, http.StatusOK, "decided", map[string]any{"Message": msg, "ID": a.ID,
		"Bad": a.Status == brabo.StatusFailed || a.Status == brabo.StatusDenied || failedRun(a)})
}

// refused re-renders the card with the refusal's sentence on it, with the
// refusal's status (a 409 stays a 409).
func (s *Server) refused(w http.ResponseWriter, r *http.Request, v *viewer, err error) error {
	ae := s.classify(r, err)
	if ae.status >= 500 || ae.status == http.StatusNotFound {
		return err
	}
	if cerr := s.cardWithError(w, r, v, ae.status, ae.msg); cerr != nil {
		return err
	}
	return nil
}

// cardWithError re-renders the action's card with msg on it.
func (s *Server) cardWithError(w http.ResponseWriter, r *http.Request, v *viewer, status int, msg string) error {
	c, err := s.requestCard(r, v)
	if err != nil {
		return err
	}
	c.Error = msg
	s.render(w, status, "card", c)
	return nil
}

func outcomeText(a *brabo.ProposedAction) string {
	switch {
	case a == nil:
		return ""
	case a.Unreported():
		return "approved; the agent runs it itself, and has not reported a result yet"
	case a.Status == brabo.StatusExecuted && a.Result != nil:
		return fmt.Sprintf("executed, exit %d", a.Result.ExitCode)
	case a.Status == brabo.StatusFailed && a.Result != nil && a.Result.Error != "":
		return "failed: " + a.Result.Error
	case a.Status == brabo.StatusFailed && a.Result != nil:
		return fmt.Sprintf("failed, exit %d", a.Result.ExitCode)
	case a.Status == brabo.StatusAbandoned:
		return "abandoned: the agent is no longer waiting; it did not run"
	case a.Status == brabo.StatusNotRun && a.Result != nil:
		return "not run: the agent refused it itself (" + a.Result.Error + ")"
	}
	return string(a.Status)
}

func (s *Server) webApprove(w http.ResponseWriter, r *http.Request, v *viewer) error {
	s.execDeadline(w, r)
	d, err := s.Actions.Approve(r.Context(), r.PathValue("action"), v.Member, r.PostFormValue("revision"))
	answerWithin(w)
	if err != nil {
		return s.refused(w, r, v, err)
	}
	s.decided(w, r, d.Action, fmt.Sprintf("Approved %s %q: %s.", d.Action.Type, clip(subject(d.Action), 120), outcomeText(d.Action)))
	return nil
}

func (s *Server) denyForm(w http.ResponseWriter, r *http.Request, v *viewer) error {
	c, err := s.requestCard(r, v)
	if err != nil {
		return err
	}
	if !c.CanDecide {
		return errorf(http.StatusForbidden, brabo.CodeForbiddenRole, "deciding a %s needs the role %s", c.A.Type, c.MinRole)
	}
	s.render(w, http.StatusOK, "deny-form", map[string]any{"A": c.A})
	return nil
}

func (s *Server) webDeny(w http.ResponseWriter, r *http.Request, v *viewer) error {
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" {
		return s.cardWithError(w, r, v, http.StatusBadRequest, "Say why you deny it: the agent reads the reason. Nothing was decided.")
	}
	a, err := s.Actions.Deny(r.Context(), r.PathValue("action"), v.Member, reason)
	if err != nil {
		return s.refused(w, r, v, err)
	}
	s.decided(w, r, a, fmt.Sprintf("Denied %s %q: %s", a.Type, clip(subject(a), 120), reason))
	return nil
}

// alwaysPreview shows the exact patterns (or the autonomy rule) a click
// would record, before anything is recorded.
func (s *Server) alwaysPreview(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, err := s.Actions.AlwaysAllowPreview(r.Context(), r.PathValue("action"), v.Member)
	if err != nil {
		return s.refused(w, r, v, err)
	}
	s.render(w, http.StatusOK, "always-preview", map[string]any{"A": d.Action, "Patterns": d.Patterns, "Autonomy": d.Autonomy,
		"AgentPatterns": d.AgentPatterns, "Revision": r.FormValue("revision")})
	return nil
}

// webAlways records what the preview showed. The form carries the previewed
// patterns; if the preview would now say something else (the file changed
// in between), nothing is recorded and the new preview is shown instead.
func (s *Server) webAlways(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: %v", err)
	}
	shown := r.PostForm["pattern"]
	now, err := s.Actions.AlwaysAllowPreview(r.Context(), r.PathValue("action"), v.Member)
	if err != nil {
		return s.refused(w, r, v, err)
	}
	if !slices.Equal(shown, now.Patterns) || !slices.Equal(r.PostForm["agentPattern"], now.AgentPatterns) ||
		(now.Autonomy != nil) != (r.PostFormValue("autonomy") != "") {
		return s.cardWithError(w, r, v, http.StatusConflict,
			"What always allow would record changed since it was shown; nothing was recorded. Click Always allow again to see it.")
	}
	s.execDeadline(w, r)
	d, err := s.Actions.ApproveAlways(r.Context(), r.PathValue("action"), v.Member, r.PostFormValue("revision"))
	answerWithin(w)
	if err != nil {
		return s.refused(w, r, v, err)
	}
	what := "nothing new (already recorded)"
	switch {
	case len(d.Patterns) > 0:
		what = strings.Join(d.Patterns, ", ")
	case len(d.AgentPatterns) > 0:
		what = strings.Join(d.AgentPatterns, ", ") + " for this agent alone"
	case d.Autonomy != nil:
		what = fmt.Sprintf("agent_autonomy %s: %s", d.Autonomy.ActionType, d.Autonomy.Mode)
	}
	s.decided(w, r, d.Action, fmt.Sprintf("Always allowed (recorded %s) and approved %s %q: %s.", what, d.Action.Type, clip(subject(d.Action), 120), outcomeText(d.Action)))
	return nil
}

// streamItem is what the page's stream sends per action event: enough to
// fetch a new card or drop a decided one, nothing more.
type streamItem struct {
	ActionID string `json:"actionId"`
	Type     string `json:"type"`
	Status   string `json:"status,omitempty"`
}

// webStream is the queue's live feed: the action events of every project
// the member has a role in, from the moment it connects (the page merges
// the list once per connection to cover the gap before). A store signal is
// the fast path; a short poll catches what a missed signal would hide.
func (s *Server) webStream(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming unsupported by the response writer")
	}
	after, err := s.Events.LastEventSeqs(ctx, v.Member.ID)
	if err != nil {
		return err
	}
	signal := make(chan struct{}, 1)
	for id := range after {
		ch, cancel := s.Events.Subscribe(id)
		defer cancel()
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case _, ok := <-ch:
					if !ok {
						return
					}
					select {
					case signal <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	release, err := s.openStream(v.Member)
	if err != nil {
		return err
	}
	defer release()
	beforeWrite := streamWrites(w)
	beforeWrite()
	beat, tick := s.startStream(w, flusher, "retry: 2000\n\n")
	defer beat.Stop()
	defer tick.Stop()
	for {
		sent := false
		for id, seq := range after {
			evs, err := s.Events.Events(ctx, id, seq, 500)
			if err != nil {
				return nil // the client went away or the store did; the page reconnects
			}
			for _, e := range evs {
				after[id] = e.Seq
				if e.ActionID == "" {
					continue
				}
				item := streamItem{ActionID: e.ActionID, Type: e.Type}
				if e.Type == brabo.EventActionCreated {
					item.Status = payloadStatus(e.Payload)
				}
				fmt.Fprintf(w, "event: action\ndata: %s\n\n", jsonLine(item))
				sent = true
			}
		}
		if sent {
			beforeWrite()
			flusher.Flush()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
		case <-tick.C:
		case <-beat.C:
			beforeWrite()
			fmt.Fprint(w, ": ping\n\n")
			flusher.Flush()
		}
	}
}

// clip shortens s to n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// runBy is the card's sentence on who runs an external action: the agent
// runs it once decided, brabo does not.
func runBy(a *brabo.ProposedAction) string {
	if !a.External() {
		return ""
	}
	e := a.Execution
	who := e.Runner
	if who == "" {
		who = "the agent"
	}
	s := who + " runs it itself once it is approved; brabo only decides"
	if e.SessionID != "" {
		s += " · session " + e.SessionID
	}
	if e.ToolUseID != "" {
		s += " · tool call " + e.ToolUseID
	}
	return s
}
