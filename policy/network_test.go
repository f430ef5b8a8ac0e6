package policy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestNetworkPatternValidation(t *testing.T) {
	for _, c := range []struct {
		pattern string
		why     string // "" for valid
	}{
		{"Network(example.com)", ""},
		{"Network(*.example.com)", ""},
		{"Network(example.com:443)", ""},
		{"Network(Example.COM.)", ""},
		{"Network(127.0.0.1:8080)", ""},
		{"Network(127.0.0.1)", ""},
		{"Network([::1]:8080)", ""},
		{"Network(::1)", ""},
		{"Network(registry.npmjs.org)", ""},
		{"Network()", "Network() needs a host"},
		{"Network(*)", "a bare '*' would allow every host"},
		{"Network(*.*.com)", "only the first label"},
		{"Network(ex*ample.com)", "only the first label"},
		{"Network(https://example.com)", "not a URL"},
		{"Network(example.com/path)", "not a URL"},
		{"Network(user@example.com)", "not a URL"},
		{"Network(example.com:0)", `the port "0" is not a number from 1 to 65535`},
		{"Network(example.com:65536)", `the port "65536"`},
		{"Network(example.com:http)", `the port "http"`},
		{"Network(example.com:)", `the port ""`},
		{"Network( example.com)", "white space"},
		{"Network(exa mple.com)", "is not a letter, digit"},
		{"Network(-x.example.com)", "starts or ends with '-'"},
		{"Network(a..b)", "the label \"\" is empty"},
		{"Network(*.127.0.0.1)", "an IP address has no subdomains"},
		{"Network([::1)", "needs its ']'"},
		{"Network([::1]x)", `only ":port" may follow`},
		{"Network(fe80::1%eth0)", "with a zone"},
	} {
		_, err := NewRules("", []string{c.pattern}, nil, nil)
		switch {
		case c.why == "" && err != nil:
			t.Errorf("%s: %v, want valid", c.pattern, err)
		case c.why != "" && err == nil:
			t.Errorf("%s: valid, want an error saying %q", c.pattern, c.why)
		case c.why != "" && !strings.Contains(err.Error(), c.why):
			t.Errorf("%s: %v, want it to say %q", c.pattern, err, c.why)
		case c.why != "" && !strings.Contains(err.Error(), `allow[0] "`+c.pattern+`"`):
			t.Errorf("%s: %v does not name the entry", c.pattern, err)
		}
	}
}

func TestDecideNetwork(t *testing.T) {
	type lists struct{ allow, deny, ask []string }
	for _, c := range []struct {
		name   string
		rules  lists
		host   string
		port   int
		want   NetworkVerdict
		rule   string
		reason string
	}{
		{name: "no rule refuses, naming the pattern that would allow it", host: "example.com", port: 443,
			want: NetworkNoRule, reason: "network: example.com is not allowed (Network(example.com) would allow it)"},
		{name: "an exact host allows itself", rules: lists{allow: []string{"Network(example.com)"}},
			host: "example.com", port: 443, want: NetworkAllow, rule: "Network(example.com)"},
		{name: "the host compares without case or the trailing dot", rules: lists{allow: []string{"Network(example.com)"}},
			host: "EXAMPLE.com.", port: 80, want: NetworkAllow, rule: "Network(example.com)"},
		{name: "an exact host does not allow its subdomains", rules: lists{allow: []string{"Network(example.com)"}},
			host: "api.example.com", port: 443, want: NetworkNoRule,
			reason: "network: api.example.com is not allowed (Network(api.example.com) would allow it)"},
		{name: "an exact host does not allow a longer name", rules: lists{allow: []string{"Network(example.com)"}},
			host: "evilexample.com", port: 443, want: NetworkNoRule},
		{name: "*. allows subdomains", rules: lists{allow: []string{"Network(*.example.com)"}},
			host: "a.b.example.com", port: 443, want: NetworkAllow, rule: "Network(*.example.com)"},
		{name: "*. does not allow the domain itself", rules: lists{allow: []string{"Network(*.example.com)"}},
			host: "example.com", port: 443, want: NetworkNoRule},
		{name: "*. does not allow a name that merely ends alike", rules: lists{allow: []string{"Network(*.example.com)"}},
			host: "badexample.com", port: 443, want: NetworkNoRule},
		{name: "a port allows that port", rules: lists{allow: []string{"Network(example.com:8443)"}},
			host: "example.com", port: 8443, want: NetworkAllow, rule: "Network(example.com:8443)"},
		{name: "a port allows no other port", rules: lists{allow: []string{"Network(example.com:8443)"}},
			host: "example.com", port: 443, want: NetworkNoRule},
		{name: "a refusal names an unusual port", host: "example.com", port: 8443, want: NetworkNoRule,
			reason: "network: example.com:8443 is not allowed (Network(example.com) would allow it)"},
		{name: "a literal IP:port allows it", rules: lists{allow: []string{"Network(127.0.0.1:8080)"}},
			host: "127.0.0.1", port: 8080, want: NetworkAllow, rule: "Network(127.0.0.1:8080)"},
		{name: "the suggestion for an IP names its port", host: "10.0.0.7", port: 8080, want: NetworkNoRule,
			reason: "network: 10.0.0.7:8080 is not allowed (Network(10.0.0.7:8080) would allow it)"},
		{name: "deny wins over allow", rules: lists{allow: []string{"Network(*.example.com)"}, deny: []string{"Network(evil.example.com)"}},
			host: "evil.example.com", port: 443, want: NetworkDeny, rule: "Network(evil.example.com)",
			reason: "network: evil.example.com is not allowed (permissions.json deny: Network(evil.example.com))"},
		{name: "deny wins over ask", rules: lists{ask: []string{"Network(example.com)"}, deny: []string{"Network(example.com)"}},
			host: "example.com", port: 443, want: NetworkDeny},
		{name: "ask refuses for this run", rules: lists{allow: []string{"Network(example.com)"}, ask: []string{"Network(example.com)"}},
			host: "example.com", port: 443, want: NetworkAsk, rule: "Network(example.com)",
			reason: "network: example.com is not allowed (permissions.json ask: Network(example.com); a connection cannot wait for a human, Network(example.com) in allow would allow it)"},
		{name: "a Terminal rule allows no host", rules: lists{allow: []string{"Terminal(curl)"}},
			host: "example.com", port: 443, want: NetworkNoRule},
		{name: "an invalid file allows nothing", rules: lists{allow: []string{"Network(example.com)", "Network(*)"}},
			host: "example.com", port: 443, want: NetworkNoRule,
			reason: "network: example.com is not allowed (permissions.json is invalid, so it allows nothing)"},
		{name: "an invalid file still denies", rules: lists{allow: []string{"Network(*)"}, deny: []string{"Network(example.com)"}},
			host: "example.com", port: 443, want: NetworkDeny},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := NewRules("", c.rules.allow, c.rules.deny, c.rules.ask)
			d := DecideNetwork(r, c.host, c.port)
			if d.Verdict != c.want || c.rule != "" && d.Rule != c.rule || c.reason != "" && d.Reason != c.reason {
				t.Fatalf("DecideNetwork(%s, %d) = %+v, want %s %q %q", c.host, c.port, d, c.want, c.rule, c.reason)
			}
			if d.Allowed() != (c.want == NetworkAllow) {
				t.Fatalf("Allowed() = %v for %s", d.Allowed(), d.Verdict)
			}
			if !d.Allowed() && d.Suggestion == "" {
				t.Fatalf("a refusal without a suggestion: %+v", d)
			}
		})
	}
}

func TestDecideNetworkAddress(t *testing.T) {
	type lists struct{ allow, deny []string }
	for _, c := range []struct {
		name   string
		rules  lists
		host   string
		addr   string
		want   NetworkVerdict
		reason string
	}{
		{name: "a public address passes", host: "example.com", addr: "93.184.215.14:443", want: NetworkAllow},
		{name: "a name resolving to loopback is refused though its name is allowed", rules: lists{allow: []string{"Network(localhost)"}},
			host: "localhost", addr: "127.0.0.1:8080", want: NetworkNoRule,
			reason: "network: localhost:8080 is not allowed (it resolves to 127.0.0.1, a loopback address; only Network(127.0.0.1:8080) in allow would allow it)"},
		{name: "a literal IP:port opens the loopback address", rules: lists{allow: []string{"Network(127.0.0.1:8080)"}},
			host: "localhost", addr: "127.0.0.1:8080", want: NetworkAllow},
		{name: "a literal IP:port opens no other port", rules: lists{allow: []string{"Network(127.0.0.1:8080)"}},
			host: "127.0.0.1", addr: "127.0.0.1:5432", want: NetworkNoRule},
		{name: "an IP without a port does not open a local address", rules: lists{allow: []string{"Network(127.0.0.1)"}},
			host: "127.0.0.1", addr: "127.0.0.1:8080", want: NetworkNoRule},
		{name: "a subdomain pattern does not open a private address", rules: lists{allow: []string{"Network(*.corp.example)"}},
			host: "db.corp.example", addr: "10.1.2.3:5432", want: NetworkNoRule},
		{name: "IPv6 loopback", host: "x", addr: "[::1]:80", want: NetworkNoRule},
		{name: "IPv4-mapped loopback", host: "x", addr: "[::ffff:127.0.0.1]:80", want: NetworkNoRule},
		{name: "link-local (cloud metadata)", host: "metadata", addr: "169.254.169.254:80", want: NetworkNoRule},
		{name: "RFC 1918", host: "x", addr: "192.168.1.1:80", want: NetworkNoRule},
		{name: "CGNAT", host: "x", addr: "100.64.0.1:80", want: NetworkNoRule},
		{name: "unique local IPv6", host: "x", addr: "[fd00::1]:80", want: NetworkNoRule},
		{name: "unspecified", host: "x", addr: "0.0.0.0:80", want: NetworkNoRule},
		{name: "a deny on the resolved address refuses a public one", rules: lists{deny: []string{"Network(93.184.215.14)"}},
			host: "example.com", addr: "93.184.215.14:443", want: NetworkDeny},
		{name: "a deny beats the literal allow", rules: lists{allow: []string{"Network(127.0.0.1:8080)"}, deny: []string{"Network(127.0.0.1)"}},
			host: "127.0.0.1", addr: "127.0.0.1:8080", want: NetworkDeny},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewRules("", c.rules.allow, c.rules.deny, nil)
			if err != nil {
				t.Fatal(err)
			}
			d := DecideNetworkAddress(r, c.host, netip.MustParseAddrPort(c.addr))
			if d.Verdict != c.want || c.reason != "" && d.Reason != c.reason {
				t.Fatalf("= %+v, want %s %q", d, c.want, c.reason)
			}
			if !d.Allowed() && !strings.HasPrefix(d.Reason, "network: ") {
				t.Fatalf("a refusal without its sentence: %+v", d)
			}
		})
	}
}

func TestNetworkAlwaysAllow(t *testing.T) {
	for _, c := range []struct {
		host string
		port int
		want string
	}{
		{"Example.com.", 443, "Network(example.com)"},
		{"127.0.0.1", 8080, "Network(127.0.0.1:8080)"},
		{"::1", 8080, "Network([::1]:8080)"},
	} {
		got, err := NetworkAlwaysAllow(c.host, c.port)
		if err != nil || got != c.want {
			t.Errorf("NetworkAlwaysAllow(%s, %d) = %q, %v; want %q", c.host, c.port, got, err, c.want)
		}
		r, err := NewRules("", []string{got}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := DecideNetwork(r, c.host, c.port); !d.Allowed() {
			t.Errorf("the pattern %s does not allow %s:%d: %+v", got, c.host, c.port, d)
		}
	}
	if _, err := NetworkAlwaysAllow("bad host", 443); err == nil {
		t.Error("a host with a space gave a pattern")
	}
}

// A Network pattern never decides an action: a Terminal action is not
// approved by Network(…), and the file's other patterns are unchanged.
func TestNetworkPatternDecidesNoAction(t *testing.T) {
	r, err := NewRules("", []string{"Network(example.com)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.NetworkPatterns(); len(got) != 1 || got[0] != "Network(example.com)" {
		t.Fatalf("NetworkPatterns = %v", got)
	}
	if len(r.Warnings()) != 0 {
		t.Fatalf("warnings: %v", r.Warnings())
	}
}

// Activation seeds no network rule: no host is ever reachable that a
// human did not name.
func TestSeedHasNoNetworkRule(t *testing.T) {
	for _, list := range [][]string{SeedAllow(), BuiltinDeny()} {
		for _, p := range list {
			if strings.HasPrefix(p, NetworkLabel+"(") {
				t.Errorf("the seed holds %s", p)
			}
		}
	}
	r, err := NewRules("", SeedAllow(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := DecideNetwork(r, "registry.npmjs.org", 443); d.Allowed() {
		t.Fatalf("the seeded file allows the npm registry: %+v", d)
	}
}
