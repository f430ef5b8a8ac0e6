package http

import (
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// writtenWhole puts on an action's page what a write writes, whole, when
// its card could not diff it against the file on disk (a symlink at the
// path, a read-protected or too large file…: the reason stays on the
// card): the file on disk is never shown, but the write always is, so no
// write is approved unseen. Binary content stays unshown.
func writtenWhole(c *card) {
	pv := c.Preview
	if c.A == nil || c.A.Type != brabo.WriteFile || pv == nil || pv.Diff == nil || pv.Diff.Hidden == "" || len(c.Diff) > 0 {
		return
	}
	content := c.A.Payload.Content
	if content == "" || strings.IndexByte(content, 0) >= 0 || !utf8.ValidString(content) {
		return
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	c.Diff = make([]diffLine, 0, len(lines)+1)
	c.Diff = append(c.Diff, diffLine{Class: "hunk", Text: "what it writes, whole (the file on disk is not shown)"})
	for _, l := range lines {
		c.Diff = append(c.Diff, diffLine{Class: "add", Text: "+" + l})
	}
}
