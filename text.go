package brabo

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable escapes what a terminal would not show as written: control
// characters (a newline, a carriage return, an escape sequence), format
// characters such as bidi overrides, and invalid UTF-8. The command comes
// from an agent and a human reads the result: a segment stays on one line,
// and no byte of it can rewrite or hide what is shown.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || (r != utf8.RuneError && unicode.IsPrint(r)):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}
