package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
)

// git_repo_create and the document PRs (open_adr_pr, open_infra_pr) on the
// local git provider, whose repositories are bare repositories under
// Options.ReposRoot and whose pull requests are the pipeline's rows.

// runGitRepoCreate makes the project's repository on the local provider:
// the project folder becomes a git repository (git init, on payload Branch,
// main by default) when it is not one, with a first commit of what it
// holds when it has none; a bare repository <ReposRoot>/<workspace
// dir>.git is made and becomes the remote (payload Remote, origin by
// default), and the branch is pushed to it. A remote of that name already
// configured, or a repository already at that place, is a failed Result:
// there is nothing to create. Detail: "repository" (its folder's name),
// "remote", "branch", "commit", "initialised" ("true" when git init ran).
func (e *Executor) runGitRepoCreate(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	const t = brabo.GitRepoCreate
	p := req.Action.Payload
	branch := p.Branch
	if branch == "" {
		branch = "main"
	}
	if err := checkBranch(t, "branch", branch); err != nil {
		return nil, err
	}
	remote, err := remoteName(t, p.Remote)
	if err != nil {
		return nil, err
	}
	if err := needCredential(t, req); err != nil {
		return nil, err
	}
	if e.opts.ReposRoot == "" || !filepath.IsAbs(e.opts.ReposRoot) {
		return nil, errors.New("git_repo_create: no folder for the local provider's repositories is configured")
	}
	if req.Project == nil || req.Project.WorkspaceDir == "" || strings.ContainsAny(req.Project.WorkspaceDir, `/\`) {
		return nil, &PayloadError{Type: t, Field: "project", Reason: "has no workspace folder name to name its repository after"}
	}
	name, email := identity(req.Credential)
	g, err := e.rootGit(ctx, t, req, false, "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	if err != nil {
		return nil, err
	}
	initialised := false
	if _, code := g.query("rev-parse", "--git-dir"); code != 0 {
		if g.step("init", "-q", "-b", branch) != 0 {
			return g.fail("git init failed")
		}
		initialised = true
	}
	if url, code := g.query("remote", "get-url", "--", remote); code == 0 {
		return g.fail("the repository has a remote %q already (%s): there is nothing to create", remote, url)
	}
	bare := filepath.Join(e.opts.ReposRoot, req.Project.WorkspaceDir+".git")
	if _, err := os.Lstat(bare); err == nil {
		return g.fail("a repository exists already at %s: there is nothing to create", bare)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("git_repo_create: %w", err)
	}
	if _, code := g.query("rev-parse", "--verify", "--quiet", "HEAD"); code != 0 {
		// A first commit of what the folder holds: a branch must have a
		// commit to be pushed.
		if g.step("add", "-A") != 0 {
			return g.fail("git add failed")
		}
		if g.step("commit", "-q", "--allow-empty", "--no-edit", "-m", "Initial commit") != 0 {
			return g.fail("the first commit failed")
		}
	}
	hash, code := g.query("rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if code != 0 {
		return g.fail("branch %q does not exist in the repository: name the branch to publish (branch)", branch)
	}
	if err := os.MkdirAll(e.opts.ReposRoot, 0o755); err != nil {
		return nil, fmt.Errorf("git_repo_create: %w", err)
	}
	gb := e.newGit(ctx, t, req, e.opts.ReposRoot, []string{filepath.Dir(e.opts.ReposRoot)})
	gb.out = g.out
	if gb.step("init", "-q", "--bare", "-b", branch, bare) != 0 {
		return gb.fail("git init --bare failed")
	}
	if g.step("remote", "add", "--", remote, bare) != 0 {
		return g.fail("git remote add failed")
	}
	ref := "refs/heads/" + branch
	flags, err := e.remoteFlags(t, bare, g.dir, true)
	if err != nil {
		return nil, err
	}
	if g.step(append(append([]string{"push"}, flags...), "-q", remote, ref+":"+ref)...) != 0 {
		return g.fail("pushing %q to the new repository failed", branch)
	}
	d := map[string]string{"repository": filepath.Base(bare), "remote": remote, "branch": branch, "commit": hash}
	if initialised {
		d["initialised"] = "true"
	}
	return g.ok(d)
}

// runOpenDocPR opens a pull request whose branch adds a document: an ADR
// (open_adr_pr) or an infrastructure document (open_infra_pr). In a
// temporary clone of the remote (payload Remote, origin by default) it
// makes the head branch (payload Branch, or adr/<slug> / infra/<slug> of
// the title) from the base (payload Base, main by default), adds the
// payload's Content at the payload's Path (an ADR's default is
// docs/adr/NNNN-<slug>.md, numbered after the ones on the base; an infra
// document's infra/<slug>.md), commits it as the credential member and
// pushes the head. A head that exists on the remote, a document that
// exists on the base, or a base the remote lacks is a failed Result.
// Detail: "head", "base", "title", "path", "commit", "remote"; the
// pipeline records the pull request.
func (e *Executor) runOpenDocPR(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	t := req.Action.Type
	p := req.Action.Payload
	title := strings.TrimSpace(p.Title)
	if title == "" {
		return nil, &PayloadError{Type: t, Field: "title", Reason: "is empty"}
	}
	if p.Content == "" {
		return nil, &PayloadError{Type: t, Field: "content", Reason: "is empty"}
	}
	base := p.Base
	if base == "" {
		base = "main"
	}
	if err := checkBranch(t, "base", base); err != nil {
		return nil, err
	}
	kind, what := "infra", "infrastructure document"
	if t == brabo.OpenAdrPr {
		kind, what = "adr", "ADR"
	}
	slug := slugOf(title)
	head := p.Branch
	if head == "" {
		head = kind + "/" + slug
	}
	if err := checkBranch(t, "branch", head); err != nil {
		return nil, err
	}
	if head == base {
		return nil, &PayloadError{Type: t, Field: "branch", Value: head, Reason: "is the base itself"}
	}
	if err := needCredential(t, req); err != nil {
		return nil, err
	}
	remote, err := remoteName(t, p.Remote)
	if err != nil {
		return nil, err
	}
	g, done, res, err := e.remoteClone(ctx, t, req, remote, base)
	if g == nil {
		return res, err
	}
	defer done()
	clone := g.dir
	if _, code := g.query("rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+head); code == 0 {
		return g.fail("branch %q exists on remote %q already: name another head (branch)", head, remote)
	}
	doc := p.Path
	if doc == "" {
		doc = kind + "/" + slug + ".md"
		if t == brabo.OpenAdrPr {
			doc = fmt.Sprintf("docs/adr/%04d-%s.md", nextADR(clone), slug)
		}
	}
	sc, err := newScope(t, clone)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(filepath.Join(clone, filepath.FromSlash(doc))); err == nil {
		return g.fail("%s exists on %q already: this pull request adds a document, it does not replace one", doc, base)
	}
	tg, err := sc.file("path", doc)
	if err != nil {
		return nil, err
	}
	if err := atomicWrite(tg.dir, tg.name, []byte(p.Content), 0o644); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", t, doc, err)
	}
	if g.step("checkout", "-q", "-b", head) != 0 {
		return g.fail("git checkout -b %s failed", head)
	}
	if g.step("add", "--", tg.rel) != 0 {
		return g.fail("git add failed")
	}
	if g.step("commit", "-q", "--no-edit", "-m", fmt.Sprintf("Add %s: %s", what, title)) != 0 {
		return g.fail("git commit failed")
	}
	hash, code := g.query("rev-parse", "--verify", "HEAD")
	if code != 0 || hash == "" {
		return g.fail("the new commit could not be read back")
	}
	ref := "refs/heads/" + head
	if g.hostStep(append(append([]string{"push"}, g.pushFlags...), "--quiet", "origin", ref+":"+ref)...) != 0 {
		return g.fail("pushing %q to %s was refused", head, remote)
	}
	return g.ok(map[string]string{"head": head, "base": base, "title": title, "path": tg.rel, "commit": hash, "remote": remote})
}

// slugOf is a title as a branch and file name: lowercase letters, digits
// and dashes, at most 50 characters ("document" when nothing is left).
func slugOf(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 50 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "document"
	}
	return s
}

// nextADR is the number after the highest NNNN- prefix of the files in
// docs/adr of a checkout (1 for none).
func nextADR(repo string) int {
	entries, _ := os.ReadDir(filepath.Join(repo, "docs", "adr"))
	n := 0
	for _, e := range entries {
		num := 0
		i := 0
		for ; i < len(e.Name()) && e.Name()[i] >= '0' && e.Name()[i] <= '9' && i < 6; i++ {
			num = num*10 + int(e.Name()[i]-'0')
		}
		if i > 0 && num > n {
			n = num
		}
	}
	return n + 1
}
