package brabo

import "time"

// WebhookFormat is the shape of the messages a webhook receives.
type WebhookFormat string

// Webhook formats.
const (
	// FormatJSON is brabo's own JSON message, signed (X-Brabo-Signature).
	FormatJSON WebhookFormat = "json"
	// FormatSlack is a Slack incoming webhook's {"text": …}.
	FormatSlack WebhookFormat = "slack"
	// FormatNtfy is an ntfy topic: the text as the body, the title, link
	// and tags as headers.
	FormatNtfy WebhookFormat = "ntfy"
)

// Valid reports whether f is one of the three formats.
func (f WebhookFormat) Valid() bool { return f == FormatJSON || f == FormatSlack || f == FormatNtfy }

// Webhook is one URL a project's notifications go to, set by a
// maintainer.
type Webhook struct {
	ID        string        `json:"id"`
	ProjectID string        `json:"projectId"`
	URL       string        `json:"url"`
	Format    WebhookFormat `json:"format"`
	// Details, when true, adds the diff of a write and the output of an
	// executed action to the messages; off by default, since they may
	// hold what should not leave the server.
	Details   bool      `json:"details"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// NoticeKind is what happened to an action that a notification tells.
type NoticeKind string

// Notice kinds.
const (
	// NoticeWaiting: the action started waiting for a human.
	NoticeWaiting NoticeKind = "action.waiting"
	// NoticeDecided: a human decided it (and, for one brabo runs, it ran).
	NoticeDecided NoticeKind = "action.decided"
)

// Notice is what the pipeline hands a Notifier.
type Notice struct {
	Kind   NoticeKind
	Action *ProposedAction
}

// Notifier sends notices on (webhooks). Notify never blocks and never
// fails: delivery happens later, elsewhere, and a failure is recorded by
// the notifier itself.
type Notifier interface {
	Notify(n Notice)
}
