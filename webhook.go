package brabo

import (
	"context"
	"time"
)

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

// RepoReader reads a project's git repository as data, for the
// pipeline's previews (the commits a push would push, the stat of a
// commit or a pull request): it runs no program, obeys no configuration,
// attribute or hook of the repository, and follows no gitfile, commondir
// or alternates that leaves the project folder.
type RepoReader interface {
	// OpenRepo opens the repository that holds dir, a folder relative to
	// the scope root root ("" for the root), looking from dir up to root
	// and never above it.
	OpenRepo(ctx context.Context, root, dir string) (GitRepo, error)
}

// GitRepo is one repository opened by a RepoReader. Refs are full names
// (refs/heads/main, refs/remotes/origin/main) or HEAD.
type GitRepo interface {
	// Commit returns the full hash of the commit ref names, tags peeled;
	// "" when it names none.
	Commit(ref string) (string, error)
	// Refs lists the full names of the refs under prefix
	// ("refs/remotes/origin/").
	Refs(prefix string) ([]string, error)
	// Log lists, newest first as git log does, at most max of the commits
	// reachable from tip and from none of not (commit hashes), and counts
	// them all.
	Log(tip string, not []string, max int) (commits []Commit, total int, err error)
	// IsAncestor reports whether commit a is b or one of b's ancestors.
	IsAncestor(a, b string) (bool, error)
	// RangeStat is `git diff --numstat base...tip`: what tip changes since
	// its merge base with base; at most max files are listed.
	RangeStat(base, tip string, max int) (*DiffStat, error)
	// WorktreeStat is what `git add -A` would commit: every change of the
	// working tree against HEAD (against nothing in a repository without
	// a commit), then every untracked file that no ignore rule excludes,
	// as New; at most max files are listed.
	WorktreeStat(max int) (*DiffStat, error)
	// Close releases what the repository holds open.
	Close() error
}
