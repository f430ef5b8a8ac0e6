package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Where bash and the parser (mvdan.cc/sh) read the same text differently,
// the segments the parser yields are not the programs bash runs. These are
// found on the raw text, before parsing, because the parser's own reading
// is the thing in doubt (DESIGN §9, "Words"):
//
//   - A carriage return outside quotes, or before a line feed. Bash keeps
//     it as a character of the word (a backslash before it quotes it); the
//     parser splits words on it, reads CR-LF as a line end and a
//     backslash-CR-LF as a continuation: `echo a\` CR LF `git push` runs
//     git push in bash and reads as one echo to the parser. Inside quotes,
//     and not before a line feed, both keep it.
//   - A backslash-newline where bash and the parser join differently: after
//     a `$` (`"$\` newline `HOME"` is $HOME to bash, not to the parser), at
//     the end of a comment (bash ends the comment there; the parser joins
//     the next line to it: `echo x #\` newline `git push` runs git push in
//     bash and reads as echo's arguments to the parser), in a heredoc's
//     delimiter line or its body (bash joins `EO\` newline `F` into the
//     delimiter that ends the heredoc early), and after another backslash.
//     Elsewhere (between words, inside a word, in quotes, in arithmetic)
//     the parser joins exactly where bash does, and the differential test
//     against bash checks it.
//
// Such a line gets an opaque segment: it is never auto-approved, and a
// human reads it.

// lineDisagreement returns why bash and the parser may disagree on cmd (f
// is the parser's reading of it), and the physical line where they do; ""
// when they agree.
func lineDisagreement(cmd string, f *syntax.File) (why, at string) {
	if strings.IndexByte(cmd, '\r') >= 0 {
		quoted := quotedRanges(f)
		for i := 0; i < len(cmd); i++ {
			if cmd[i] == '\r' && (i+1 < len(cmd) && cmd[i+1] == '\n' || !inRanges(quoted, i)) {
				return "the line holds a carriage return outside quotes or before a line feed, which bash and brabo's parser read differently",
					physicalLine(cmd, i)
			}
		}
	}
	heredoc := strings.Contains(cmd, "<<")
	lineStart := 0
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != '\n' {
			continue
		}
		if i > 0 && cmd[i-1] == '\\' && !continuationAgrees(cmd[lineStart:i-1], heredoc) {
			return "a backslash-newline that bash and brabo's parser join differently (after $ or a backslash, in a comment or a heredoc)",
				cmd[lineStart:i]
		}
		lineStart = i + 1
	}
	return "", ""
}

// physicalLine returns the line of s that holds byte i.
func physicalLine(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

// continuationAgrees reports whether a backslash that ends the physical
// line before is one bash and the parser both join: not after a `$` or
// another backslash, not on a line holding a '#' that could have begun a
// comment, and, in a line with a heredoc, only between words.
func continuationAgrees(before string, heredoc bool) bool {
	if strings.IndexByte(before, '#') >= 0 {
		return false
	}
	if before == "" {
		return true
	}
	switch c := before[len(before)-1]; {
	case c == ' ' || c == '\t':
		return true
	case c == '$' || c == '\\' || heredoc:
		return false
	}
	return true
}

// quotedRanges returns the byte ranges the parser read as quoted text: the
// bodies of single-quoted strings and the literal parts of double-quoted
// ones (not what they substitute).
func quotedRanges(f *syntax.File) [][2]int {
	var out [][2]int
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.SglQuoted:
			out = append(out, [2]int{int(x.Pos().Offset()), int(x.End().Offset())})
		case *syntax.DblQuoted:
			for _, p := range x.Parts {
				if l, ok := p.(*syntax.Lit); ok {
					out = append(out, [2]int{int(l.Pos().Offset()), int(l.End().Offset())})
				}
			}
		}
		return true
	})
	return out
}

func inRanges(rs [][2]int, i int) bool {
	for _, r := range rs {
		if i >= r[0] && i < r[1] {
			return true
		}
	}
	return false
}
