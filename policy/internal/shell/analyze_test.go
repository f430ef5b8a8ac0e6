package shell

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

func noneProtected(string) bool { return false }

// TestAnalyzeFindsEveryProgram: the entry point returns every program a
// line would run, the hidden ones included (inside a bash -c script, a
// command substitution, a wrapper, after a cd), each with the folder it
// runs in. A segment the analysis missed is a program no rule is applied
// to, so each row hides one.
func TestAnalyzeFindsEveryProgram(t *testing.T) {
	for _, tc := range []struct {
		line  string
		verbs []string // verbs of the segments, in order
		cwd   []string // where the last segment may run
	}{
		{"ls -la", []string{"ls"}, []string{"/p"}},
		{"cd src && pnpm test | tee out.txt", []string{"cd", "pnpm", "tee"}, []string{"/p/src"}},
		{"echo $(curl -s example.com)", []string{"curl", "echo"}, []string{"/p"}},
		{"bash -c 'git push origin main'", []string{"bash", "git"}, []string{"/p"}},
		{"timeout 5 git push", []string{"timeout", "git"}, []string{"/p"}},
		{"cd /tmp && cd .. && rm x", []string{"cd", "cd", "rm"}, []string{"/"}},
		// after `;` a cd that failed leaves the line where it was
		{"cd /tmp; cd ..; rm x", []string{"cd", "cd", "rm"}, []string{"/p", "/tmp", "/"}},
	} {
		an, err := Analyze(tc.line, CwdSet{Dirs: []string{"/p"}}, noneProtected)
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		var verbs []string
		for _, s := range an.Segs {
			verbs = append(verbs, s.Verb())
		}
		if !slices.Equal(verbs, tc.verbs) {
			t.Errorf("%q: segments %q, want %q", tc.line, verbs, tc.verbs)
			continue
		}
		if last := an.Segs[len(an.Segs)-1]; !slices.Equal(last.Cwds.Dirs, tc.cwd) || last.Cwds.Unknown {
			t.Errorf("%q: the last program runs in %v (unknown %v), want %v", tc.line, last.Cwds.Dirs, last.Cwds.Unknown, tc.cwd)
		}
	}
}

// TestAnalyzeRefusesWhatItCannotRead: a line too long, with a NUL, empty,
// or that does not parse is an ErrParse, never a partial list of segments.
func TestAnalyzeRefusesWhatItCannotRead(t *testing.T) {
	for _, line := range []string{"", "   ", "ls\x00rm", "ls " + strings.Repeat("a", MaxCommandBytes), "echo 'unclosed", "if then fi"} {
		an, err := Analyze(line, CwdSet{Dirs: []string{"/p"}}, noneProtected)
		if !errors.Is(err, ErrParse) || len(an.Segs) != 0 {
			t.Errorf("%.40q: %d segments, err %v; want ErrParse and none", line, len(an.Segs), err)
		}
	}
}

// FuzzAnalyze: for any line the analysis is total (no panic), fails only
// with ErrParse, and every folder a segment may run in is absolute and
// clean, which the path scope relies on.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"ls", "cd src && make", "bash -c 'cd .. && rm -rf x'", "for f in a b; do cat $f; done",
		"x=$(pwd); cd \"$x\"/..", "find . -name '*.o' -delete", "env -i PATH=/bin git push", "echo ${a[$(id)]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		an, err := Analyze(line, CwdSet{Dirs: []string{"/p/src"}}, noneProtected)
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("Analyze(%q): error %v is not ErrParse", line, err)
			}
			return
		}
		for _, s := range an.Segs {
			for _, d := range s.Cwds.Dirs {
				if !path.IsAbs(d) || path.Clean(d) != d {
					t.Fatalf("Analyze(%q): segment %q runs in %q, not an absolute clean folder", line, s.Text, d)
				}
			}
		}
	})
}
