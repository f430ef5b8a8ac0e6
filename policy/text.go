package policy

import "strings"

// Where bash and the parser (mvdan.cc/sh) read the same text differently,
// the segments the parser yields are not the programs bash runs. These are
// found on the raw text, before parsing, because the parser's own reading
// is the thing in doubt (DESIGN §9, "Words"):
//
//   - A carriage return. Bash keeps it as a character of the word (a
//     backslash before it quotes it); the parser reads CR-LF as a line end
//     and a backslash-CR-LF as a continuation: `echo a\` CR LF `git push`
//     runs git push in bash and reads as one echo to the parser.
//   - A backslash-newline anywhere but between words. Bash removes it
//     before it reads tokens (inside double quotes after a `$`, in a
//     heredoc's delimiter line), except in a comment, where it is the
//     comment's last character: `echo x #\` newline `git push` runs git
//     push in bash and reads as echo's arguments to the parser. Between
//     words (a blank before it, the usual `cmd \` line break) both agree.
//
// Such a line gets an opaque segment: it is never auto-approved, and a
// human reads it.

// lineDisagreement returns why bash and the parser may disagree on cmd,
// and the physical line where they do; "" when they agree.
func lineDisagreement(cmd string) (why, at string) {
	if i := strings.IndexByte(cmd, '\r'); i >= 0 {
		return "the line holds a carriage return, which bash and brabo's parser read differently", physicalLine(cmd, i)
	}
	lineStart := 0
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '\n':
			if i > 0 && cmd[i-1] == '\\' && !continuationBetweenWords(cmd[lineStart:i-1]) {
				return "a backslash-newline inside a word or a comment, which bash and brabo's parser join differently",
					cmd[lineStart:i]
			}
			lineStart = i + 1
		}
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

// continuationBetweenWords reports whether a backslash that ends the
// physical line before stands between words: the character before it is a
// blank (or there is none), and the line holds no '#' that could have begun
// a comment.
func continuationBetweenWords(before string) bool {
	if strings.IndexByte(before, '#') >= 0 {
		return false
	}
	if before == "" {
		return true
	}
	c := before[len(before)-1]
	return c == ' ' || c == '\t'
}
