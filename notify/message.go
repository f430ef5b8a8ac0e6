package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/brabo-dev/brabo"
)

// message is one formatted message: its body and its headers.
type message struct {
	body   []byte
	header map[string]string
}

// maxDetail bounds the diff or output a message carries when the
// maintainer turned details on.
const maxDetail = 8 << 10

// JSONMessage is the body of a json webhook's message.
type JSONMessage struct {
	// Event is action.waiting or action.decided.
	Event   brabo.NoticeKind `json:"event"`
	SentAt  time.Time        `json:"sentAt"`
	Project struct {
		ID   string `json:"id"`
		Slug string `json:"slug"`
	} `json:"project"`
	Action JSONAction `json:"action"`
	// Diff and Output are there only when the maintainer turned details
	// on for this webhook.
	Diff   string `json:"diff,omitempty"`
	Output string `json:"output,omitempty"`
}

// JSONAction is the action as a message tells it: a summary and a link,
// never the payload whole.
type JSONAction struct {
	ID     string             `json:"id"`
	Type   brabo.ActionType   `json:"type"`
	Status brabo.ActionStatus `json:"status"`
	// Agent is who proposed it (an agent's or a member's name).
	Agent string `json:"agent"`
	// Summary is the first line of what it does, with its flags.
	Summary string `json:"summary"`
	// Subject is the first line of the command, path, message or branch.
	Subject   string       `json:"subject"`
	Flags     []brabo.Flag `json:"flags,omitempty"`
	NeedRole  brabo.Role   `json:"needRole,omitempty"`
	Reason    string       `json:"reason"`
	URL       string       `json:"url"`
	CreatedAt time.Time    `json:"createdAt"`
	// DecidedBy, Outcome and ExitCode tell a decided action.
	DecidedBy string `json:"decidedBy,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"`
}

// outcome says what became of a decided action, in a few words.
func outcome(a *brabo.ProposedAction, decider string) string {
	who := ""
	if decider != "" {
		who = " by " + decider
	}
	switch {
	case a.Status == brabo.StatusDenied:
		return "denied" + who + ": " + a.Reason
	case a.Unreported():
		return "approved" + who + "; the agent runs it itself"
	case a.Status == brabo.StatusExecuted && a.Result != nil && a.Result.ExitCode != 0:
		return fmt.Sprintf("approved%s; ran and FAILED, exit %d", who, a.Result.ExitCode)
	case a.Status == brabo.StatusExecuted && a.Result != nil:
		return fmt.Sprintf("approved%s; executed, exit %d", who, a.Result.ExitCode)
	case a.Status == brabo.StatusFailed && a.Result != nil && a.Result.Error != "":
		return "approved" + who + "; FAILED: " + a.Result.Error
	case a.Status == brabo.StatusFailed && a.Result != nil:
		return fmt.Sprintf("approved%s; FAILED, exit %d", who, a.Result.ExitCode)
	}
	return string(a.Status) + who
}

func (n *Notifier) actionURL(a *brabo.ProposedAction) string {
	return n.baseURL + "/ui/actions/" + a.ID
}

// message formats a notice for one webhook.
func (n *Notifier) message(nt brabo.Notice, f *facts, h *brabo.Webhook) *message {
	a := nt.Action
	link := n.actionURL(a)
	subject := brabo.FirstLine(brabo.Printable(brabo.Subject(a)))
	var flags []brabo.Flag
	var need brabo.Role
	if a.Preview != nil {
		flags, need = a.Preview.Flags, a.Preview.NeedRole
	}
	kinds := strings.Join(brabo.FlagKinds(flags), ", ")
	diff, output := "", ""
	if h.Details {
		if a.Preview != nil && a.Preview.Diff != nil {
			diff = clip(a.Preview.Diff.Unified, maxDetail)
		}
		if a.Result != nil {
			output = clip(a.Result.Output, maxDetail)
		}
	}
	var head string
	if nt.Kind == brabo.NoticeWaiting {
		head = fmt.Sprintf("%s by %s in %s waits for a human", a.Type, f.agent, f.slug)
	} else {
		head = fmt.Sprintf("%s by %s in %s: %s", a.Type, f.agent, f.slug, outcome(a, f.decider))
	}
	m := &message{header: map[string]string{HeaderEvent: string(nt.Kind), HeaderDelivery: deliveryID()}}
	switch h.Format {
	case brabo.FormatSlack:
		var b strings.Builder
		fmt.Fprintf(&b, "*brabo* · %s\n`%s`", slackEscape(head), slackEscape(clip(subject, 300)))
		if kinds != "" {
			fmt.Fprintf(&b, "\nTouches: %s", slackEscape(kinds))
		}
		if diff != "" {
			fmt.Fprintf(&b, "\n```%s```", slackEscape(diff))
		}
		if output != "" {
			fmt.Fprintf(&b, "\nOutput:\n```%s```", slackEscape(output))
		}
		fmt.Fprintf(&b, "\n<%s|Open the action>", link)
		m.body, _ = json.Marshal(map[string]string{"text": b.String()})
		m.header["Content-Type"] = "application/json"
	case brabo.FormatNtfy:
		var b strings.Builder
		b.WriteString(clip(subject, 300))
		if kinds != "" {
			fmt.Fprintf(&b, "\nTouches: %s", kinds)
		}
		if nt.Kind == brabo.NoticeDecided {
			fmt.Fprintf(&b, "\n%s", outcome(a, f.decider))
		}
		if diff != "" {
			fmt.Fprintf(&b, "\n\n%s", diff)
		}
		if output != "" {
			fmt.Fprintf(&b, "\n\nOutput:\n%s", output)
		}
		m.body = []byte(b.String())
		m.header["Content-Type"] = "text/plain; charset=utf-8"
		m.header["Title"] = headerSafe("brabo: " + head)
		m.header["Click"] = link
		switch {
		case nt.Kind == brabo.NoticeWaiting:
			m.header["Tags"], m.header["Priority"] = "hourglass", "high"
		case a.Status == brabo.StatusFailed || a.Status == brabo.StatusDenied || (a.Result != nil && a.Result.ExitCode != 0):
			m.header["Tags"] = "x"
		default:
			m.header["Tags"] = "white_check_mark"
		}
	default:
		var j JSONMessage
		j.Event, j.SentAt = nt.Kind, n.now().UTC()
		j.Project.ID, j.Project.Slug = a.ProjectID, f.slug
		j.Action = JSONAction{ID: a.ID, Type: a.Type, Status: a.Status, Agent: f.agent, Summary: brabo.Summary(a),
			Subject: subject, Flags: flags, NeedRole: need, Reason: a.Reason, URL: link, CreatedAt: a.CreatedAt, DecidedBy: f.decider}
		if nt.Kind == brabo.NoticeDecided {
			j.Action.Outcome = outcome(a, f.decider)
			if a.Result != nil && !a.Unreported() {
				code := a.Result.ExitCode
				j.Action.ExitCode = &code
			}
		}
		j.Diff, j.Output = diff, output
		m.body, _ = json.Marshal(j)
		m.header["Content-Type"] = "application/json"
	}
	return m
}

// clip cuts s to n bytes on a rune boundary, saying how much it left out.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes)", len(s)-cut)
}

// slackEscape escapes what Slack's text reads as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// headerSafe keeps a header's value on one line of printable characters.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			if unicode.IsSpace(r) {
				return ' '
			}
			if r > unicode.MaxASCII && unicode.IsPrint(r) {
				return r
			}
			return -1
		}
		return r
	}, clip(s, 250))
}
