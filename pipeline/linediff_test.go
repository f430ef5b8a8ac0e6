package pipeline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// applyUnified applies unified hunks to a, as patch would, and fails on
// any line that does not match: the diff must turn a into b exactly.
func applyUnified(t *testing.T, a []string, text string) []string {
	t.Helper()
	hdr := regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)
	var out []string
	pos := 0 // next line of a to copy
	lines := splitLines(text)
	for i := 0; i < len(lines); {
		m := hdr.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("line %d is not a hunk header: %q", i, lines[i])
		}
		start, _ := strconv.Atoi(m[1])
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		if n == 0 {
			start++ // an empty range names the line before
		}
		for pos < start-1 {
			out = append(out, a[pos])
			pos++
		}
		i++
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			switch l[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != l[1:] {
					t.Fatalf("hunk line %q does not match line %d of a", l, pos+1)
				}
				if l[0] == ' ' {
					out = append(out, a[pos])
				}
				pos++
			case '+':
				out = append(out, l[1:])
			}
		}
	}
	return append(out, a[pos:]...)
}

func TestLineDiffApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d", "e", "", "x"}
	gen := func() []string {
		n := r.IntN(30)
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		a, b := gen(), gen()
		text, added, removed := unified(lineDiff(a, b), 3)
		got := applyUnified(t, a, text)
		if strings.Join(got, "\n") != strings.Join(b, "\n") || len(got) != len(b) {
			t.Fatalf("a %q b %q: the diff\n%s\ngives %q", a, b, text, got)
		}
		// Minimal: as many edits as the longest common subsequence allows.
		if lcs := lcsLen(a, b); added != len(b)-lcs || removed != len(a)-lcs {
			t.Fatalf("a %q b %q: +%d -%d, want +%d -%d", a, b, added, removed, len(b)-lcs, len(a)-lcs)
		}
	}
}

func lcsLen(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestLineDiffAsDiffU: the hunks are the ones diff -u writes, headers
// included, where GNU diff is on the machine.
func TestLineDiffAsDiffU(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no diff on this machine, and CI is set: %v", err)
		}
		t.Skip("no diff on this machine; under CI this fails")
	}
	cases := [][2]string{
		{"all: build\n\nbuild:\n\tgo build ./...\n", "all: build\n\nbuild:\n\tcurl -fsSL https://get.example | sh\n\tgo build ./...\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\nthirteen\n14\n15\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n"},
		{"a\nb\nc\n", ""},
		{"a\nb\n", "b\nc\n"},
		{"x\n", "y\n"},
	}
	dir := t.TempDir()
	for i, c := range cases {
		pa, pb := filepath.Join(dir, fmt.Sprint(i, "a")), filepath.Join(dir, fmt.Sprint(i, "b"))
		os.WriteFile(pa, []byte(c[0]), 0o644)
		os.WriteFile(pb, []byte(c[1]), 0o644)
		out, _ := exec.Command("diff", "-u", pa, pb).Output()
		want := string(out)
		if k := strings.Index(want, "@@"); k >= 0 {
			want = want[k:]
		}
		got, _, _ := unified(lineDiff(splitLines(c[0]), splitLines(c[1])), 3)
		if got != want {
			t.Errorf("case %d:\ngot\n%s\ndiff -u\n%s", i, got, want)
		}
	}
}

// TestLineDiffBounded: a change past maxEdits is the middle removed and
// added, still correct; a large file with a small change stays small.
func TestLineDiffBounded(t *testing.T) {
	var a, b []string
	for i := 0; i < 3000; i++ {
		a = append(a, fmt.Sprint("a", i))
		b = append(b, fmt.Sprint("b", i))
	}
	text, added, removed := unified(lineDiff(a, b), 3)
	if added != 3000 || removed != 3000 {
		t.Errorf("+%d -%d", added, removed)
	}
	if got := applyUnified(t, a, text); len(got) != 3000 || got[0] != "b0" {
		t.Errorf("the fallback diff does not apply")
	}
	c := append([]string(nil), a...)
	c[1500] = "changed"
	text, added, removed = unified(lineDiff(a, c), 3)
	if added != 1 || removed != 1 || len(splitLines(text)) != 9 {
		t.Errorf("one line changed: +%d -%d\n%s", added, removed, text)
	}
}
