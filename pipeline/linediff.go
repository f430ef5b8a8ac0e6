package pipeline

import (
	"fmt"
	"strings"
)

// A line diff for write_file cards, written here: no diff library is
// among the module's dependencies, and a card needs little — Myers' O(ND)
// algorithm (E. Myers, "An O(ND) Difference Algorithm and Its
// Variations", 1986) on the lines between a common prefix and suffix,
// and the unified format's hunks with three lines of context. A change
// with more than maxEdits edits in its middle is shown as the middle
// removed and the new one added: correct, and bounded in memory.

// edit is one line of a diff: ' ' kept, '-' removed, '+' added.
type edit struct {
	op   byte
	line string
}

// maxEdits bounds Myers' search: the trace it keeps grows with the
// square of the number of edits.
const maxEdits = 1000

// lineDiff returns the edits that turn a into b.
func lineDiff(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]edit, 0, len(a)+len(b)-pre-suf)
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if mid, ok := myers(ma, mb, maxEdits); ok {
		out = append(out, mid...)
	} else {
		for _, l := range ma {
			out = append(out, edit{'-', l})
		}
		for _, l := range mb {
			out = append(out, edit{'+', l})
		}
	}
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// myers is the greedy forward search of Myers' paper, keeping the
// furthest-reaching x of each diagonal k for every d, then walking the
// trace back. It gives up (false) past maxD edits.
func myers(a, b []string, maxD int) ([]edit, bool) {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil, true
	}
	max := n + m
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	for d := 0; d <= max; d++ {
		if d > maxD {
			return nil, false
		}
		done := false
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: a line of b added
			} else {
				x = v[off+k-1] + 1 // right: a line of a removed
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				done = true
				break
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		if done {
			break
		}
	}
	// Walk back from (n, m).
	var rev []edit
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // the diagonals -(d-1)..d-1
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, edit{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if x == px {
			rev = append(rev, edit{'+', b[y-1]})
			y--
		} else {
			rev = append(rev, edit{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{' ', a[x-1]})
		x, y = x-1, y-1
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out, true
}

// splitLines splits a file into lines, without the empty one after a
// final newline.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// unified writes the edits as unified diff hunks with ctx lines of
// context, and counts the lines added and removed.
func unified(edits []edit, ctx int) (text string, added, removed int) {
	var b strings.Builder
	// The positions of the changes, grouped into hunks whose changes are
	// at most 2*ctx kept lines apart.
	i := 0
	aLine, bLine := 1, 1 // the line numbers at edits[i]
	for i < len(edits) {
		// Find the next change.
		j := i
		for j < len(edits) && edits[j].op == ' ' {
			j++
		}
		if j == len(edits) {
			break
		}
		start := max(i, j-ctx)
		// The line numbers at start.
		for ; i < start; i++ {
			aLine, bLine = aLine+1, bLine+1
		}
		// Extend the hunk while the next change is close.
		end := j
		for end < len(edits) {
			if edits[end].op != ' ' {
				end++
				continue
			}
			k := end
			for k < len(edits) && edits[k].op == ' ' {
				k++
			}
			if k == len(edits) || k-end > 2*ctx {
				end = min(end+ctx, len(edits))
				break
			}
			end = k
		}
		na, nb := 0, 0
		for _, e := range edits[start:end] {
			if e.op != '+' {
				na++
			}
			if e.op != '-' {
				nb++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(aLine, na), hunkRange(bLine, nb))
		for _, e := range edits[start:end] {
			b.WriteByte(e.op)
			b.WriteString(e.line)
			b.WriteByte('\n')
			switch e.op {
			case '+':
				added++
			case '-':
				removed++
			}
		}
		aLine, bLine = aLine+na, bLine+nb
		i = end
	}
	return b.String(), added, removed
}

// hunkRange is a hunk header's range: "start,len", with the line before
// as start for an empty range, as diff -u writes it.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
