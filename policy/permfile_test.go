package policy

import (
	"encoding/json"
	"github.com/brabo-dev/brabo"
	"strings"
	"testing"
)

func TestAppendAllowKeepsUnknownKeysAndOrder(t *testing.T) {
	in := []byte(`{"$schema": "x", "deny": ["Terminal(curl)"], "allow": ["Terminal(ls)"], "notes": {"who": "ana"}}`)
	out, added, err := AppendAllow(in, []string{"Terminal(ls)", "Terminal(npm test)", "Terminal(npm test)"})
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || added[0] != "Terminal(npm test)" {
		t.Fatalf("added = %q, want only the missing pattern once", added)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["$schema"] != "x" || got["notes"].(map[string]any)["who"] != "ana" {
		t.Errorf("unknown keys lost: %s", out)
	}
	allow := got["allow"].([]any)
	if len(allow) != 2 || allow[1] != "Terminal(npm test)" {
		t.Errorf("allow = %v", allow)
	}
	s := string(out)
	if !(strings.Index(s, `"$schema"`) < strings.Index(s, `"deny"`) && strings.Index(s, `"deny"`) < strings.Index(s, `"allow"`)) {
		t.Errorf("key order changed:\n%s", out)
	}
}

func TestAppendAllowOnEmptyAndNothingMissing(t *testing.T) {
	out, added, err := AppendAllow(nil, []string{"Terminal(cd)"})
	if err != nil || len(added) != 1 {
		t.Fatalf("empty file: %v %v", added, err)
	}
	r, err := Parse("permissions.json", out)
	if err != nil || len(r.lists[listAllow].patterns) != 1 {
		t.Fatalf("result does not parse back: %v\n%s", err, out)
	}
	same, added, err := AppendAllow(out, []string{"Terminal(cd)"})
	if err != nil || added != nil || string(same) != string(out) {
		t.Errorf("nothing missing must leave the file byte for byte: %q %v", added, err)
	}
}

func TestAppendAllowRefusesWhatParseRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		in       string
		patterns []string
	}{
		"bad json":       {`{"allow": [`, []string{"Terminal(ls)"}},
		"allow not list": {`{"allow": "x"}`, []string{"Terminal(ls)"}},
		"bad pattern":    {`{}`, []string{"Nope(x)"}},
		"not an object":  {`[1]`, []string{"Terminal(ls)"}},
	} {
		if _, _, err := AppendAllow([]byte(tc.in), tc.patterns); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestUnreadableRulesAskEvenInAutoMode(t *testing.T) {
	r := Unreadable("", "open: permission denied")
	if r.Err() == nil {
		t.Fatal("unreadable rules report no error")
	}
	d := Decide(Input{Type: brabo.Terminal, Command: "echo hi", Role: brabo.Owner, Rules: r,
		Autonomy: Autonomy{Wildcard: brabo.AutoApprove}, Scope: Scope{Root: t.TempDir()}})
	if d.Policy != brabo.RequireApproval || d.Reason != "permissions.json invalid: cannot be read: open: permission denied" {
		t.Fatalf("decision with unreadable rules: %s %q", d.Policy, d.Reason)
	}
	if d := Decide(Input{Type: brabo.Terminal, Command: "rm -rf /", Role: brabo.Owner, Rules: r, Scope: Scope{Root: t.TempDir()}}); d.Policy != brabo.Deny {
		t.Fatalf("the built-in denies must hold with unreadable rules: %s", d.Policy)
	}
}
