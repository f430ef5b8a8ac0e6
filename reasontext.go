package brabo

import (
	"fmt"
	"strings"
)

// ReasonText is the one sentence a person and the agent read for where an
// action stands and why, in plain words, built from what is stored: the
// reason exactly as policy.Decide wrote it (Reason stays the engine's
// stable sentence, which the events and the seed keep), the decision's
// segments and the card's flags, the status, and for a human's decision
// the name of who took it (decider; "" reads "a human").
//
//   - pending: what the action does, why it asks, who may approve it:
//     "pushing main to origin asks a human: a force push rewrites the
//     remote branch main; nothing in permissions.json allows a git_push.
//     A maintainer or above may approve it."
//   - approved by a human: "approved by mia" (not why it was held: it is
//     no longer held);
//   - denied by a human: "denied by mia: <their reason>";
//   - decided by the rules: "auto-approved: …", "denied: …".
//
// The web card, the API (reasonText), the hook's answers to the agent and
// the CLI all show this sentence, so they never disagree.
func ReasonText(a *ProposedAction, decider string) string {
	if a == nil {
		return ""
	}
	who := decider
	if who == "" {
		who = "a human"
	}
	byHuman := a.DecidedBy != ""
	switch a.Status {
	case StatusPending:
		return pendingText(a)
	case StatusDenied:
		if byHuman {
			r := strings.TrimSpace(a.Reason)
			if r == "" {
				return "denied by " + who
			}
			return "denied by " + who + ": " + r
		}
		return "denied: " + why(a)
	case StatusApproved, StatusExecuted, StatusFailed, StatusNotRun:
		if byHuman {
			return "approved by " + who
		}
		if a.Status == StatusApproved {
			return "approved"
		}
		return "auto-approved: " + why(a)
	case StatusAutoApproved:
		return "auto-approved: " + why(a)
	case StatusAbandoned:
		if r := strings.TrimSpace(a.Reason); r != "" {
			return r
		}
		return "abandoned: the agent no longer waits for it; it did not run"
	}
	return why(a)
}

// pendingText is a pending action's sentence: what, why, who.
func pendingText(a *ProposedAction) string {
	w := why(a)
	s := "asks a human: " + w
	if what := doing(a); what != "" && !strings.Contains(w, what) {
		s = what + " " + s
	}
	if a.Type == "" {
		return s // an event's sentence: no action to name the roles of
	}
	need, deny := EffectiveRole(a.Type, a.Decision), a.Type.MinRole()
	s += ". " + capital(article(string(need))) + " or above may approve it"
	if need != deny {
		s += "; " + article(string(deny)) + " or above may deny it"
	}
	return s
}

// doing is what the action does, in a few words ("pushing main to
// origin"); "" when the action names nothing.
func doing(a *ProposedAction) string {
	p := a.Payload
	switch a.Type {
	case Terminal:
		if p.Command != "" {
			return quote(FirstLine(p.Command))
		}
	case WriteFile:
		if p.Path != "" {
			return "writing " + clipText(p.Path, 200)
		}
	case ReadFile:
		if p.Path != "" {
			return "reading " + clipText(p.Path, 200)
		}
	case GitCommit:
		if p.Message != "" {
			return "the commit “" + clipText(FirstLine(p.Message), 120) + "”"
		}
	case GitPush:
		if p.Branch != "" {
			return "pushing " + p.Branch + " to " + remoteName(p.Remote)
		}
	case PrOpen:
		if p.Branch != "" {
			return "the pull request " + p.Branch + " → " + p.Base
		}
	case GitMerge:
		if p.PR > 0 {
			return "merging " + FirstLine(Subject(a))
		}
	}
	if a.Type == "" {
		return ""
	}
	if s := FirstLine(Subject(a)); s != "" {
		return string(a.Type) + " " + clipText(s, 120)
	}
	return string(a.Type)
}

// why is the stored reason in plain words, led by the risk a card flags
// that a reader must not miss (a force push).
func why(a *ProposedAction) string {
	w := ruleWords(a)
	if f := forceText(a); f != "" && !strings.Contains(w, f) {
		w = f + "; " + w
	}
	return w
}

// forceText says a force push in words, "" when there is none.
func forceText(a *ProposedAction) string {
	if pv := a.Preview; pv != nil && pv.Push != nil && pv.Push.Force {
		return "a force push rewrites the remote branch " + pv.Push.Branch + " (brabo never forces: the remote refuses it)"
	}
	for _, s := range a.Decision.Segments {
		for _, f := range s.Flags {
			if f.Kind == FlagForce {
				if b := pushedBranch(s.Tokens); b != "" {
					return "a force push rewrites the remote branch " + b
				}
				return "a force push rewrites a remote branch"
			}
		}
	}
	return ""
}

// pushedBranch is the branch a git push's tokens name on the remote:
// the second operand after push (the first is the remote), its
// destination when it is a refspec.
func pushedBranch(toks []string) string {
	at := -1
	for i, t := range toks {
		if t == "push" {
			at = i
			break
		}
	}
	if at < 0 {
		return ""
	}
	var ops []string
	for _, t := range toks[at+1:] {
		if !strings.HasPrefix(t, "-") {
			ops = append(ops, t)
		}
	}
	if len(ops) < 2 {
		return ""
	}
	ref := strings.TrimPrefix(ops[1], "+")
	if _, dst, ok := strings.Cut(ref, ":"); ok {
		ref = dst
	}
	return strings.TrimPrefix(ref, "refs/heads/")
}

// ruleWords turns the reason Decide stored into plain words. Every stable
// prefix Decide writes has its sentence; an unknown one is shown as
// stored.
func ruleWords(a *ProposedAction) string {
	r := strings.TrimSpace(a.Reason)
	if r == "" {
		return "not recorded"
	}
	head, rest, _ := strings.Cut(r, ": ")
	switch {
	case r == "default: no rule approves it":
		return "nothing in permissions.json allows " + target(a)
	case r == "container floor" || strings.HasPrefix(r, "container floor:"):
		return "it runs in the project's own container (the container floor)"
	case head == "permissions.json allow" || head == "agent allow":
		return allowWords(r)
	case head == "permissions.json ask":
		return "permissions.json asks a human for " + segmentOf(a, r) + " (" + rest + ")"
	case head == "permissions.json deny":
		return "permissions.json denies " + segmentOf(a, r) + " (" + rest + ")"
	case head == "built-in deny":
		return "brabo's built-in rules deny " + segmentOf(a, r) + " (" + rest + ")"
	case head == "permissions.json invalid" || strings.HasPrefix(r, "permissions.json invalid"):
		return "permissions.json is invalid, so it allows nothing (" + r + ")"
	case head == "agent_autonomy":
		return autonomyWords(a, rest)
	case head == "iam":
		if t, role, ok := strings.Cut(rest, " requires "); ok {
			return "a " + t + " needs the role " + role + ", and the member it acts for has less"
		}
	case head == "cap":
		return capWords(a, rest)
	case head == "protected":
		return protectedWords(rest)
	case head == "scope":
		return scopeWords(rest)
	case head == "compound":
		if seg, _, ok := strings.Cut(strings.TrimPrefix(rest, "the segment "), " has no rule"); ok {
			return "nothing in permissions.json allows " + quote(strings.Trim(seg, `"`)) + ", one part of the line"
		}
	case head == "network":
		return rest
	case head == "internal":
		return "brabo's policy engine failed on it, so a human decides"
	case head == "invalid action":
		return "brabo does not know this action (" + rest + ")"
	}
	return r
}

// target is what the default names as unallowed: the command, or the type.
func target(a *ProposedAction) string {
	if a.Type == Terminal && a.Payload.Command != "" {
		return quote(FirstLine(a.Payload.Command))
	}
	if len(a.Decision.Segments) == 1 {
		return quote(a.Decision.Segments[0].Text)
	}
	if a.Type == "" {
		return "it"
	}
	return "a " + string(a.Type)
}

// segmentOf is the segment whose rule the reason names, quoted, or "it".
func segmentOf(a *ProposedAction, rule string) string {
	for _, s := range a.Decision.Segments {
		if s.Rule == rule && len(a.Decision.Segments) > 1 {
			return quote(s.Text)
		}
	}
	if a.Type == Terminal && a.Payload.Command != "" {
		return quote(FirstLine(a.Payload.Command))
	}
	return "it"
}

// allowWords: "permissions.json allow: A, B; agent allow: C; scope: cd …".
func allowWords(r string) string {
	var parts []string
	for _, p := range strings.Split(r, "; ") {
		src, pats, ok := strings.Cut(p, " allow: ")
		switch {
		case ok && src == "agent":
			parts = append(parts, "the agent's own patterns allow "+pats)
		case ok:
			parts = append(parts, src+" allows it ("+pats+")")
		case p == "scope: cd inside the project folder":
			parts = append(parts, "a cd inside the project folder")
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

// autonomyWords: "auto_approve (wildcard)", "deny (specific)".
func autonomyWords(a *ProposedAction, rest string) string {
	mode, origin, _ := strings.Cut(rest, " (")
	origin = strings.TrimSuffix(origin, ")")
	if strings.HasPrefix(mode, "unknown mode") {
		return "the agent's autonomy rule has an " + mode + ", so a human decides"
	}
	rule := "the agent's autonomy rule for " + string(a.Type)
	if a.Type == "" {
		rule = "the agent's autonomy rule for this type"
	}
	if AutonomyOrigin(origin) == OriginWildcard {
		switch Policy(mode) {
		case AutoApprove:
			return "the agent is in auto mode"
		case RequireApproval:
			return "the agent is in manual mode"
		}
		rule = "the agent's autonomy rule for every type"
	}
	switch Policy(mode) {
	case AutoApprove:
		return rule + " approves it"
	case RequireApproval:
		return rule + " asks a human"
	case Deny:
		return rule + " denies it"
	}
	return rule + ": " + mode
}

// capWords is a cap's reason in words.
func capWords(a *ProposedAction, rest string) string {
	switch {
	case strings.HasSuffix(rest, " leaves the machine; a human approves every one"):
		t := strings.TrimSuffix(rest, " leaves the machine; a human approves every one")
		return "a " + t + " leaves the machine, and a human approves every one"
	case strings.HasPrefix(rest, "external-effect git "):
		cmd, why, _ := strings.Cut(strings.TrimPrefix(rest, "external-effect git "), " (")
		why = strings.TrimSuffix(why, ")")
		if t, ok := strings.CutPrefix(why, "use the typed action "); ok {
			return quote("git "+cmd) + " reaches a remote, and a human approves every one (the typed action " + t + " does it with brabo's own credentials)"
		}
		return quote("git "+cmd) + " changes the repository's remotes, which a human configures"
	case strings.HasPrefix(rest, "external-effect command "):
		cmd, why, _ := strings.Cut(strings.TrimPrefix(rest, "external-effect command "), " (")
		why = strings.TrimSuffix(why, ")")
		if t, ok := strings.CutPrefix(why, "use the typed action "); ok {
			return quote(cmd) + " leaves the machine, and a human approves every one (the typed action " + t + " does it)"
		}
		return quote(cmd) + " leaves the machine, and a human approves every one"
	case strings.HasPrefix(rest, "privileged command "):
		cmd, _, _ := strings.Cut(strings.TrimPrefix(rest, "privileged command "), " (")
		return quote(cmd) + " gains privilege, and a human approves every privilege gain"
	case strings.HasPrefix(rest, "opaque segment "):
		seg, why, _ := strings.Cut(strings.TrimPrefix(rest, "opaque segment "), " (")
		return "brabo cannot tell what " + quote(strings.Trim(seg, `"`)) + " runs (" + strings.TrimSuffix(why, ")") + ")"
	case rest == "git_merge names no target branch":
		return "the merge names no target branch"
	case strings.HasPrefix(rest, "git_merge into the protected branch "):
		return "it merges into the protected branch " + strings.TrimPrefix(rest, "git_merge into the protected branch ")
	case strings.HasPrefix(rest, "instruction_patch"):
		return "it changes another agent's instructions, and a human reads the diff first"
	case strings.HasSuffix(rest, "(spending on more agents is a human decision)"):
		return "it spends on more agents, which a human decides"
	case strings.HasPrefix(rest, "container_remove"):
		return "removing the container forces a full reprovision, which a human decides"
	case strings.HasPrefix(rest, "container_handoff"):
		return "a maintainer accepts every container handoff"
	case strings.HasSuffix(rest, "; a human reads it"):
		return "the command is past what brabo reads (" + strings.TrimSuffix(rest, "; a human reads it") + "), so a human reads it"
	}
	return "a cap holds it: " + rest
}

// protectedWords: "writes P: why (a maintainer decides)", "reads P: why".
func protectedWords(rest string) string {
	verb, obj, _ := strings.Cut(rest, " ")
	obj = strings.TrimSuffix(obj, " (a maintainer decides)")
	p, why, ok := strings.Cut(obj, ": ")
	if !ok {
		return "it " + rest
	}
	s := "it " + verb + " " + p + ", a protected file (" + why + ")"
	if verb == "writes" {
		s += ", which a maintainer decides"
	}
	return s
}

// scopeWords: the path scope's findings.
func scopeWords(rest string) string {
	switch {
	case rest == "cd inside the project folder":
		return "a cd inside the project folder"
	case rest == "a read inside the project folder":
		return "a read inside the project folder"
	case strings.HasPrefix(rest, "invalid project folder"):
		return "the project folder is not valid (" + strings.TrimPrefix(strings.TrimPrefix(rest, "invalid project folder"), ": ") + ")"
	}
	return "it reaches " + rest
}

// quote puts a command or a segment in backquotes, clipped.
func quote(s string) string { return "`" + clipText(s, 160) + "`" }

// clipText shortens s to n bytes at a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func remoteName(r string) string {
	if r == "" {
		return "origin"
	}
	return r
}

// article puts "a" or "an" before a word.
func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// decisionText is ReasonText for a sentence known only by its status and
// reason (an event's), with the scope root the path scope compared
// against.
func decisionText(status ActionStatus, reason string, scope ScopeRoot) string {
	var s string
	if strings.TrimSpace(reason) == "" {
		s = "not recorded"
	} else {
		s = ReasonText(&ProposedAction{Status: status, Reason: reason}, "")
	}
	switch {
	case scope.ID != "" && scope.Mode != "":
		s += fmt.Sprintf(" (scope root: %s/%s)", scope.Mode, scope.ID)
	case scope.ID != "":
		s += " (scope root: " + scope.ID + ")"
	}
	return s
}
