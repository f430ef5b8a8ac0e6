package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/gitguard"
	"github.com/brabo-dev/brabo/internal/procs"
)

// rootGit opens a git session in the scope root, or in the payload's Cwd
// inside it when cwd is true.
func (e *Executor) rootGit(ctx context.Context, t brabo.ActionType, req brabo.ExecRequest, cwd bool, extra ...string) (*gitSession, error) {
	sc, err := newScope(t, req.Root)
	if err != nil {
		return nil, err
	}
	dir := sc.resolved
	if cwd {
		if dir, err = sc.dir("cwd", req.Action.Payload.Cwd); err != nil {
			return nil, err
		}
	}
	// What git would obey in the repository is read as data first: git
	// reads the repository's config whatever flags it gets.
	l, err := guardRepo(t, sc.resolved, dir)
	if err != nil {
		return nil, err
	}
	g := e.newGit(ctx, t, req, dir, ceilingFor(sc), extra...)
	g.root, g.layout = sc.resolved, l
	return g, nil
}

// localValue is `git config --local --get section.key` in the session's
// repository, read as data by gitguard ("" when unset, or when there is
// no repository: git add fails on it next).
func (g *gitSession) localValue(section, key string) string {
	if g.layout == nil {
		return ""
	}
	v, _ := g.layout.LocalValue(section, key)
	return v
}

// local moves the session into the sandbox (gitbox.go), when the
// executor has one: its steps touch only the repository at the root.
func (g *gitSession) local() *gitSession {
	g.sandboxed(g.e.gitBox(g.root, g.layout))
	return g
}

func needCredential(t brabo.ActionType, req brabo.ExecRequest) error {
	if req.Credential == nil || req.Credential.ID == "" {
		return &PayloadError{Type: t, Field: "credential", Reason: "is missing: a commit needs a member to be made as"}
	}
	return nil
}

// runGitCommit stages everything (`git add -A`) and commits it with the
// payload's Message, in the repository at the root or at the payload's Cwd
// inside it. The committer is the credential member (GIT_COMMITTER_NAME is
// the member's name, GIT_COMMITTER_EMAIL <member id>@brabo.local); the
// author is the same unless the repository's own config (git config
// --local) sets user.name or user.email. Nothing staged → a failed Result
// "nothing to commit". Detail: "commit" (the new hash).
func (e *Executor) runGitCommit(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	const t = brabo.GitCommit
	msg := req.Action.Payload.Message
	if strings.TrimSpace(msg) == "" {
		return nil, &PayloadError{Type: t, Field: "message", Reason: "is empty"}
	}
	if strings.ContainsRune(msg, 0) {
		return nil, &PayloadError{Type: t, Field: "message", Reason: "holds a NUL byte"}
	}
	if err := needCredential(t, req); err != nil {
		return nil, err
	}
	name, email := identity(req.Credential)
	g, err := e.rootGit(ctx, t, req, true, "GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	if err != nil {
		return nil, err
	}
	g.local()
	// The repository's own user.name and user.email, read as data (what
	// `git config --local --get` prints): one sandboxed git fewer each.
	var author []string
	if v := g.localValue("user", "name"); v == "" {
		author = append(author, "GIT_AUTHOR_NAME="+name)
	}
	if v := g.localValue("user", "email"); v == "" {
		author = append(author, "GIT_AUTHOR_EMAIL="+email)
	}
	g.with(author...)

	// Staged into a temporary index first, as the card staged: the tree
	// is compared with the one the approval bound before anything of the
	// repository changes (bound.go).
	st, err := g.stage(false, true)
	defer st.done()
	if err != nil {
		if _, ok := err.(errStage); ok {
			return g.fail("%s", err.Error())
		}
		return nil, err
	}
	if want := req.Bound["tree"]; want != "" && want != st.tree {
		return changed(t, "the tree to commit is %s, not the %s its card showed (files changed: %s)", short(st.tree), short(want), pathsMoved(req.Bound["paths"], st.paths)), nil
	}
	if want := req.Bound["head"]; want != "" && want != orNone(st.head) {
		return changed(t, "HEAD is %s, not the %s its card showed", short(orNone(st.head)), short(want)), nil
	}
	if len(st.paths) == 0 {
		return g.fail("nothing to commit: the working tree has no changes")
	}
	// The staged index becomes the repository's: the commit records
	// exactly its tree.
	if err := os.Rename(st.index, filepath.Join(g.layout.GitDir, "index")); err != nil {
		return nil, fmt.Errorf("%s: installing the staged index: %w", t, err)
	}
	if g.step("commit", "--no-edit", "-m", msg) != 0 {
		return g.fail("git commit failed")
	}
	hash, code := g.query("rev-parse", "--verify", "HEAD")
	if code != 0 || hash == "" {
		return g.fail("the new commit could not be read back")
	}
	if tree, _ := g.query("rev-parse", "--verify", "HEAD^{tree}"); tree != st.tree {
		return g.fail("the new commit %s records the tree %s, not the staged %s", hash, tree, st.tree)
	}
	return g.ok(map[string]string{"commit": hash, "tree": st.tree})
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// short is a SHA's first 12 characters.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// pathsMoved says which paths the staging now changes that the card did
// not show, and which it showed that are no longer changed.
func pathsMoved(shown string, now []string) string {
	was := map[string]bool{}
	for _, p := range strings.Split(shown, "\n") {
		if p != "" {
			was[p] = true
		}
	}
	var out []string
	for _, p := range now {
		if !was[p] {
			out = append(out, "+"+p)
		}
		delete(was, p)
	}
	for p := range was {
		out = append(out, "-"+p)
	}
	if len(out) == 0 {
		return "the same paths, other content"
	}
	return strings.Join(out, ", ")
}

// runGitBranchCreate creates payload Branch at payload From (HEAD when
// empty) in the repository at the root: `git branch -- <Branch> [<From>]`.
// Detail: "branch", "commit" (where it points) and "from" when given.
func (e *Executor) runGitBranchCreate(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	const t = brabo.GitBranchCreate
	p := req.Action.Payload
	if err := checkBranch(t, "branch", p.Branch); err != nil {
		return nil, err
	}
	if p.From != "" {
		if why := brabo.RevisionProblem(p.From); why != "" {
			return nil, &PayloadError{Type: t, Field: "from", Value: p.From, Reason: why}
		}
	}
	g, err := e.rootGit(ctx, t, req, false)
	if err != nil {
		return nil, err
	}
	g.local()
	args := []string{"branch", "--", p.Branch}
	if p.From != "" {
		if _, code := g.query("rev-parse", "--verify", "--quiet", "--end-of-options", p.From+"^{commit}"); code != 0 {
			return g.fail("start point %q is not a commit in this repository", p.From)
		}
		args = append(args, p.From)
	}
	if g.step(args...) != 0 {
		return g.fail("git branch failed")
	}
	hash, _ := g.query("rev-parse", "--verify", "--quiet", "refs/heads/"+p.Branch)
	d := map[string]string{"branch": p.Branch, "commit": hash}
	if p.From != "" {
		d["from"] = p.From
	}
	return g.ok(d)
}

// runGitPush pushes the local branch to the same branch on the remote,
// never forced: `git push <remote> refs/heads/B:refs/heads/B` from the root.
// The remote is payload Remote (origin by default) and must be a configured
// remote's name. Detail: "remote", "branch", "commit".
func (e *Executor) runGitPush(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	const t = brabo.GitPush
	p := req.Action.Payload
	if err := checkBranch(t, "branch", p.Branch); err != nil {
		return nil, err
	}
	remote, err := remoteName(t, p.Remote)
	if err != nil {
		return nil, err
	}
	g, err := e.rootGit(ctx, t, req, false)
	if err != nil {
		return nil, err
	}
	g.remoteSession()
	// Every URL the push goes to (a remote may have several pushurls).
	out, code := g.query("remote", "get-url", "--push", "--all", "--", remote)
	urls := urlLines(out)
	if code != 0 || len(urls) == 0 {
		return g.fail("remote %q is not configured in this repository", remote)
	}
	rs, err := g.remoteBox(remote, urls, true)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	var flags []string
	for i, url := range urls {
		// Each local remote's configuration is checked; the options are
		// the first URL's, as git's --receive-pack is one for all.
		f, err := e.remoteFlags(t, url, g.dir, true)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			flags = f
		}
	}
	hash, code := g.query("rev-parse", "--verify", "--quiet", "refs/heads/"+p.Branch)
	if code != 0 {
		return g.fail("branch %q does not exist in this repository", p.Branch)
	}
	ref := "refs/heads/" + p.Branch
	src := ref
	if want := req.Bound["commit"]; want != "" {
		// The commit the card showed is what is pushed, by SHA; a branch
		// or a remote-tracking ref that moved since runs nothing.
		if hash != want {
			return changed(t, "the branch %s is at %s, not at the %s its card showed", p.Branch, short(hash), short(want)), nil
		}
		tracking, _ := g.query("rev-parse", "--verify", "--quiet", "refs/remotes/"+remote+"/"+p.Branch)
		if old := req.Bound["remote"]; old != "" && orNone(tracking) != old {
			return changed(t, "%s/%s (as last fetched) is at %s, not at the %s its card showed", remote, p.Branch, short(orNone(tracking)), short(old)), nil
		}
		src = want
	}
	push := append(append([]string{"push"}, flags...), remote, src+":"+ref)
	if rs.run(g, push...) != 0 {
		return g.fail("git push to %s was refused", remote)
	}
	return g.ok(map[string]string{"remote": remote, "branch": p.Branch, "commit": hash})
}

// runPROpen is the local git provider's pull request: it checks that the
// head (payload Branch) and the base (payload Base) both exist on the remote
// (`git ls-remote --exit-code`), and returns Detail "head", "base", "title"
// (the head's name when the payload has none) and "remote". It does not
// record the PR: the pipeline does, in the transaction that settles the
// action. A head or base the approval bound (req.Bound) that is not the
// remote's now opens nothing (changed_since_approved); Detail
// "head_commit" and "base_commit" are the commits it opened on.
func (e *Executor) runPROpen(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	const t = brabo.PrOpen
	p := req.Action.Payload
	if err := checkBranch(t, "branch", p.Branch); err != nil {
		return nil, err
	}
	if err := checkBranch(t, "base", p.Base); err != nil {
		return nil, err
	}
	if p.Branch == p.Base {
		return nil, &PayloadError{Type: t, Field: "branch", Value: p.Branch, Reason: "is the base itself"}
	}
	remote, err := remoteName(t, p.Remote)
	if err != nil {
		return nil, err
	}
	g, err := e.rootGit(ctx, t, req, false)
	if err != nil {
		return nil, err
	}
	g.remoteSession()
	url, code := g.query("remote", "get-url", "--", remote)
	if code != 0 {
		return g.fail("remote %q is not configured in this repository", remote)
	}
	rs, err := g.remoteBox(remote, []string{url}, false)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	flags, err := e.remoteFlags(t, url, g.dir, false)
	if err != nil {
		return nil, err
	}
	at := map[string]string{}
	for _, b := range []struct{ role, name string }{{"head", p.Branch}, {"base", p.Base}} {
		ref := "refs/heads/" + b.name
		out, code := rs.output(g, append(append([]string{"ls-remote"}, flags...), "--exit-code", remote, ref)...)
		switch code {
		case 0:
		case 2:
			return g.fail("%s branch %q is not on remote %q (push it first)", b.role, b.name, remote)
		default:
			return g.fail("git ls-remote %s failed", remote)
		}
		at[b.role] = lsRemoteCommit(out, ref)
		// The pull request opens on the commits its card showed: a head or
		// a base that moved on the remote since opens nothing.
		if want := req.Bound[b.role]; want != "" && at[b.role] != want {
			return changed(t, "the %s branch %s is at %s on %s, not at the %s its card showed (as last fetched)",
				b.role, b.name, short(orNone(at[b.role])), remote, short(want)), nil
		}
	}
	title := strings.TrimSpace(p.Title)
	if title == "" {
		title = p.Branch
	}
	return g.ok(map[string]string{"head": p.Branch, "base": p.Base, "title": title, "remote": remote,
		"head_commit": at["head"], "base_commit": at["base"]})
}

// runGitMerge merges the pull request req.PR on the remote for real: it
// clones the remote (the URL of payload Remote, origin by default, in the
// root's repository) into a temporary directory, checks out the base,
// merges origin/<head> with --no-ff and the message "Merge pull request #N:
// <title>" as the credential member, and pushes the base back (never
// forced: a base that moved meanwhile refuses the push). A conflict is a
// failed Result with Error "merge conflict" and git's output; a head the
// base already contains is a failed Result too, since nothing would be
// merged. The head merged is the bound one, by SHA, into the bound base
// (req.Bound "head", "base"): either moved on the remote since the
// approval merges nothing (changed_since_approved). Detail:
// "merge_commit", "base", "head", "head_commit", "pr". The temporary
// clone is always removed.
func (e *Executor) runGitMerge(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	const t = brabo.GitMerge
	p := req.Action.Payload
	pr := req.PR
	if pr == nil {
		return nil, &PayloadError{Type: t, Field: "pr", Reason: "is missing: a merge needs the pull request it merges"}
	}
	if err := checkBranch(t, "head", pr.Head); err != nil {
		return nil, err
	}
	if err := checkBranch(t, "base", pr.Base); err != nil {
		return nil, err
	}
	// What was decided on is what runs: the policy capped the merge by the
	// target branch it was shown.
	if p.TargetBranch != "" && p.TargetBranch != pr.Base {
		return nil, &PayloadError{Type: t, Field: "targetBranch", Value: p.TargetBranch,
			Reason: fmt.Sprintf("is not the pull request's base %q", pr.Base)}
	}
	if p.PR != 0 && p.PR != pr.Number {
		return nil, &PayloadError{Type: t, Field: "pr", Value: strconv.FormatInt(p.PR, 10),
			Reason: fmt.Sprintf("is not the pull request handed to the executor (#%d)", pr.Number)}
	}
	if pr.Head == pr.Base {
		return nil, &PayloadError{Type: t, Field: "head", Value: pr.Head, Reason: "is the base itself"}
	}
	if err := needCredential(t, req); err != nil {
		return nil, err
	}
	remote, err := remoteName(t, p.Remote)
	if err != nil {
		return nil, err
	}
	g, done, res, err := e.remoteClone(ctx, t, req, remote, pr.Base)
	if g == nil {
		return res, err
	}
	defer done()
	headRef := "refs/remotes/origin/" + pr.Head
	head, code := g.query("rev-parse", "--verify", "--quiet", headRef+"^{commit}")
	if code != 0 {
		return g.fail("head branch %q is not on remote %q", pr.Head, remote)
	}
	// The merge its card showed is what runs: the shown head, by SHA, into
	// the shown base; a base or a head that moved on the remote since the
	// approval merges nothing.
	if want := req.Bound["base"]; want != "" {
		if base, _ := g.query("rev-parse", "--verify", "--quiet", "HEAD"); base != want {
			return changed(t, "the base %s is at %s on %s, not at the %s its card showed (as last fetched)", pr.Base, short(orNone(base)), remote, short(want)), nil
		}
	}
	if want := req.Bound["head"]; want != "" && head != want {
		return changed(t, "the head %s is at %s on %s, not at the %s its card showed (as last fetched)", pr.Head, short(head), remote, short(want)), nil
	}
	if _, code := g.query("merge-base", "--is-ancestor", head, "HEAD"); code == 0 {
		return g.fail("nothing to merge: %q already contains %q", pr.Base, pr.Head)
	}
	msg := fmt.Sprintf("Merge pull request #%d: %s", pr.Number, pr.Title)
	if g.step("merge", "--no-ff", "--no-edit", "-m", msg, head) != 0 {
		if unmerged, _ := g.query("ls-files", "--unmerged"); unmerged != "" {
			return g.fail("merge conflict")
		}
		return g.fail("git merge failed")
	}
	hash, code := g.query("rev-parse", "--verify", "HEAD")
	if code != 0 || hash == "" {
		return g.fail("the merge commit could not be read back")
	}
	baseRef := "refs/heads/" + pr.Base
	if g.hostStep(append(append([]string{"push"}, g.pushFlags...), "--quiet", "origin", baseRef+":"+baseRef)...) != 0 {
		return g.fail("pushing the merged %q back to %s was refused", pr.Base, remote)
	}
	return g.ok(map[string]string{"merge_commit": hash, "base": pr.Base, "head": pr.Head,
		"head_commit": head, "pr": strconv.FormatInt(pr.Number, 10)})
}

// remoteClone clones the remote named remote (a configured remote of the
// root's repository) at branch into a temporary folder, with git run as
// the credential member, and returns the session working in the clone and
// done, which removes the folder. When it cannot (no such remote, the
// branch is not there), g is nil and res, err end the action.
func (e *Executor) remoteClone(ctx context.Context, t brabo.ActionType, req brabo.ExecRequest, remote, branch string) (g *gitSession, done func(), res *brabo.Result, err error) {
	root, err := e.rootGit(ctx, t, req, false)
	if err != nil {
		return nil, nil, nil, err
	}
	url, code := root.query("remote", "get-url", "--", remote)
	if code != 0 || url == "" {
		res, err = root.fail("remote %q is not configured in this repository", remote)
		return nil, nil, res, err
	}
	if isLocalPath(url) && !filepath.IsAbs(url) {
		url = filepath.Join(root.dir, url)
	}
	fetchFlags, err := e.remoteFlags(t, url, root.dir, false)
	if err != nil {
		return nil, nil, nil, err
	}
	pushFlags, err := e.remoteFlags(t, url, root.dir, true)
	if err != nil {
		return nil, nil, nil, err
	}
	// Named by the action, as a command's temp folder is: a restart removes
	// what a killed server left (procs.Host.StopAction).
	tmp, err := os.MkdirTemp("", procs.TempPattern(req.Action.ID))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", t, err)
	}
	done = func() { os.RemoveAll(tmp) }
	name, email := identity(req.Credential)
	g = e.newGit(ctx, t, req, tmp, []string{filepath.Dir(tmp)},
		"GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	clone := filepath.Join(tmp, "repo")
	if g.step(append(append([]string{"clone"}, fetchFlags...), "--quiet", "--branch", branch, "--", url, clone)...) != 0 {
		res, err = g.fail("cloning the remote %q at base %q failed (is %q on the remote?)", remote, branch, branch)
		done()
		return nil, nil, res, err
	}
	g.dir = clone
	g.pushFlags = pushFlags
	// The merge in brabo's own clone touches only the clone: it runs in
	// the sandbox, the clone its scope root; the push back runs on the
	// host (hostStep).
	l, err := gitguard.Check(clone, clone)
	if err != nil {
		done()
		return nil, nil, nil, &RepositoryRefusedError{Type: t, Err: err}
	}
	g.sandboxed(e.gitBox(clone, l))
	return g, done, nil, nil
}

// isLocalPath reports whether a remote URL is a filesystem path rather
// than a URL (scheme://…) or scp-like address (host:path).
func isLocalPath(url string) bool {
	if strings.Contains(url, "://") {
		return false
	}
	if i := strings.IndexByte(url, ':'); i >= 0 && !strings.Contains(url[:i], "/") {
		return false
	}
	return true
}
