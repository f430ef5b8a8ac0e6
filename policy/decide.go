// Package policy decides what happens to an action an agent proposes:
// auto_approve, require_approval or deny (DESIGN §4).
//
// Decide is pure and total: it reads only its Input, does no I/O, reads no
// clock, and never panics. When it cannot see what an action would do, it
// asks a human; it never fails open.
package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// Input is everything Decide looks at.
type Input struct {
	// Type is the proposed action's type.
	Type brabo.ActionType
	// Command is the command line of a terminal action.
	Command string
	// Cwd is the directory a terminal action runs in; relative to the scope
	// root when not absolute, the root itself when empty.
	Cwd string
	// Role is the principal's role: the human the proposal acts for.
	Role brabo.Role
	// Autonomy is the proposing agent's agent_autonomy for this type.
	Autonomy Autonomy
	// Rules is the project's compiled permissions.json; nil is the empty
	// file.
	Rules *Rules
	// Scope is the project folder.
	Scope Scope
	// ContainerRunning is true when the project's container is registered
	// running (execution mode container): the container floor.
	ContainerRunning bool
	// TargetBranch is the branch a git_merge merges into.
	TargetBranch string
	// Path is the file a write_file action writes, relative to the scope
	// root (or absolute).
	Path string
	// Protect names the home folder and brabo's own paths, for the
	// protected-path rule (ProtectedTable).
	Protect Protect
	// Tool is the tool an mcp_tool action calls, server__tool.
	Tool string
	// McpMapped is true when a maintainer mapped Tool (McpToolMapped):
	// a developer may then approve it; otherwise it needs a maintainer.
	McpMapped bool
}

// Autonomy holds an agent's agent_autonomy rules that apply to one type:
// the specific rule (agent, type) and the wildcard (agent, "*"). The empty
// Policy is "no rule".
type Autonomy struct {
	Specific brabo.Policy
	Wildcard brabo.Policy
}

// resolve returns the rule that applies (specific over wildcard) and its
// origin.
func (a Autonomy) resolve() (brabo.Policy, brabo.AutonomyOrigin) {
	if a.Specific != "" {
		return a.Specific, brabo.OriginSpecific
	}
	if a.Wildcard != "" {
		return a.Wildcard, brabo.OriginWildcard
	}
	return "", ""
}

// ProtectedBranches are the merge targets a git_merge never auto-approves
// into (DESIGN §4.6).
var ProtectedBranches = []string{"dev", "qa", "rc", "main"}

// Decide returns the decision for in, with the order of DESIGN §4.1: IAM,
// base and container floor, agent_autonomy, permissions.json with the
// built-in denies, caps. A deny returns at once; a silent stage never
// changes the current value; a cap only turns auto_approve into
// require_approval.
func Decide(in Input) (d brabo.Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = brabo.Decision{Policy: brabo.RequireApproval,
				Reason: fmt.Sprintf("internal: the policy engine failed (%v); a human decides", r)}
		}
	}()
	d.ScopeRoot = brabo.ScopeRoot{Mode: in.Scope.Mode, ID: in.Scope.ID}
	d.Warnings = in.Rules.Warnings()
	d.RequiredRole = in.Type.MinRole()
	if !in.Type.Valid() {
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("invalid action: unknown type %q", in.Type)
		return d
	}
	// 1. IAM: the file cannot grant what IAM denies.
	if min := in.Type.MinRole(); !in.Role.AtLeast(min) {
		d.Policy, d.Reason = brabo.Deny, fmt.Sprintf("iam: %s requires %s", in.Type, min)
		return d
	}
	// 2. Base, and the container floor.
	d.Policy, d.Reason = brabo.RequireApproval, "default: no rule approves it"
	if in.Type == brabo.Terminal && in.ContainerRunning {
		d.Policy, d.Reason = brabo.AutoApprove, "container floor"
	}
	// 3. agent_autonomy: specific over wildcard, the origin kept.
	mode, origin := in.Autonomy.resolve()
	autoMode := false
	if mode.Valid() {
		d.Policy, d.Reason = mode, fmt.Sprintf("agent_autonomy: %s (%s)", mode, origin)
		if mode == brabo.Deny {
			return d
		}
		autoMode = mode == brabo.AutoApprove && origin == brabo.OriginWildcard
	} else if mode != "" {
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("agent_autonomy: unknown mode %q", mode)
		return d
	}
	// 4. permissions.json and the built-in denies; 5. caps.
	if in.Type == brabo.Terminal {
		decideTerminal(&d, in, autoMode)
	} else {
		decideTyped(&d, in)
		typedProtected(&d, in)
		decideOnlyTypes(&d, in)
	}
	return d
}

func decideTyped(d *brabo.Decision, in Input) {
	defer func() {
		// An invalid file approves nothing; what it could read still denies.
		if err := in.Rules.Err(); err != nil && d.Policy != brabo.Deny {
			d.Policy, d.Reason = brabo.RequireApproval, invalidFileReason(err)
		}
	}()
	rel, inScope := relativeTo(in.Path, in.Scope.Root)
lists:
	for _, k := range []listKind{listDeny, listAsk, listAllow} {
		l := in.Rules.list(k)
		if l == nil {
			continue
		}
		for _, i := range l.typed[in.Type] {
			p := &l.patterns[i]
			if pathLabel(string(in.Type)) && p.path.els != nil && (!inScope || !p.path.match(rel)) {
				continue // WriteFile(src/**) names paths, and this is not one
			}
			if in.Type == brabo.McpTool && !p.tool.match(in.Tool) {
				continue // McpTool(github__*) names tools, and this is not one
			}
			d.Policy = [...]brabo.Policy{brabo.AutoApprove, brabo.Deny, brabo.RequireApproval}[k]
			d.Reason = fmt.Sprintf("%s %s: %s", fileLabel, listNames[k], p.source)
			if k == listDeny {
				return
			}
			break lists
		}
	}
	if d.Policy != brabo.AutoApprove {
		return
	}
	switch in.Type {
	case brabo.GitPush, brabo.PrOpen:
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("cap: %s leaves the machine; a human approves every one", in.Type)
	case brabo.GitMerge:
		if b := mergeTarget(in.TargetBranch); b == "" {
			d.Policy, d.Reason = brabo.RequireApproval, "cap: git_merge names no target branch"
		} else if isProtected(b) {
			d.Policy, d.Reason = brabo.RequireApproval, "cap: git_merge into the protected branch "+b
		}
	case brabo.InstructionPatch:
		d.Policy, d.Reason = brabo.RequireApproval, "cap: instruction_patch (see the diff before one agent changes another's behaviour)"
	case brabo.Parallelize, brabo.RaiseMaxParallel:
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("cap: %s (spending on more agents is a human decision)", in.Type)
	case brabo.ContainerRemove:
		d.Policy, d.Reason = brabo.RequireApproval, "cap: container_remove (forces a full reprovision)"
	}
}

func mergeTarget(b string) string {
	b = strings.TrimSpace(b)
	b = strings.TrimPrefix(b, "refs/heads/")
	return b
}

func isProtected(b string) bool {
	for _, p := range ProtectedBranches {
		if b == p {
			return true
		}
	}
	return false
}

// invalidFileReason names what is wrong without the file's absolute path,
// which a reason (stored in events every member reads) must not expose.
func invalidFileReason(err error) string {
	var fe *FileError
	if errors.As(err, &fe) {
		local := *fe
		local.File = "permissions.json invalid"
		return local.Error()
	}
	return "permissions.json invalid: " + err.Error()
}

// fileLabel is how reasons name the permissions file.
const fileLabel = "permissions.json"

func decideTerminal(d *brabo.Decision, in Input, autoMode bool) {
	root := in.Scope.Root
	rootErr := CheckRoot(root)
	cwd := in.Cwd
	switch {
	case cwd == "":
		cwd = root
	case !strings.HasPrefix(cwd, "/"):
		cwd = path.Join(root, cwd)
	default:
		cwd = path.Clean(cwd)
	}
	an, err := analyze(in.Command, cwdSet{dirs: []string{cwd}})
	if err != nil {
		d.Policy, d.Reason = brabo.RequireApproval, err.Error()
		return
	}
	segs := an.segs
	rules := in.Rules
	verdicts := make([]brabo.Segment, len(segs))
	for i, s := range segs {
		verdicts[i] = judge(s, rules, root)
	}
	writes, reads := protectedHits(segs, verdicts, in.Protect, root)
	raise := raisedRole(segs, writes)
	d.Segments = clipSegments(verdicts)
	if raise != "" {
		d.RequiredRole = brabo.Maintainer
		if raise != "opaque" && raise != "protected" && !in.Role.AtLeast(brabo.Maintainer) {
			// IAM applies the same raise as the typed action's: a
			// developer's terminal git push is denied like its git_push.
			d.Policy, d.Reason = brabo.Deny, "iam: "+raise+" requires maintainer"
			return
		}
	}
	defer protectedCap(d, writes, reads)

	// The file's opinion (DESIGN §4.4); the built-in denies hold even when
	// the file is invalid, and past the analysis' bounds.
	for _, v := range verdicts {
		if v.Verdict == brabo.VerdictDeny {
			d.Policy, d.Reason = brabo.Deny, v.Rule
			return
		}
	}
	if an.overflow != "" {
		d.Policy, d.Reason = brabo.RequireApproval, "cap: "+an.overflow+"; a human reads it"
		return
	}
	if err := rules.Err(); err != nil {
		d.Policy, d.Reason = brabo.RequireApproval, invalidFileReason(err)
		return
	}
	compound := fileOpinion(d, verdicts, autoMode)
	if d.Policy != brabo.AutoApprove {
		return
	}
	terminalCaps(d, segs, in, root, rootErr, autoMode)
	if d.Policy == brabo.AutoApprove && compound != "" {
		d.Policy, d.Reason = brabo.RequireApproval, compound
	}
}

// What a decision shows of its segments is bounded, so that a stored
// decision stays small whatever the line (DESIGN §9, "Bounded analysis").
const (
	maxSegmentText = 1024
	maxTokenText   = 256
	maxTokens      = 64
)

// clipSegments bounds the text and tokens of each segment in place.
func clipSegments(v []brabo.Segment) []brabo.Segment {
	for i := range v {
		v[i].Text = clip(v[i].Text, maxSegmentText)
		if len(v[i].Tokens) > maxTokens {
			v[i].Tokens = append(v[i].Tokens[:maxTokens:maxTokens], fmt.Sprintf("… %d more", len(v[i].Tokens)-maxTokens))
		}
		for j, t := range v[i].Tokens {
			v[i].Tokens[j] = clip(t, maxTokenText)
		}
	}
	return v
}

// clip cuts s to at most n bytes on a rune boundary, saying how much it
// left out.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// judge gives one segment its verdict from the built-in denies and the file.
func judge(s *segment, rules *Rules, root string) brabo.Segment {
	v := brabo.Segment{Text: s.text, Tokens: s.tokens()}
	if s.bare && s.opaque == "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, "a variable assignment: no rule can allow it"
		if len(s.assigns) == 0 {
			v.Verdict, v.Rule = brabo.VerdictNoRule, "a redirection with no program: no rule can allow it"
		}
		return v
	}
	if rule, ok := matchAny(builtinRules, listDeny, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictDeny, "built-in deny: "+rule
		return v
	}
	if rule, ok := matchAny(rules, listDeny, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictDeny, fileLabel+" deny: "+rule
		return v
	}
	if rule, ok := matchAny(rules, listAsk, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictAsk, fileLabel+" ask: "+rule
		return v
	}
	if rules.Err() != nil {
		v.Verdict, v.Rule = brabo.VerdictNoRule, "permissions.json invalid"
		return v
	}
	if s.opaque != "" {
		v.Verdict, v.Rule = brabo.VerdictOpaque, "opaque: "+s.opaque
		return v
	}
	if base(s.verb()) == "cd" && s.verb() == "cd" {
		if _, known := cdTarget(s); known && outside(s, root) == "" && CheckRoot(root) == nil {
			v.Verdict, v.Rule = brabo.VerdictCd, "scope: cd inside the project folder"
			return v
		}
	}
	if s.progEnv != "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, s.progEnv+" set on the line may change what the program does: no allow pattern covers it"
		return v
	}
	if rule, why, ok := matchAllow(rules, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictAllow, fileLabel+" allow: "+rule
		return v
	} else if why != "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, why
		return v
	}
	v.Verdict, v.Rule = brabo.VerdictNoRule, "no rule"
	return v
}

// matchAny finds the first pattern (in file order) of list k that matches the
// segment, comparing a verb written as a path by its basename too, and
// skipping leading options wherever a subcommand may start: deny and ask
// see through global options at least as widely as allow does (git -C .
// reset --hard meets Terminal(git reset --hard)).
func matchAny(r *Rules, k listKind, s *segment, tokens []string) (string, bool) {
	l := r.list(k)
	if l == nil || len(tokens) == 0 {
		return "", false
	}
	best := -1
	visit := func(i int) bool {
		if best < 0 || i < best {
			best = i
		}
		return true
	}
	verbs := []string{tokens[0]}
	if b := base(tokens[0]); b != tokens[0] {
		verbs = append(verbs, b)
	}
	alt := make([]string, 0, len(tokens))
	for _, v := range verbs {
		alt = append(alt[:0], v)
		l.terminal.match(append(alt, tokens[1:]...), visit)
		for _, at := range subcommandStarts(tokens) {
			if at > 1 {
				alt = append(alt[:0], v)
				l.terminal.match(append(alt, tokens[at:]...), visit)
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return l.patterns[best].source, true
}

// matchAllow finds the first allow pattern that matches the segment as
// written (never by basename) and, for a seeded read-only pattern, only if
// the segment just reads. When only guarded patterns matched, why says what
// they do not cover.
func matchAllow(r *Rules, s *segment, tokens []string) (rule, why string, ok bool) {
	l := r.list(listAllow)
	if l == nil || len(tokens) == 0 {
		return "", "", false
	}
	best := -1
	visit := func(i int) bool {
		if best >= 0 && i > best {
			return true
		}
		p := &l.patterns[i]
		if p.readOnly {
			if v := readOnlyViolation(s); v != "" {
				why = fmt.Sprintf("%s only covers reading: %s", p.source, v)
				return true
			}
		}
		best = i
		return true
	}
	l.terminal.match(tokens, visit)
	if at := harmlessGlobals(tokens); at > 1 {
		// git --no-pager log, git -C src status: the options do not change
		// what runs (-C's folder is checked as a path).
		l.terminal.match(append([]string{tokens[0]}, tokens[at:]...), visit)
	}
	if best < 0 {
		return "", why, false
	}
	return l.patterns[best].source, "", true
}

// gitHarmlessGlobals are git's options before the subcommand that change
// neither the program that runs nor the configuration it reads; the value
// says whether the option takes the next word (-C's folder).
var gitHarmlessGlobals = map[string]bool{
	"--no-pager": false, "-P": false, "-C": true, "--no-optional-locks": false,
	"--literal-pathspecs": false, "--glob-pathspecs": false, "--noglob-pathspecs": false,
	"--icase-pathspecs": false, "--no-replace-objects": false, "--no-advice": false,
}

// harmlessGlobals returns where git's subcommand starts when only harmless
// global options stand before it, or 0.
func harmlessGlobals(tokens []string) int {
	if tokens[0] != "git" {
		return 0
	}
	i := 1
	for i < len(tokens) {
		takesNext, ok := gitHarmlessGlobals[tokens[i]]
		if !ok {
			break
		}
		i++
		if takesNext {
			i++
		}
	}
	if i == 1 || i >= len(tokens) || strings.HasPrefix(tokens[i], "-") {
		return 0
	}
	return i
}

// fileOpinion combines the segments' verdicts (DESIGN §4.4). It returns
// the compound rule's reason when the rule is still to apply: a compound
// line that is not all allowed asks, whatever the base (the container
// floor, a specific autonomy rule) — only auto mode drops this synthesised
// opinion (DESIGN §9, "Compound rule"). When no segment matched anything,
// the rule is applied after the caps, whose reasons say more.
func fileOpinion(d *brabo.Decision, verdicts []brabo.Segment, autoMode bool) (compound string) {
	var ask, unmatched *brabo.Segment
	allowRules := make([]string, 0, len(verdicts))
	cd := false
	for i := range verdicts {
		v := &verdicts[i]
		switch v.Verdict {
		case brabo.VerdictAsk:
			if ask == nil {
				ask = v
			}
		case brabo.VerdictAllow:
			if !containsString(allowRules, v.Rule) {
				allowRules = append(allowRules, v.Rule)
			}
		case brabo.VerdictCd:
			cd = true
		default:
			if unmatched == nil {
				unmatched = v
			}
		}
	}
	if unmatched != nil && !autoMode && len(verdicts) > 1 {
		compound = fmt.Sprintf("compound: the segment %q has no rule", clip(unmatched.Text, 200))
		if unmatched.Rule != "no rule" {
			compound += " (" + unmatched.Rule + ")"
		}
	}
	switch {
	case ask != nil:
		d.Policy, d.Reason = brabo.RequireApproval, ask.Rule
	case unmatched == nil && len(verdicts) > 0:
		// A line that runs no program (a comment, [[ … ]]) matched nothing:
		// the file is silent on it, it does not approve it.
		d.Policy, d.Reason = brabo.AutoApprove, allowReason(allowRules, cd)
	case (len(allowRules) > 0 || cd) && compound != "":
		// Some segments matched: the rule applies at once.
		d.Policy, d.Reason = brabo.RequireApproval, compound
	default:
		return compound
	}
	return ""
}

func allowReason(rules []string, cd bool) string {
	if len(rules) == 0 {
		return "scope: cd inside the project folder"
	}
	if len(rules) == 1 && !cd {
		return rules[0]
	}
	// "permissions.json allow: A", "permissions.json allow: B" → one list
	const cdReason = "; scope: cd inside the project folder"
	n := len(cdReason)
	for _, r := range rules {
		n += len(r) + 2
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(rules[0])
	for _, r := range rules[1:] {
		if _, after, ok := strings.Cut(r, " allow: "); ok {
			b.WriteString(", ")
			b.WriteString(after)
		}
	}
	if cd {
		b.WriteString(cdReason)
	}
	return b.String()
}

// terminalCaps applies the caps of DESIGN §4.6 to an auto-approved
// terminal action.
func terminalCaps(d *brabo.Decision, segs []*segment, in Input, root string, rootErr error, autoMode bool) {
	capTo := func(i int, note, reason string) {
		d.Policy, d.Reason = brabo.RequireApproval, reason
		if i >= 0 {
			d.Segments[i].Notes = append(d.Segments[i].Notes, note)
		}
	}
	// External effect and privilege run first and ignore the origin.
	for i := range segs {
		toks := d.Segments[i].Tokens
		if isPrivileged(toks) {
			capTo(i, "privileged", "cap: privileged command "+base(toks[0])+" (a human approves every privilege gain)")
			return
		}
		if e := externalEffect(toks); e != nil {
			capTo(i, "external effect", externalReason(e))
			return
		}
		if cmd, ok := embeddedEffect(toks); ok && !segs[i].wraps {
			capTo(i, "external effect", fmt.Sprintf("cap: %s may run %q, which leaves the machine or gains privilege", base(toks[0]), cmd))
			return
		}
	}
	if rootErr != nil {
		capTo(-1, "", "scope: invalid project folder: "+rootErr.Error())
		return
	}
	// What cannot be seen cannot be promised a human stop.
	for i, s := range segs {
		if s.opaque != "" {
			capTo(i, "opaque", "cap: opaque segment "+fmt.Sprintf("%q", s.text)+" ("+s.opaque+")")
			return
		}
	}
	if autoMode {
		return // auto mode frees the path scope
	}
	for i, s := range segs {
		if why := outside(s, root); why != "" {
			capTo(i, why, "scope: "+why)
			return
		}
	}
}

func externalReason(e *effect) string {
	cmd := strings.Join(e.words, " ")
	if e.words[0] == "git" {
		cmd = strings.Join(e.words[1:], " ")
		if e.typed != "" {
			return fmt.Sprintf("cap: external-effect git %s (use the typed action %s)", cmd, e.typed)
		}
		return fmt.Sprintf("cap: external-effect git %s (remotes are configured by a human)", cmd)
	}
	if e.typed != "" {
		return fmt.Sprintf("cap: external-effect command %s (use the typed action %s)", cmd, e.typed)
	}
	return fmt.Sprintf("cap: external-effect command %s (leaves the machine)", cmd)
}

// raisedRole says why a terminal action needs a maintainer to approve it
// (DESIGN §9, "Effective role"), or "": the command of an external-effect
// or privileged segment (which IAM also applies), "protected" for a
// protected write, "opaque" for a program brabo cannot read.
func raisedRole(segs []*segment, writes []protectedHit) string {
	why := ""
	for _, s := range segs {
		toks := s.tokens()
		switch {
		case isPrivileged(toks):
			return base(toks[0])
		case externalEffect(toks) != nil:
			return strings.Join(externalEffect(toks).words, " ")
		}
		if cmd, ok := embeddedEffect(toks); ok && !s.wraps {
			return cmd
		}
		if s.opaque != "" && why == "" {
			why = "opaque"
		}
	}
	if len(writes) > 0 {
		return "protected"
	}
	return why
}

// protectedHits finds the protected paths the segments write and the
// read-protected ones they read, and notes each on its segment.
func protectedHits(segs []*segment, verdicts []brabo.Segment, p Protect, root string) (writes, reads []protectedHit) {
	for i, s := range segs {
		w, r := p.segmentHits(s, root)
		for _, h := range w {
			verdicts[i].Notes = append(verdicts[i].Notes, "protected: "+h.reason(true))
		}
		for _, h := range r {
			verdicts[i].Notes = append(verdicts[i].Notes, "protected: "+h.reason(false))
		}
		writes, reads = append(writes, w...), append(reads, r...)
	}
	return writes, reads
}

// protectedCap keeps a line that writes a protected path, or reads a
// read-protected one, from auto-approval in any mode, auto mode included:
// a human (a maintainer, for a write) decides.
func protectedCap(d *brabo.Decision, writes, reads []protectedHit) {
	if d.Policy != brabo.AutoApprove {
		return
	}
	switch {
	case len(writes) > 0:
		d.Policy, d.Reason = brabo.RequireApproval, "protected: "+writes[0].reason(true)+" (a maintainer decides)"
	case len(reads) > 0:
		d.Policy, d.Reason = brabo.RequireApproval, "protected: "+reads[0].reason(false)
	}
}

// typedProtected applies the protected-path rule to a write_file action.
func typedProtected(d *brabo.Decision, in Input) {
	if in.Type != brabo.WriteFile || in.Path == "" {
		return
	}
	root := in.Scope.Root
	abs := in.Path
	if !strings.HasPrefix(abs, "/") {
		abs = path.Join(root, abs)
	}
	abs = path.Clean(abs)
	row, ok := in.Protect.protectedPath(abs, in.Path, root)
	if !ok {
		return
	}
	d.RequiredRole = brabo.Maintainer
	protectedCap(d, []protectedHit{{path: in.Path, row: row}}, nil)
}
