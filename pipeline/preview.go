package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// Preview computes an action's card (brabo.Preview): who runs it and who
// may decide it, the flags of what it touches, and the change itself —
// the diff of a write against the file on disk, the message and stat of a
// commit, the commits of a push, the commits and stat of a pull request.
// Propose stores it with the action; the API, the web page, the hook's
// answers and the notifications all read that one value. It never fails:
// what it cannot show is a note saying why. pr is the pull request a
// git_merge merges (nil otherwise).
func (s *Service) Preview(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, pr *brabo.PullRequest) *brabo.Preview {
	return s.preview(ctx, a, p, pr, true)
}

// preview is Preview; stage says whether a git_commit's card stages its
// tree (brabo.Stager): the card a human approves does, the one stored
// at the proposal need not (it is computed again when shown).
func (s *Service) preview(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, pr *brabo.PullRequest, stage bool) *brabo.Preview {
	pv := s.previewBody(ctx, a, p, pr, stage)
	s.bindRest(ctx, a, p, pv)
	pv.Revision = brabo.MakeRevision(pv.Bound)
	return pv
}

func (s *Service) previewBody(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, pr *brabo.PullRequest, stage bool) *brabo.Preview {
	pv := &brabo.Preview{RunBy: "brabo", NeedRole: brabo.EffectiveRole(a.Type, a.Decision), DenyRole: a.Type.MinRole()}
	if a.External() {
		pv.RunBy = a.Execution.Runner
		if pv.RunBy == "" {
			pv.RunBy = "the agent"
		}
	}
	for _, seg := range a.Decision.Segments {
		for _, f := range seg.Flags {
			pv.Flags = brabo.AddFlag(pv.Flags, f)
		}
	}
	kind := a.Type.Traits().Preview
	if kind == brabo.PreviewInstructions {
		name := a.Payload.Agent
		s.Store.View(ctx, func(tx brabo.Tx) error {
			if ag, err := tx.Agent(ctx, a.Payload.Agent); err == nil {
				name = ag.Name
			}
			return nil
		})
		pv.Diff = instructionsDiff(name, a.Payload)
		return pv
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		pv.Notes = append(pv.Notes, "the project folder is not valid: nothing on disk is shown")
		return pv
	}
	root := scope.Root
	switch kind {
	case brabo.PreviewFileWrite:
		s.pathFlags(pv, a.Payload.Path, root, true)
		pv.Diff = writeDiff(root, a.Payload.Path, a.Payload.Content, s.Protect.Protected)
		writeFlags(pv, root, a.Payload.Path, a.Payload.Content)
	case brabo.PreviewFileRead:
		s.pathFlags(pv, a.Payload.Path, root, false)
	case brabo.PreviewRepository:
		if a.External() {
			break // the agent's own repository, not brabo's to read
		}
		g := &gitFacts{s: s, ctx: ctx, root: root, pv: pv}
		defer g.close()
		switch a.Type {
		case brabo.GitCommit:
			g.commit(a.Payload.Cwd)
			s.bindCommit(ctx, a, p, root, g, stage)
		case brabo.GitPush:
			g.push(remoteOf(a.Payload.Remote), a.Payload.Branch)
		case brabo.PrOpen:
			g.network("pull request on " + remoteOf(a.Payload.Remote))
			g.branch(remoteOf(a.Payload.Remote), a.Payload.Branch, a.Payload.Base)
		case brabo.GitMerge:
			if pr != nil {
				g.network("merge pushed to " + remoteOf(a.Payload.Remote))
				g.branch(remoteOf(a.Payload.Remote), pr.Head, pr.Base)
			}
		}
	}
	return pv
}

func remoteOf(r string) string {
	if r == "" {
		return "origin"
	}
	return r
}

// pathFlags flags a file path an action names: outside the project, in
// the home folder, protected.
func (s *Service) pathFlags(pv *brabo.Preview, p, root string, write bool) {
	abs := p
	if !path.IsAbs(abs) {
		abs = path.Join(root, abs)
	}
	abs = path.Clean(abs)
	home := path.Clean(s.Protect.Home)
	switch {
	case within(abs, root):
	case s.Protect.Home != "" && home != "/" && within(abs, home):
		pv.Flags = brabo.AddFlag(pv.Flags, brabo.Flag{Kind: brabo.FlagHome, What: p})
	default:
		pv.Flags = brabo.AddFlag(pv.Flags, brabo.Flag{Kind: brabo.FlagOutside, What: p})
	}
	if _, ok := s.Protect.Protected(abs, root, write); ok {
		pv.Flags = brabo.AddFlag(pv.Flags, brabo.Flag{Kind: brabo.FlagProtected, What: p})
	}
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// writeDiff is a write_file's diff against the file on disk (readScoped:
// never through a symlink, only inside the scope, never a read-protected
// path), or the new content whole for a new file.
func writeDiff(root, p, content string, protected func(abs, root string, write bool) (string, bool)) *brabo.FileDiff {
	d := &brabo.FileDiff{Path: p}
	rel := p
	if path.IsAbs(rel) {
		rel = strings.TrimPrefix(strings.TrimPrefix(path.Clean(rel), strings.TrimSuffix(root, "/")), "/")
		if !within(path.Clean(p), root) {
			rel = "../" // outside: refused below
		}
	}
	rel = path.Clean(rel)
	abs := path.Join(root, rel)
	if why, ok := protected(abs, root, false); ok {
		d.Hidden = "a read-protected path (" + why + "): its content is not shown"
		return d
	}
	old, exists, err := readScoped(root, rel, maxPreviewFile)
	var h *errHidden
	switch {
	case errors.As(err, &h):
		d.Hidden = h.why
		return d
	case err != nil:
		d.Hidden = "the file on disk cannot be read: " + err.Error()
		return d
	}
	d.New = !exists
	if binary(old) || binary([]byte(content)) {
		d.Hidden = fmt.Sprintf("binary content (%s on disk, %s written): no diff is shown", size(int64(len(old))), size(int64(len(content))))
		return d
	}
	if exists && string(old) == content {
		d.Identical = true
		return d
	}
	fillDiff(d, string(old), content)
	return d
}

// fillDiff puts the whole unified diff from old to new in d: a write's
// content is bounded (brabo.MaxWriteBytes), so is the file it is compared
// with (maxPreviewFile), and the action's page shows every line of it.
func fillDiff(d *brabo.FileDiff, old, new string) {
	text, added, removed := unified(lineDiff(splitLines(old), splitLines(new)), 3)
	d.Added, d.Removed = added, removed
	d.Unified = text
}

// instructionsDiff is an instruction_patch's change: from the text it
// replaces (Payload.Previous, which brabo filled in at the proposal, not
// the proposer) to the new one. Its Path names whose instructions they
// are; they live in the store, not in the project folder.
func instructionsDiff(agent string, p brabo.Payload) *brabo.FileDiff {
	d := &brabo.FileDiff{Path: "the instructions of " + agent}
	if binary([]byte(p.Previous)) || binary([]byte(p.Content)) {
		d.Hidden = "binary content: no diff is shown"
		return d
	}
	if p.Previous == p.Content {
		d.Identical = true
		return d
	}
	fillDiff(d, p.Previous, p.Content)
	return d
}

// binary reports content a line diff cannot show: a NUL byte, or text
// that is not UTF-8.
func binary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// gitFacts reads the repository for a git action's preview (Repo, a
// reader that runs nothing from the repository); a repository it cannot
// read is a note.
type gitFacts struct {
	s    *Service
	ctx  context.Context
	root string
	dir  string
	pv   *brabo.Preview
	repo brabo.GitRepo
	err  bool
}

// open opens the repository once; false (with a note) when it cannot.
func (g *gitFacts) open() bool {
	if g.err {
		return false
	}
	if g.repo != nil {
		return true
	}
	if g.s.Repo == nil {
		return g.fail(errors.New("this server reads no repository for previews"))
	}
	r, err := g.s.Repo.OpenRepo(g.ctx, g.root, g.dir)
	if err != nil {
		return g.fail(err)
	}
	g.repo = r
	return true
}

// fail notes why the repository could not be read; later reads are
// skipped.
func (g *gitFacts) fail(err error) bool {
	if !g.err {
		g.err = true
		g.pv.Notes = append(g.pv.Notes, "the repository could not be read: "+err.Error())
	}
	return false
}

func (g *gitFacts) close() {
	if g.repo != nil {
		g.repo.Close()
	}
}

// ref returns the commit a ref names, or "".
func (g *gitFacts) ref(ref string) string {
	if !g.open() {
		return ""
	}
	h, err := g.repo.Commit(ref)
	if err != nil {
		g.fail(err)
		return ""
	}
	return h
}

// bind adds a part to what an approval of the card binds.
func (g *gitFacts) bind(name, value string) {
	g.pv.Bound = append(g.pv.Bound, brabo.RevisionPart{Name: name, Value: value})
}

func (g *gitFacts) network(what string) {
	g.pv.Flags = brabo.AddFlag(g.pv.Flags, brabo.Flag{Kind: brabo.FlagNetwork, What: what})
}

// maxPreviewCommits and maxPreviewFiles bound the lists of a card.
const (
	maxPreviewCommits = 50
	maxPreviewFiles   = 100
)

// log lists the commits of tip (a commit hash) that none of not has,
// newest first.
func (g *gitFacts) log(tip string, not ...string) {
	if !g.open() {
		return
	}
	cs, total, err := g.repo.Log(tip, not, maxPreviewCommits)
	if err != nil {
		g.fail(err)
		return
	}
	g.pv.Commits = append(g.pv.Commits, cs...)
	if total > len(cs) {
		g.pv.MoreCommits = total - len(cs)
	}
}

// addStat puts a stat read from the repository in the preview.
func (g *gitFacts) addStat(st *brabo.DiffStat, err error) {
	if err != nil {
		g.fail(err)
		return
	}
	g.pv.Stat = st
}

// commit is a git_commit's stat: every change of the working tree
// against HEAD and every untracked file (the executor commits with
// git add -A).
func (g *gitFacts) commit(cwd string) {
	g.dir = cwd
	if !g.open() {
		return
	}
	g.addStat(g.repo.WorktreeStat(maxPreviewFiles))
}

// push is a git_push's commits: what the local branch has that the
// remote's (as last fetched) has not, and whether the remote's branch
// would be rewritten.
func (g *gitFacts) push(remote, branch string) {
	g.network("git push to " + remote)
	local := g.ref("refs/heads/" + branch)
	if local == "" {
		if !g.err {
			g.pv.Notes = append(g.pv.Notes, fmt.Sprintf("the branch %q does not exist in the repository: the push fails", branch))
		}
		return
	}
	facts := &brabo.PushFacts{Remote: remote, Branch: branch}
	g.pv.Push = facts
	tracking := g.ref("refs/remotes/" + remote + "/" + branch)
	// What an approval binds: the range by SHA and the ref it updates.
	old := tracking
	if old == "" {
		old = "none"
	}
	g.bind("commit", local)
	g.bind("remote", old)
	g.bind("ref", remote+" refs/heads/"+branch)
	if tracking == "" {
		facts.NewBranch = true
		g.pv.Range = branch + ", not on any branch of " + remote + " (as last fetched)"
		if g.err {
			return
		}
		refs, err := g.repo.Refs("refs/remotes/" + remote + "/")
		if err != nil {
			g.fail(err)
			return
		}
		g.log(local, refs...)
		return
	}
	g.pv.Range = remote + "/" + branch + ".." + branch + " (as last fetched)"
	g.log(local, tracking)
	if g.err {
		return
	}
	if ok, err := g.repo.IsAncestor(tracking, local); err != nil {
		g.fail(err)
	} else if !ok {
		facts.Force = true
		g.pv.Flags = brabo.AddFlag(g.pv.Flags, brabo.Flag{Kind: brabo.FlagForce,
			What: remote + "/" + branch + " has commits " + branch + " lacks; brabo never forces, so the remote refuses it"})
	}
}

// branch is a pull request's commits and stat: what head has that base
// has not, the remote's branches (as last fetched) where they exist.
func (g *gitFacts) branch(remote, head, base string) {
	pick := func(b string) (string, string) {
		if r := "refs/remotes/" + remote + "/" + b; g.ref(r) != "" {
			return r, g.ref(r)
		}
		if r := "refs/heads/" + b; g.ref(r) != "" {
			return r, g.ref(r)
		}
		return "", ""
	}
	h, hc := pick(head)
	b, bc := pick(base)
	if h == "" || b == "" {
		if !g.err {
			g.pv.Notes = append(g.pv.Notes, fmt.Sprintf("the branches %q and %q are not both in the repository: no commits are shown", head, base))
		}
		return
	}
	g.pv.Range = shortRef(b) + ".." + shortRef(h)
	g.bind("head", hc)
	g.bind("base", bc)
	g.log(hc, bc)
	if !g.err {
		g.addStat(g.repo.RangeStat(bc, hc, maxPreviewFiles))
	}
}

func shortRef(r string) string {
	r = strings.TrimPrefix(r, "refs/heads/")
	return strings.TrimPrefix(r, "refs/remotes/")
}

// CurrentReason decides a pending action again, for display only, with
// the rules in force now (permissions.json as brabo trusts it now, the
// agent's autonomy and patterns now): the sentence its card shows when
// the file changed since it was proposed. Nothing is recorded and the
// action's status does not change. "" for an action that is not pending.
func (s *Service) CurrentReason(ctx context.Context, a *brabo.ProposedAction) (string, error) {
	if a.Status != brabo.StatusPending {
		return "", nil
	}
	var (
		facts     *brabo.ProposalFacts
		protected []string
	)
	agentID := ""
	if a.ActorKind == "agent" {
		agentID = a.ActorID
	}
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if facts, err = tx.ProposalFacts(ctx, a.ProjectID, a.PrincipalID, agentID, a.Type); err != nil || a.Type != brabo.GitMerge {
			return err
		}
		protected, err = protectedList(ctx, tx, a.ProjectID) // as the proposal reads them
		return err
	})
	if err != nil {
		return "", err
	}
	if _, err := s.ScopeRoot(facts.Project); err != nil {
		return a.Reason, nil
	}
	d, err := s.decide(ctx, a.Type, a.Payload, situation{facts: facts, agentID: agentID,
		protected: protected, external: a.External()})
	if err != nil {
		return "", err
	}
	return d.Reason, nil
}
