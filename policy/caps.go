package policy

// The caps of a terminal action (DESIGN §4.6), the protected-path rule and
// the role an approval needs (§9): what turns an auto_approve into a human
// decision, and which human.

import (
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"slices"
	"strings"

	"github.com/brabo-dev/brabo"
)

// terminalCaps applies the caps of DESIGN §4.6 to an auto-approved
// terminal action.
func terminalCaps(d *brabo.Decision, segs []*shell.Segment, leave leaveHit, root string, rootErr error, autoMode bool) {
	capTo := func(i int, note, reason string) {
		d.Policy, d.Reason = brabo.RequireApproval, reason
		if i >= 0 {
			d.Segments[i].Notes = append(d.Segments[i].Notes, note)
		}
	}
	// External effect and privilege run first and ignore the origin.
	if leave.seg >= 0 {
		capTo(leave.seg, leave.note, leave.reason)
		return
	}
	if rootErr != nil {
		capTo(-1, "", "scope: invalid project folder: "+rootErr.Error())
		return
	}
	// What cannot be seen cannot be promised a human stop.
	for i, s := range segs {
		if s.Opaque != "" {
			capTo(i, "opaque", "cap: opaque segment "+fmt.Sprintf("%q", s.Text)+" ("+s.Opaque+")")
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

func externalReason(e *shell.Effect) string {
	cmd := strings.Join(e.Words, " ")
	if e.Words[0] == "git" {
		cmd = strings.Join(e.Words[1:], " ")
		if e.Typed != "" {
			return fmt.Sprintf("cap: external-effect git %s (use the typed action %s)", cmd, e.Typed)
		}
		return fmt.Sprintf("cap: external-effect git %s (remotes are configured by a human)", cmd)
	}
	if e.Typed != "" {
		return fmt.Sprintf("cap: external-effect command %s (use the typed action %s)", cmd, e.Typed)
	}
	return fmt.Sprintf("cap: external-effect command %s (leaves the machine)", cmd)
}

// raisedRole says why a terminal action needs a maintainer to approve it
// (DESIGN §9, "Effective role"), or "": the command of an external-effect
// or privileged segment (which IAM also applies), "protected" for a
// protected write, "opaque" for a program brabo cannot read.
func raisedRole(segs []*shell.Segment, leave leaveHit, writes []protectedHit) string {
	if leave.seg >= 0 {
		return leave.cmd
	}
	why := ""
	for _, s := range segs {
		if s.Opaque != "" {
			why = "opaque"
			break
		}
	}
	if len(writes) > 0 {
		return "protected"
	}
	return why
}

// protectedHits finds the protected paths the segments write and the
// read-protected ones they read, and notes each on its segment.
func protectedHits(segs []*shell.Segment, verdicts []brabo.Segment, p Protect, root string) (writes, reads []protectedHit) {
	for i, s := range segs {
		w, r := p.segmentHits(s, root)
		for _, h := range w {
			verdicts[i].Notes = append(verdicts[i].Notes, "protected: "+h.reason(true))
			for _, rel := range h.abs {
				if !slices.Contains(verdicts[i].ProtectedWrites, rel) {
					verdicts[i].ProtectedWrites = append(verdicts[i].ProtectedWrites, rel)
				}
			}
			verdicts[i].Flags = brabo.AddFlag(verdicts[i].Flags, brabo.Flag{Kind: brabo.FlagProtected, What: clipFlag(h.path)})
		}
		for _, h := range r {
			verdicts[i].Notes = append(verdicts[i].Notes, "protected: "+h.reason(false))
			verdicts[i].Flags = brabo.AddFlag(verdicts[i].Flags, brabo.Flag{Kind: brabo.FlagProtected, What: clipFlag(h.path)})
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
	row, ok := in.Protect.protectedPath(abs, in.Path, root, true)
	if !ok {
		return
	}
	d.RequiredRole = brabo.Maintainer
	protectedCap(d, []protectedHit{{path: in.Path, row: row}}, nil)
}

// leaveHit is the first segment of a line that leaves the machine or gains
// privilege (seg -1 for none): the cap it meets and the command IAM names.
type leaveHit struct {
	seg               int
	note, reason, cmd string
}

// leavesOrGains finds the first segment with an external effect or a
// privileged verb, once for the caps and for the role an approval needs.
func leavesOrGains(segs []*shell.Segment, verdicts []brabo.Segment) leaveHit {
	for i, s := range segs {
		toks := verdicts[i].Tokens
		if shell.IsPrivileged(toks) {
			return leaveHit{seg: i, note: "privileged", cmd: shell.Base(toks[0]),
				reason: "cap: privileged command " + shell.Base(toks[0]) + " (a human approves every privilege gain)"}
		}
		if e := shell.ExternalEffect(toks); e != nil {
			return leaveHit{seg: i, note: "external effect", reason: externalReason(e), cmd: strings.Join(e.Words, " ")}
		}
		if cmd, ok := shell.EmbeddedEffect(toks); ok && !s.Wraps {
			return leaveHit{seg: i, note: "external effect", cmd: cmd,
				reason: fmt.Sprintf("cap: %s may run %q, which leaves the machine or gains privilege", shell.Base(toks[0]), cmd)}
		}
	}
	return leaveHit{seg: -1}
}
