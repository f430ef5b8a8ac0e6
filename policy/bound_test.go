package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// A stored decision stays under 64 KiB whatever the input,
// while its policy and reason are what the whole line decides.
func TestClassBoundedDecision(t *testing.T) {
	root := newProject(t)
	nested := func(n int, inner string) string {
		return strings.Repeat("echo $(", n) + inner + strings.Repeat(")", n)
	}
	// A 60 KB line of nested $(…), 16 levels of 3.7 KB words each.
	var wide strings.Builder
	for wide.Len() < 60<<10 {
		wide.WriteString("echo " + strings.Repeat("a", 3700) + " $(")
	}
	wideCmd := wide.String() + "x" + strings.Repeat(")", strings.Count(wide.String(), "$("))
	ctl := strings.Repeat("\x01\x02", 2000)
	cases := map[string]string{
		"a 60 KB line of nested $(…)":           wideCmd,
		"16 nested $(…) of long words":          nested(16, strings.Repeat("b", 3000)),
		"256 segments of long words":            strings.Repeat("cat "+strings.Repeat("c", 230)+"; ", 255) + "ls",
		"256 segments of many tokens":           strings.Repeat("ls "+strings.Repeat("d ", 110)+"; ", 255) + "ls",
		"one word of the whole size":            "echo " + strings.Repeat("e", MaxCommandBytes-10),
		"control characters escaped in JSON":    strings.Repeat("echo '"+ctl[:200]+"'; ", 250),
		"outside paths with notes and flags":    strings.Repeat("cat /etc/"+strings.Repeat("f", 200)+" ~/"+strings.Repeat("g", 100)+"; ", 200),
		"opaque segments with long reasons":     strings.Repeat("$"+strings.Repeat("h", 200)+" x; ", 250),
		"a heredoc of the whole size":           "cat <<EOF\n" + strings.Repeat("i", MaxCommandBytes-20) + "\nEOF",
		"protected writes with long path names": strings.Repeat("echo x > .git/"+strings.Repeat("j", 200)+"; ", 250),
	}
	for name, cmd := range cases {
		if len(cmd) > MaxCommandBytes {
			cmd = cmd[:MaxCommandBytes]
		}
		for _, auto := range []bool{false, true} {
			in := Input{Type: brabo.Terminal, Command: cmd, Role: brabo.Developer, Scope: Scope{Root: root},
				Rules: mustRules(t, classAllow...)}
			if auto {
				in.Autonomy.Wildcard = brabo.AutoApprove
			}
			d := Decide(in)
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) >= 64<<10 {
				t.Errorf("%s (auto %v): a %d-byte line made a %d-byte decision with %d segments", name, auto, len(cmd), len(b), len(d.Segments))
			}
			if !auto && d.Policy == brabo.AutoApprove && strings.Contains(name, "outside") {
				t.Errorf("%s: bounding the decision changed it: %s", name, d.Reason)
			}
		}
	}
	// A summarised decision still says what decided, and keeps the worst verdict.
	d := Decide(Input{Type: brabo.Terminal, Command: strings.Repeat("echo '"+ctl[:200]+"'; ", 250) + "curl x",
		Role: brabo.Developer, Scope: Scope{Root: root}, Rules: mustRules(t, classAllow...)})
	if d.Policy != brabo.RequireApproval {
		t.Errorf("the long line with curl: %s (%s)", d.Policy, d.Reason)
	}
	if last := d.Segments[len(d.Segments)-1]; verdictRank(last.Verdict) < verdictRank(brabo.VerdictNoRule) {
		t.Errorf("the summary segment %q hides the segment with no rule: %s", last.Text, last.Verdict)
	}
}
