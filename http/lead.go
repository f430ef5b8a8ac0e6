package http

import (
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/brabo-dev/brabo"
)

// The dev lead's conversation (DESIGN §7.5), through s.Conversations.
//
// Who: reading is for every member of the project (developer and up).
// Posting is for maintainers and owners: the lead's two actions
// (propose_execution_plan, assess_implementability) are maintainer-minimum
// types, proposed for the lead's principal, and may be configured
// auto_approve; a developer steering the lead could have a plan run that
// a developer could not propose. Agents may neither post nor read: the
// conversation is the humans' channel to the lead, and an agent token
// never administers.

// leadCodes are the lead and gate APIs' own codes, and not_found, which
// they answer with the engine's own sentence.
var leadCodes = []brabo.Code{brabo.CodeNotConfigured, brabo.CodeLeadAwaiting, brabo.CodeGateInProgress, brabo.CodeNotFound}

// leadError gives the lead and gate APIs' codes their status (the root's
// one table); other errors go to writeError as they are.
func leadError(err error) error {
	var be *brabo.Error
	if errors.As(err, &be) && slices.Contains(leadCodes, be.Code) {
		if status, ok := be.Code.HTTPStatus(); ok {
			return &apiError{status: status, code: be.Code, msg: be.Message}
		}
	}
	return err
}

func notConfigured(what string) error {
	return errorf(http.StatusNotImplemented, brabo.CodeNotConfigured,
		"%s needs the agents: this server runs none (start brabo serve with --model)", what)
}

// postLeadMessage posts the user's message to the project's dev lead and
// answers how the turn ended (answered, awaiting_approval or halted).
func (s *Server) postLeadMessage(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Maintainer, "talking to the dev lead")
	if err != nil {
		return err
	}
	var in struct {
		Text string `json:"text"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if trimmed(in.Text) == "" {
		return badRequest("text is required")
	}
	if s.Conversations == nil {
		return notConfigured("the dev lead")
	}
	// A turn runs model calls and tools as long as the loop's own bounds
	// let it: no deadline while it runs, the margin for its answer.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	turn, err := s.Conversations.Post(r.Context(), p.ID, in.Text)
	answerWithin(w)
	if err != nil {
		return leadError(err)
	}
	writeJSON(w, http.StatusOK, turn)
	return nil
}

// getLeadMessages reads the project's dev lead conversation back.
func (s *Server) getLeadMessages(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "reading the dev lead's conversation")
	if err != nil {
		return err
	}
	if s.Conversations == nil {
		return notConfigured("the dev lead")
	}
	c, err := s.Conversations.Read(r.Context(), p.ID)
	if err != nil {
		return leadError(err)
	}
	if c.Messages == nil {
		c.Messages = []brabo.LeadMessage{}
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
