package http

import (
	"context"
	"encoding/json"

	"github.com/brabo-dev/brabo"
)

// withText fills in each action's ReasonText (brabo.ReasonText, the one
// sentence the card, the hook and the CLI show), naming the human who
// decided: every API answer that carries an action carries it.
func (s *Server) withText(ctx context.Context, as ...*brabo.ProposedAction) {
	names := map[string]string{}
	for _, a := range as {
		if a == nil {
			continue
		}
		a.ReasonText = brabo.ReasonText(a, s.deciderName(ctx, a, names))
	}
}

// deciderName is the name of the member who decided a, "" when no one
// did or the member cannot be read; names caches the lookups of one
// answer.
func (s *Server) deciderName(ctx context.Context, a *brabo.ProposedAction, names map[string]string) string {
	id := a.DecidedBy
	if id == "" {
		return ""
	}
	if n, ok := names[id]; ok {
		return n
	}
	n := ""
	if m, err := s.Projects.Member(ctx, id); err == nil {
		n = m.Name
	}
	if names != nil {
		names[id] = n
	}
	return n
}

// logSentence is an event's sentence in a log whose line names its actor:
// a human's denial reads "denied by <name>: <reason>", as ReasonText
// says it on the card.
func logSentence(e brabo.Event, actor string) string {
	if e.Type == brabo.EventActionDenied && actor != "" {
		var p struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		if p.Reason != "" {
			return "denied by " + actor + ": " + p.Reason
		}
	}
	return eventSentence(e)
}
