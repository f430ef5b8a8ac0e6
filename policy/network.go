package policy

// The Network(…) pattern of permissions.json: which hosts a
// sandboxed command may reach through brabo's egress proxy. It is not an
// action type: brabo decides each connection the proxy is asked for, not
// an action, so its patterns sit in the lists beside the others, under a
// type no action has, and only DecideNetwork and DecideNetworkAddress read
// them.

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/brabo-dev/brabo"
)

// NetworkLabel is the label of the pattern: Network(example.com).
const NetworkLabel = "Network"

// networkType is the list key of the Network patterns: not a valid action
// type, so no action's decision ever reads them.
const networkType brabo.ActionType = "network"

// netPattern is the compiled content of Network(…).
type netPattern struct {
	// host is the lower-case host name without a trailing dot, or the
	// IP address in its canonical form (ip set).
	host string
	// sub: the pattern was *.host, which names every subdomain of host
	// and not host itself.
	sub  bool
	ip   bool
	port int // 0: every port
}

// The validation errors of a Network pattern: each says what is wrong.
var (
	errNetEmpty    = errors.New("Network() needs a host: Network(example.com), Network(*.example.com), Network(example.com:443) or Network(127.0.0.1:8080)")
	errNetScheme   = errors.New("a Network pattern is a host, not a URL: write Network(example.com), without the scheme or a path")
	errNetWildcard = errors.New("a '*' in a Network pattern is only the first label, \"*.example.com\" (every subdomain); a bare '*' would allow every host")
	errNetIPSub    = errors.New("an IP address has no subdomains: write Network(127.0.0.1:8080)")
)

// parseNetPattern compiles the content of Network(…).
func parseNetPattern(content string) (netPattern, error) {
	s := strings.TrimSpace(content)
	if s != content {
		return netPattern{}, fmt.Errorf("%q has white space around the host", content)
	}
	if s == "" {
		return netPattern{}, errNetEmpty
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@") {
		return netPattern{}, errNetScheme
	}
	host, port, err := splitNetHostPort(s)
	if err != nil {
		return netPattern{}, err
	}
	p := netPattern{port: port}
	if strings.HasPrefix(host, "*.") {
		p.sub, host = true, host[2:]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if p.sub {
			return netPattern{}, errNetIPSub
		}
		if a.Zone() != "" {
			return netPattern{}, fmt.Errorf("%q: an IP address with a zone cannot be named", host)
		}
		p.host, p.ip = a.Unmap().String(), true
		return p, nil
	}
	if strings.Contains(host, "*") {
		return netPattern{}, errNetWildcard
	}
	h, err := normalHost(host)
	if err != nil {
		return netPattern{}, err
	}
	p.host = h
	return p, nil
}

// splitNetHostPort splits host[:port] and [v6]:port; a bare IPv6 address
// has no port.
func splitNetHostPort(s string) (string, int, error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("%q: an IPv6 address in brackets needs its ']'", s)
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", 0, fmt.Errorf("%q: only \":port\" may follow \"]\"", s)
		}
		port, err := parseNetPort(rest[1:])
		return host, port, err
	}
	if strings.Count(s, ":") > 1 {
		return s, 0, nil // an IPv6 address without a port
	}
	host, portText, ok := strings.Cut(s, ":")
	if !ok {
		return s, 0, nil
	}
	port, err := parseNetPort(portText)
	return host, port, err
}

func parseNetPort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(s, "+") || strings.HasPrefix(s, "0") {
		return 0, fmt.Errorf("the port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// normalHost checks a DNS host name and returns it in lower case without a
// trailing dot.
func normalHost(host string) (string, error) {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", fmt.Errorf("%q is not a host name: the label %q is empty, too long or starts or ends with '-'", host, label)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", fmt.Errorf("%q is not a host name: %q is not a letter, digit, '-' or '_' (write an internationalised name in its xn-- form)", host, r)
			}
		}
	}
	return h, nil
}

// matchHost reports whether the pattern names host (normalised) on port.
func (p netPattern) matchHost(host string, port int) bool {
	if p.port != 0 && p.port != port {
		return false
	}
	if p.sub {
		return strings.HasSuffix(host, "."+p.host)
	}
	return host == p.host
}

// NetworkVerdict is what the file says of one connection.
type NetworkVerdict string

// The verdicts: only NetworkAllow lets the connection through; an ask
// refuses it for this run, as no rule does (a sandboxed command cannot
// wait for a human in the middle of a connection).
const (
	NetworkAllow  NetworkVerdict = "allow"
	NetworkDeny   NetworkVerdict = "deny"
	NetworkAsk    NetworkVerdict = "ask"
	NetworkNoRule NetworkVerdict = "none"
)

// NetworkDecision is the verdict on one connection, the rule that gave it
// ("" for none) and, for a refusal, the sentence that says so and the
// pattern an always-allow would add.
type NetworkDecision struct {
	Verdict NetworkVerdict `json:"verdict"`
	Rule    string         `json:"rule,omitempty"`
	// Suggestion is the pattern that would allow the host: Network(host).
	Suggestion string `json:"suggestion,omitempty"`
	// Reason is the refusal's sentence: "network: example.com is not
	// allowed (Network(example.com) would allow it)".
	Reason string `json:"reason,omitempty"`
}

// Allowed reports whether the connection may go through.
func (d NetworkDecision) Allowed() bool { return d.Verdict == NetworkAllow }

// NetworkSuggestion is the pattern that would allow host: Network(host),
// with an IP address's port, since only a literal IP:port opens a local
// address.
func NetworkSuggestion(host string, port int) string {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		if port > 0 {
			return NetworkLabel + "(" + netip.AddrPortFrom(a, uint16(port)).String() + ")"
		}
		return NetworkLabel + "(" + a.String() + ")"
	}
	return NetworkLabel + "(" + h + ")"
}

// DecideNetwork decides a connection to host:port on the Network patterns
// of the rules: a deny that names it wins, then an ask, then an allow;
// no rule refuses. An invalid file allows nothing (its deny and ask still
// count). host is a name or an IP address, in any case, with or without
// a trailing dot.
func DecideNetwork(r *Rules, host string, port int) NetworkDecision {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		h = a.Unmap().String()
	}
	suggestion := NetworkSuggestion(h, port)
	refuse := func(v NetworkVerdict, rule, why string) NetworkDecision {
		return NetworkDecision{Verdict: v, Rule: rule, Suggestion: suggestion,
			Reason: fmt.Sprintf("network: %s is not allowed (%s)", netShown(h, port), why)}
	}
	if rule, ok := r.netMatch(listDeny, h, port); ok {
		return refuse(NetworkDeny, rule, r.File()+" deny: "+rule)
	}
	if rule, ok := r.netMatch(listAsk, h, port); ok {
		return refuse(NetworkAsk, rule, r.File()+" ask: "+rule+"; a connection cannot wait for a human, "+suggestion+" in allow would allow it")
	}
	if r.Err() != nil {
		return refuse(NetworkNoRule, "", r.File()+" is invalid, so it allows nothing")
	}
	if rule, ok := r.netMatch(listAllow, h, port); ok {
		return NetworkDecision{Verdict: NetworkAllow, Rule: rule}
	}
	return refuse(NetworkNoRule, "", suggestion+" would allow it")
}

// DecideNetworkAddress is the second check of a connection the host name
// allowed: the address it resolved to. A public address passes; a
// loopback, link-local, private (RFC 1918, unique local, CGNAT),
// unspecified or multicast one is refused unless an allow pattern names
// that literal IP:port (and no deny does), so a name that resolves to
// 127.0.0.1 reaches nothing local. host is the name the command asked
// for, for the sentence.
func DecideNetworkAddress(r *Rules, host string, addr netip.AddrPort) NetworkDecision {
	a := addr.Addr().Unmap()
	port := int(addr.Port())
	if rule, ok := r.netMatch(listDeny, a.String(), port); ok {
		return NetworkDecision{Verdict: NetworkDeny, Rule: rule, Reason: fmt.Sprintf("network: %s is not allowed (it resolves to %s, which %s deny: %s names)",
			netShown(strings.ToLower(host), port), a, r.File(), rule)}
	}
	kind := LocalAddressKind(a)
	if kind == "" {
		return NetworkDecision{Verdict: NetworkAllow}
	}
	literal := netip.AddrPortFrom(a, addr.Port()).String()
	suggestion := NetworkLabel + "(" + literal + ")"
	d := NetworkDecision{Verdict: NetworkNoRule, Suggestion: suggestion}
	if rule, ok := r.netLiteral(a.String(), port); ok {
		return NetworkDecision{Verdict: NetworkAllow, Rule: rule}
	}
	d.Reason = fmt.Sprintf("network: %s is not allowed (it resolves to %s, a %s address; only %s in allow would allow it)",
		netShown(strings.ToLower(host), port), a, kind, suggestion)
	return d
}

// LocalAddressKind names the kind of a local address ("loopback",
// "private", …), or "" for a public one.
func LocalAddressKind(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsPrivate(), cgnat.Contains(a):
		return "private"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.Is4() && (a.As4()[0] == 0 || a.As4()[0] >= 240):
		return "reserved"
	}
	return ""
}

// cgnat is the shared address space of RFC 6598, private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// netMatch returns the first pattern of list k that names host:port.
func (r *Rules) netMatch(k listKind, host string, port int) (string, bool) {
	l := r.list(k)
	if l == nil {
		return "", false
	}
	for _, i := range l.typed[networkType] {
		if p := &l.patterns[i]; p.net.matchHost(host, port) {
			return p.source, true
		}
	}
	return "", false
}

// netLiteral returns the allow pattern that names the literal IP:port.
func (r *Rules) netLiteral(ip string, port int) (string, bool) {
	l := r.list(listAllow)
	if l == nil {
		return "", false
	}
	for _, i := range l.typed[networkType] {
		if p := &l.patterns[i]; p.net.ip && p.net.port == port && p.net.host == ip {
			return p.source, true
		}
	}
	return "", false
}

// NetworkPatterns returns the Network patterns of the allow list, in file
// order (the card shows what a project lets its commands reach).
func (r *Rules) NetworkPatterns() []string {
	l := r.list(listAllow)
	if l == nil {
		return nil
	}
	var out []string
	for _, i := range l.typed[networkType] {
		out = append(out, l.patterns[i].source)
	}
	return out
}

// netShown is host as a refusal names it: the port only when it is not
// the usual one of HTTP or HTTPS.
func netShown(host string, port int) string {
	if port == 0 || port == 80 || port == 443 {
		return host
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// NetworkAlwaysAllow returns the pattern an always-allow click on a
// refused connection adds: Network(host), or Network(IP:port) for an IP
// address. It refuses (code invalid_action) what is not a host.
func NetworkAlwaysAllow(host string, port int) (string, error) {
	s := NetworkSuggestion(host, port)
	if _, err := parseNetPattern(strings.TrimSuffix(strings.TrimPrefix(s, NetworkLabel+"("), ")")); err != nil {
		return "", brabo.Errorf(brabo.CodeInvalidAction, "network: %s", err.Error())
	}
	return s, nil
}
