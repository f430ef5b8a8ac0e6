package policy

import (
	"slices"
	"testing"
)

func mustParse(t *testing.T, content string) *Rules {
	t.Helper()
	r, _ := Parse("permissions.json", []byte(content))
	return r
}

func TestCompare(t *testing.T) {
	const base = `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "deny": ["Terminal(curl:*)"], "ask": ["GitPush()"]}`
	for _, tc := range []struct {
		name, trusted, onDisk string
		want                  ChangeKind
		added, removed        map[string][]string // list → entries
	}{
		{name: "identical", trusted: base, onDisk: base, want: ChangeSame},
		{name: "reordered, reformatted, an unknown key, another spelling", trusted: base,
			onDisk: "{\n  \"ask\": [\"GitPush()\"],\n  \"note\": \"x\",\n  \"deny\": [\"Bash(curl:*)\"],\n" +
				"  \"allow\": [\"Terminal('pnpm' test)\", \"Bash(ls)\", \"Terminal(ls)\"]\n}\n", want: ChangeSame},
		{name: "a missing file and {}", trusted: "", onDisk: "{}", want: ChangeSame},
		{name: "a deny added", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "deny": ["Terminal(curl:*)", "Terminal(wget)"], "ask": ["GitPush()"]}`,
			want: ChangeTighten, added: map[string][]string{"deny": {"Terminal(wget)"}}},
		{name: "an ask added", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "deny": ["Terminal(curl:*)"], "ask": ["GitPush()", "Terminal(git commit)"]}`,
			want: ChangeTighten, added: map[string][]string{"ask": {"Terminal(git commit)"}}},
		{name: "an allow removed", trusted: base, onDisk: `{"allow": ["Terminal(ls)"], "deny": ["Terminal(curl:*)"], "ask": ["GitPush()"]}`,
			want: ChangeTighten, removed: map[string][]string{"allow": {"Terminal(pnpm test)"}}},
		{name: "an allow added", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)", "Terminal(bash)"], "deny": ["Terminal(curl:*)"], "ask": ["GitPush()"]}`,
			want: ChangeLoosen, added: map[string][]string{"allow": {"Terminal(bash)"}}},
		{name: "a deny removed", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "ask": ["GitPush()"]}`,
			want: ChangeLoosen, removed: map[string][]string{"deny": {"Terminal(curl:*)"}}},
		{name: "an ask removed", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "deny": ["Terminal(curl:*)"]}`,
			want: ChangeLoosen, removed: map[string][]string{"ask": {"GitPush()"}}},
		{name: "a deny moved to ask", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "ask": ["GitPush()", "Terminal(curl:*)"]}`,
			want: ChangeLoosen, added: map[string][]string{"ask": {"Terminal(curl:*)"}}, removed: map[string][]string{"deny": {"Terminal(curl:*)"}}},
		{name: "a wildcard is not the plain word", trusted: base, onDisk: `{"allow": ["Terminal(ls*)", "Terminal(pnpm test)"], "deny": ["Terminal(curl:*)"], "ask": ["GitPush()"]}`,
			want: ChangeLoosen, added: map[string][]string{"allow": {"Terminal(ls*)"}}, removed: map[string][]string{"allow": {"Terminal(ls)"}}},
		{name: "a path pattern widened", trusted: `{"allow": ["WriteFile(src/**)"]}`, onDisk: `{"allow": ["WriteFile()"]}`,
			want: ChangeLoosen, added: map[string][]string{"allow": {"WriteFile()"}}, removed: map[string][]string{"allow": {"WriteFile(src/**)"}}},
		{name: "an invalid file that only adds a deny", trusted: base, onDisk: `{"allow": ["Terminal(ls)", "Terminal(pnpm test)"], "deny": ["Terminal(curl:*)", "Terminal(wget)", "Shell(x)"], "ask": ["GitPush()"]}`,
			want: ChangeInvalid, added: map[string][]string{"deny": {"Terminal(wget)"}}},
		{name: "a file that does not parse", trusted: base, onDisk: `{"allow": [`, want: ChangeInvalid,
			removed: map[string][]string{"allow": {"Terminal(ls)", "Terminal(pnpm test)"}, "deny": {"Terminal(curl:*)"}, "ask": {"GitPush()"}}},
		{name: "a valid file after an invalid trusted one", trusted: `{"deny": ["Terminal(curl)", "Nope()"]}`, onDisk: `{"deny": ["Terminal(curl)"]}`,
			want: ChangeLoosen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(mustParse(t, tc.trusted), mustParse(t, tc.onDisk))
			if c.Kind != tc.want {
				t.Fatalf("kind %s, want %s (%s)", c.Kind, tc.want, c.Summary())
			}
			if c.Applies() != (tc.want == ChangeSame || tc.want == ChangeTighten) {
				t.Errorf("Applies() = %v for %s", c.Applies(), c.Kind)
			}
			for name, d := range map[string]ListDiff{"allow": c.Allow, "deny": c.Deny, "ask": c.Ask} {
				if !slices.Equal(d.Added, tc.added[name]) || !slices.Equal(d.Removed, tc.removed[name]) {
					t.Errorf("%s: added %q removed %q, want %q and %q", name, d.Added, d.Removed, tc.added[name], tc.removed[name])
				}
			}
			if (c.Kind == ChangeInvalid) != (c.Invalid != "") && tc.name != "a valid file after an invalid trusted one" {
				t.Errorf("invalid %q for kind %s", c.Invalid, c.Kind)
			}
		})
	}
}

func TestCompareNilIsEmpty(t *testing.T) {
	if c := Compare(nil, mustParse(t, "{}")); c.Kind != ChangeSame {
		t.Errorf("nil vs {}: %s", c.Summary())
	}
	if c := Compare(nil, mustParse(t, `{"allow": ["Terminal(ls)"]}`)); c.Kind != ChangeLoosen {
		t.Errorf("nil vs an allow: %s", c.Summary())
	}
	if c := Compare(mustParse(t, `{"deny": ["Terminal(ls)"]}`), nil); c.Kind != ChangeLoosen || c.Deny.Removed[0] != "Terminal(ls)" {
		t.Errorf("a deny vs nil: %s", c.Summary())
	}
}

func TestChangeSummary(t *testing.T) {
	c := Compare(mustParse(t, `{"deny": ["Terminal(curl)"]}`), mustParse(t, `{"allow": ["Terminal(bash)"]}`))
	if got, want := c.Summary(), "loosen: allow +Terminal(bash); deny -Terminal(curl)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

func TestContentHash(t *testing.T) {
	if got := ContentHash(nil); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("the hash of the empty file is %s", got)
	}
	if ContentHash([]byte("{}")) == ContentHash([]byte("{} ")) {
		t.Error("two contents, one hash")
	}
}
