package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
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
	if a.Type == brabo.InstructionPatch {
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
	switch a.Type {
	case brabo.WriteFile:
		s.pathFlags(pv, a.Payload.Path, root, true)
		pv.Diff = writeDiff(root, a.Payload.Path, a.Payload.Content, s.Protect.Protected)
	case brabo.ReadFile:
		s.pathFlags(pv, a.Payload.Path, root, false)
	case brabo.GitCommit, brabo.GitPush, brabo.PrOpen, brabo.GitMerge:
		if a.External() {
			break // the agent's own repository, not brabo's to read
		}
		g := &gitFacts{s: s, ctx: ctx, root: root, pv: pv}
		switch a.Type {
		case brabo.GitCommit:
			g.commit(a.Payload.Cwd)
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

// fillDiff puts the unified diff from old to new in d, cut at
// brabo.MaxDiffLines.
func fillDiff(d *brabo.FileDiff, old, new string) {
	text, added, removed := unified(lineDiff(splitLines(old), splitLines(new)), 3)
	d.Added, d.Removed = added, removed
	lines := brabo.DiffLines(text)
	if len(lines) > brabo.MaxDiffLines {
		d.More = len(lines) - brabo.MaxDiffLines
		lines = lines[:brabo.MaxDiffLines]
	}
	d.Unified = strings.Join(lines, "\n")
	if d.Unified != "" {
		d.Unified += "\n"
	}
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

// gitFacts reads the repository for a git action's preview (Repo); a
// repository it cannot read is a note.
type gitFacts struct {
	s    *Service
	ctx  context.Context
	root string
	dir  string
	pv   *brabo.Preview
	err  bool
}

func (g *gitFacts) git(args ...string) (string, int) {
	if g.err {
		return "", -1
	}
	if g.s.Repo == nil {
		g.err = true
		g.pv.Notes = append(g.pv.Notes, "this server reads no repository for previews")
		return "", -1
	}
	out, code, err := g.s.Repo.GitRead(g.ctx, g.root, g.dir, args...)
	if err != nil {
		g.err = true
		g.pv.Notes = append(g.pv.Notes, "the repository could not be read: "+err.Error())
		return "", -1
	}
	return out, code
}

// ref returns the commit a ref names, or "".
func (g *gitFacts) ref(ref string) string {
	out, code := g.git("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

func (g *gitFacts) network(what string) {
	g.pv.Flags = brabo.AddFlag(g.pv.Flags, brabo.Flag{Kind: brabo.FlagNetwork, What: what})
}

// maxPreviewCommits and maxPreviewFiles bound the lists of a card.
const (
	maxPreviewCommits = 50
	maxPreviewFiles   = 100
)

// log lists the commits of tip that none of not has, newest first.
func (g *gitFacts) log(tip string, not ...string) {
	args := []string{"log", "--no-show-signature", "--no-decorate", "--no-color", "--format=%h%x1f%an%x1f%s",
		"-n", strconv.Itoa(maxPreviewCommits + 1), tip}
	if len(not) > 0 {
		args = append(append(args, "--not"), not...)
	}
	out, code := g.git(args...)
	if code != 0 {
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(l, "\x1f", 3)
		if len(f) != 3 {
			continue
		}
		g.pv.Commits = append(g.pv.Commits, brabo.Commit{Hash: f[0], Author: f[1], Subject: f[2]})
	}
	if len(g.pv.Commits) > maxPreviewCommits {
		g.pv.Commits = g.pv.Commits[:maxPreviewCommits]
		count := []string{"rev-list", "--count", tip}
		if len(not) > 0 {
			count = append(append(count, "--not"), not...)
		}
		if n, code := g.git(count...); code == 0 {
			if total, err := strconv.Atoi(strings.TrimSpace(n)); err == nil && total > maxPreviewCommits {
				g.pv.MoreCommits = total - maxPreviewCommits
			}
		}
	}
}

// stat reads `git diff --numstat -z` output into the preview's stat.
func (g *gitFacts) stat(args ...string) {
	out, code := g.git(append([]string{"diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color"}, args...)...)
	if code != 0 {
		return
	}
	st := g.pv.Stat
	if st == nil {
		st = &brabo.DiffStat{}
		g.pv.Stat = st
	}
	for _, rec := range strings.Split(out, "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		fs := brabo.FileStat{Path: f[2]}
		if f[0] == "-" {
			fs.Binary = true
		} else {
			fs.Added, _ = strconv.Atoi(f[0])
			fs.Removed, _ = strconv.Atoi(f[1])
		}
		st.Added += fs.Added
		st.Removed += fs.Removed
		if len(st.Files) < maxPreviewFiles {
			st.Files = append(st.Files, fs)
		} else {
			st.More++
		}
	}
}

// emptyTree is git's empty tree: what a repository without a commit
// compares against.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// commit is a git_commit's stat: every change of the working tree
// against HEAD and every untracked file (the executor commits with
// git add -A).
func (g *gitFacts) commit(cwd string) {
	g.dir = cwd
	base := "HEAD"
	if g.ref("HEAD") == "" {
		base = emptyTree
	}
	g.stat(base, "--")
	out, code := g.git("ls-files", "--others", "--exclude-standard", "-z")
	if code != 0 || g.pv.Stat == nil {
		return
	}
	for _, p := range strings.Split(out, "\x00") {
		if p == "" {
			continue
		}
		if len(g.pv.Stat.Files) < maxPreviewFiles {
			g.pv.Stat.Files = append(g.pv.Stat.Files, brabo.FileStat{Path: p, New: true})
		} else {
			g.pv.Stat.More++
		}
	}
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
	tracking := "refs/remotes/" + remote + "/" + branch
	if g.ref(tracking) == "" {
		facts.NewBranch = true
		g.pv.Range = branch + ", not on any branch of " + remote + " (as last fetched)"
		g.log("refs/heads/"+branch, "--remotes="+remote)
		return
	}
	g.pv.Range = remote + "/" + branch + ".." + branch + " (as last fetched)"
	g.log("refs/heads/"+branch, tracking)
	if _, code := g.git("merge-base", "--is-ancestor", tracking, "refs/heads/"+branch); code == 1 {
		facts.Force = true
		g.pv.Flags = brabo.AddFlag(g.pv.Flags, brabo.Flag{Kind: brabo.FlagForce,
			What: remote + "/" + branch + " has commits " + branch + " lacks; brabo never forces, so the remote refuses it"})
	}
}

// branch is a pull request's commits and stat: what head has that base
// has not, the remote's branches (as last fetched) where they exist.
func (g *gitFacts) branch(remote, head, base string) {
	pick := func(b string) string {
		if r := "refs/remotes/" + remote + "/" + b; g.ref(r) != "" {
			return r
		}
		if r := "refs/heads/" + b; g.ref(r) != "" {
			return r
		}
		return ""
	}
	h, b := pick(head), pick(base)
	if h == "" || b == "" {
		if !g.err {
			g.pv.Notes = append(g.pv.Notes, fmt.Sprintf("the branches %q and %q are not both in the repository: no commits are shown", head, base))
		}
		return
	}
	g.pv.Range = shortRef(b) + ".." + shortRef(h)
	g.log(h, b)
	g.stat(b+"..."+h, "--")
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
	var facts *brabo.ProposalFacts
	agentID := ""
	if a.ActorKind == "agent" {
		agentID = a.ActorID
	}
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		facts, err = tx.ProposalFacts(ctx, a.ProjectID, a.PrincipalID, agentID, a.Type)
		return err
	})
	if err != nil {
		return "", err
	}
	scope, err := s.ScopeRoot(facts.Project)
	if err != nil {
		return a.Reason, nil
	}
	rules, st, err := s.EffectiveRules(ctx, facts.Project)
	if err != nil {
		return "", err
	}
	d := policy.Decide(policy.Input{Type: a.Type, Command: a.Payload.Command, Cwd: a.Payload.Cwd, Role: facts.Role,
		Autonomy: policy.Autonomy{Specific: facts.Specific, Wildcard: facts.Wildcard}, Scope: scope, Rules: rules,
		ContainerRunning: facts.Project.ContainerRunning, TargetBranch: a.Payload.TargetBranch, Path: a.Payload.Path,
		Protect: s.Protect, AgentAllow: s.agentRules(agentID, facts.AgentPatterns), Tool: a.Payload.Tool,
		McpMapped: policy.McpToolMapped(facts.Project.McpTools, a.Payload.Tool)})
	if st != nil && st.Held() {
		d.Reason += heldReason(st)
	}
	return s.unsandboxed(a.Type, d).Reason, nil
}
