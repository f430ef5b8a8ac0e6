package policy

// The option table (DESIGN §10), next to the
// operand table: for the seeded runners and build tools, the options that
// name a program, load a plugin, pick a configuration or an output
// location, and the options that read a list of files or a script from a
// file. docs/shell-analysis.md says where each row comes from.
//
// Such an option makes the segment match no allow pattern that does not
// itself name the option, unless its value is a literal path inside the
// project that is not protected and that the same line does not write
// (runOptionWhy). A list or a script read from a file always asks: its
// content is what runs, and the decision does not see it.

import (
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"
)

// runOptionWhy says why an option of the table makes a segment ask, or ""
// when its value is a literal path inside the project, not protected and
// not written by the line (written holds the absolute paths the line
// writes).
func runOptionWhy(s *shell.Segment, h *shell.RunOpt, root string, p Protect, written []string) string {
	prog := shell.Base(s.Verb())
	say := func(why string) string {
		v := h.Value.Text
		if h.Spec.Flag || v == "" {
			return fmt.Sprintf("%s %s %s: no rule covers it unless it names the option", prog, h.Name, shell.OptKindNames[h.Spec.Kind])
		}
		return fmt.Sprintf("%s %s %s %s (%s): no rule covers it unless it names the option", prog, h.Name, shell.Clip(v, 80), shell.OptKindNames[h.Spec.Kind], why)
	}
	switch {
	case h.Spec.Kind == shell.OptList || h.Spec.Kind == shell.OptScript:
		return say("its content is not on the line")
	case h.Spec.Flag:
		return say("")
	case h.Spec.NoPath:
		return say("not a path")
	case !h.Value.Static:
		return say("the line computes it")
	}
	v := h.Value.Text
	if shell.ContainsString(h.Spec.Names, v) {
		return ""
	}
	for _, pre := range h.Spec.Prefixes {
		if strings.HasPrefix(v, pre) {
			return ""
		}
	}
	if h.Spec.Kind == shell.OptProgram && !strings.Contains(v, "/") || h.Spec.Kind == shell.OptPlugin && !strings.Contains(v, "/") {
		return say("a name found elsewhere, not a file in the project")
	}
	if v == "" || root == "" || strings.ContainsAny(v, "=$`~*?[ \t\n") || strings.HasPrefix(v, "-") {
		return say("not a path in the project")
	}
	if s.Cwds.Unknown && !strings.HasPrefix(v, "/") {
		return say("relative to a directory the line does not show")
	}
	for _, c := range shell.PathCandidates(v, s.Cwds) {
		switch {
		case !shell.Within(c, root):
			return say("outside the project folder")
		case h.Spec.Kind != shell.OptOutput && c == root && h.Spec.Kind != shell.OptConfig:
			return say("the project folder itself")
		}
		if _, prot := p.protectedPathAt(c, v, root, true, false); prot {
			return say("a protected path")
		}
		if h.Spec.Kind == shell.OptOutput {
			continue // the option's own write; the scope and the protected rule check it
		}
		for _, w := range written {
			if shell.Within(c, w) || shell.Within(w, c) {
				return say("the line writes it")
			}
		}
	}
	return ""
}

// lineWrites returns the absolute paths the segments write, from every
// directory each may run in.
func lineWrites(segs []*shell.Segment) []string {
	var out []string
	for _, s := range segs {
		for _, pw := range s.Paths {
			if pw.Kind != shell.ArgWrite || pw.Implied {
				continue
			}
			for _, c := range shell.PathCandidates(pw.Text, s.Cwds) {
				out = append(out, path.Clean(c))
			}
		}
	}
	return out
}

// uncoveredOption returns why an option of the table that the allow
// pattern of n tokens (matched from word shift on) does not name makes the
// segment ask, or "".
func uncoveredOption(s *shell.Segment, n, shift int) string {
	for i := range s.RunOpts {
		h := &s.RunOpts[i]
		if h.Why != "" && h.End >= n+shift {
			return h.Why
		}
	}
	return ""
}
