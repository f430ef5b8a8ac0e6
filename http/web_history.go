package http

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
)

// The history of a project's actions, and each action's own page: every
// action, whatever became of it (auto-approved, pending, denied, executed,
// failed), with its card (as proposed while it waits, with the buttons
// of the queue's card, and as decided after), who decided it by which rule,
// its result and its events.

// historyRow is one action of the history.
type historyRow struct {
	A       *brabo.ProposedAction
	Actor   string
	Subject string
	Flags   []string
}

// historyView is the history page's data.
type historyView struct {
	ProjectID, Slug string
	Rows            []historyRow
	// Filter is what the form holds; Agents and Types are its choices.
	Status, Agent, Type, Text string
	Agents                    []*brabo.Agent
	Types                     []brabo.ActionType
	Statuses                  []brabo.ActionStatus
	// Total is the true count of what the filter selects; Page, From, To,
	// Prev and Next as on the queue.
	Total, Page, From, To, Prev, Next int
	// Query is the filter as a query string, for the pager's links.
	Query string
}

// historyPageSize is how many actions a page of the history shows.
const historyPageSize = 50

func (s *Server) historyPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	p, _, err := s.projectAccess(ctx, callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	page, err := queuePageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	view := historyView{ProjectID: p.ID, Slug: p.Slug, Page: page, Status: q.Get("status"), Agent: q.Get("agent"),
		Type: q.Get("type"), Text: strings.TrimSpace(q.Get("q")), Types: brabo.AllActionTypes(),
		Statuses: []brabo.ActionStatus{brabo.StatusPending, brabo.StatusAutoApproved, brabo.StatusApproved,
			brabo.StatusDenied, brabo.StatusExecuted, brabo.StatusFailed, brabo.StatusAbandoned, brabo.StatusNotRun}}
	f := brabo.ActionFilter{ProjectIDs: []string{p.ID}, Status: brabo.ActionStatus(view.Status), Type: brabo.ActionType(view.Type),
		ActorID: view.Agent, Text: view.Text, Limit: historyPageSize, Offset: (page - 1) * historyPageSize}
	if f.Status != "" && !validStatus(f.Status) {
		return badRequest("status %q is not an action status", f.Status)
	}
	if f.Type != "" && !f.Type.Valid() {
		return badRequest("type %q is not an action type", f.Type)
	}
	if len(f.Text) > 200 {
		return badRequest("the text is over 200 bytes")
	}
	if view.Agents, err = s.Agents.Agents(ctx, p.ID); err != nil {
		return err
	}
	actions, total, err := s.Actions.Actions(ctx, f)
	if err != nil {
		return err
	}
	view.Total = total
	names := s.actorNames(ctx, p.ID)
	for _, a := range actions {
		view.Rows = append(view.Rows, historyRow{A: a, Actor: names(a.ActorID), Subject: clip(brabo.FirstLine(subject(a)), 200),
			Flags: previewFlags(a.Preview)})
	}
	if len(view.Rows) > 0 {
		view.From = (page-1)*historyPageSize + 1
		view.To = view.From + len(view.Rows) - 1
	}
	if page > 1 {
		view.Prev = page - 1
	}
	if page*historyPageSize < view.Total {
		view.Next = page + 1
	}
	vals := url.Values{}
	for k, v := range map[string]string{"status": view.Status, "agent": view.Agent, "type": view.Type, "q": view.Text} {
		if v != "" {
			vals.Set(k, v)
		}
	}
	view.Query = vals.Encode()
	if view.Query != "" {
		view.Query += "&"
	}
	return s.renderPage(w, r, v, p.Slug+" · history — brabo", "history", view)
}

func validStatus(st brabo.ActionStatus) bool {
	switch st {
	case brabo.StatusPending, brabo.StatusAutoApproved, brabo.StatusApproved, brabo.StatusDenied, brabo.StatusExecuted, brabo.StatusFailed,
		brabo.StatusAbandoned, brabo.StatusNotRun:
		return true
	}
	return false
}

func previewFlags(p *brabo.Preview) []string {
	if p == nil {
		return nil
	}
	return brabo.FlagKinds(p.Flags)
}

// actionView is the action page's data.
type actionView struct {
	Card    card
	Slug    string
	Decider string
	// Rule is the sentence of how it was born; Outcome what became of it.
	Rule     string
	Outcome  string
	Bad      bool
	Duration string
	Lines    []logLine
}

// actionPage shows one action: its card (the whole diff) as proposed,
// with its buttons, while it waits, and as decided after; who decided it
// and by which rule, its result and its events. The hook's message, the
// notifications and the queue all link here.
func (s *Server) actionPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	a, err := s.visibleAction(r)
	if err != nil {
		return err
	}
	c, err := s.cardFor(ctx, v.Member, a)
	if err != nil {
		return err
	}
	fullCard(&c)
	view := actionView{Card: c, Rule: createdSentence(a), Outcome: outcomeText(a),
		Bad: a.Status == brabo.StatusFailed || a.Status == brabo.StatusDenied || failedRun(a)}
	if a.Status == brabo.StatusPending {
		view.Outcome = "waits for a human"
	}
	if !a.SettledAt.IsZero() && a.Result != nil {
		start := a.DecidedAt
		if start.IsZero() {
			start = a.CreatedAt
		}
		view.Duration = a.SettledAt.Sub(start).Round(time.Millisecond).String()
	}
	err = func() error {
		p, err := s.Projects.Project(ctx, a.ProjectID)
		if err != nil {
			return err
		}
		view.Slug = p.Slug
		names := s.actorNames(ctx, p.ID)
		if a.DecidedBy != "" {
			view.Decider = names(a.DecidedBy)
		}
		evs, err := s.Events.ActionEvents(ctx, a.ProjectID, a.ID)
		if err != nil {
			return err
		}
		for _, e := range evs {
			view.Lines = append(view.Lines, logLine{E: e, Actor: names(e.ActorID), Sentence: logSentence(e, names(e.ActorID)),
				Bad: e.Type == brabo.EventActionFailed || e.Type == brabo.EventActionDenied || e.Type == brabo.EventNotifyFailed})
		}
		return nil
	}()
	if err != nil {
		return err
	}
	return s.renderPage(w, r, v, fmt.Sprintf("%s %s · action — brabo", a.Type, shortID(a.ID)), "action", view)
}

// createdSentence is how the action was born, with its scope root.
func createdSentence(a *brabo.ProposedAction) string {
	st := a.Status
	switch st {
	case brabo.StatusApproved, brabo.StatusExecuted, brabo.StatusFailed, brabo.StatusDenied:
		if a.DecidedBy != "" || st == brabo.StatusApproved {
			st = brabo.StatusPending // it waited for a human
		}
		if st != brabo.StatusPending && a.Decision.Policy == brabo.AutoApprove {
			st = brabo.StatusAutoApproved
		}
	}
	reason := a.Decision.Reason
	if reason == "" {
		reason = a.Reason
	}
	return brabo.DecisionSentence(st, reason, a.Decision.ScopeRoot)
}

// bulkLimit bounds the cards one bulk decision takes.
const bulkLimit = 100

// webBulk decides several selected cards of one type together: each is
// approved or denied on its own, through the same pipeline calls and role
// checks as its own buttons, and recorded one by one.
func (s *Server) webBulk(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: %v", err)
	}
	ids := r.PostForm["id"]
	decision := r.PostFormValue("decision")
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	switch {
	case len(ids) == 0:
		return badRequest("select at least one card")
	case len(ids) > bulkLimit:
		return badRequest("at most %d cards at once", bulkLimit)
	case decision != "approve" && decision != "deny":
		return badRequest("decision %q: want approve or deny", decision)
	case decision == "deny" && reason == "":
		return badRequest("say why you deny them: each agent reads the reason")
	}
	// One kind at a time: what one click decides must look alike.
	var kind brabo.ActionType
	for _, id := range ids {
		a, err := s.Actions.Action(r.Context(), id)
		if err != nil {
			return notFound("action " + id)
		}
		if kind == "" {
			kind = a.Type
		} else if a.Type != kind {
			return badRequest("select cards of one type: %s and %s are both selected", kind, a.Type)
		}
	}
	// Each id's revision, in the same order: what its card showed.
	revisions := r.PostForm["revision"]
	var done, refused []string
	failed := 0
	for i, id := range ids {
		var a *brabo.ProposedAction
		var err error
		if decision == "approve" {
			rev := ""
			if i < len(revisions) {
				rev = revisions[i]
			}
			a, err = s.approveOne(r.Context(), id, v.Member, rev)
		} else {
			a, err = s.Actions.Deny(r.Context(), id, v.Member, reason)
		}
		if err != nil {
			refused = append(refused, shortID(id)+": "+s.classify(r, err).msg)
			continue
		}
		done = append(done, id)
		if a.Status == brabo.StatusFailed || failedRun(a) {
			failed++
		}
	}
	w.Header().Set("X-Decided", strings.Join(done, ","))
	verb := map[string]string{"approve": "Approved", "deny": "Denied"}[decision]
	msg := fmt.Sprintf("%s %d %s action%s one by one.", verb, len(done), kind, plural(len(done)))
	if failed > 0 {
		msg += fmt.Sprintf(" %d failed: see the history.", failed)
	}
	if len(refused) > 0 {
		msg += " Not decided: " + strings.Join(refused, "; ")
	}
	s.render(w, http.StatusOK, "decided", map[string]any{"Message": msg, "Bad": failed > 0 || len(refused) > 0 || decision == "deny"})
	return nil
}

// approveOne approves one action for a bulk decision, at the revision its
// card showed, and returns it as it ended.
func (s *Server) approveOne(ctx context.Context, id string, m *brabo.Member, revision string) (*brabo.ProposedAction, error) {
	d, err := s.Actions.Approve(ctx, id, m, revision)
	if err != nil {
		return nil, err
	}
	return d.Action, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
