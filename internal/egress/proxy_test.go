package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/policy"
)

func TestMain(m *testing.M) {
	if IsForwarder(os.Args) {
		Main(os.Args)
	}
	if confine.IsLauncher(os.Args) {
		confine.Main(os.Args)
	}
	os.Exit(m.Run())
}

// noUpstream is a direct outgoing leg, whatever the test's environment.
func noUpstream(*url.URL) (*url.URL, error) { return nil, nil }

// session opens a session deciding with the lists.
func session(t *testing.T, p *Proxy, allow, deny, ask []string) *Session {
	t.Helper()
	r, err := policy.NewRules("", allow, deny, ask)
	if err != nil {
		t.Fatal(err)
	}
	if p.Upstream == nil {
		p.Upstream = noUpstream
	}
	s, err := p.Open(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newRulesFor(allow ...string) (*policy.Rules, error) { return policy.NewRules("", allow, nil, nil) }

// client is an HTTP client whose proxy is the session's socket.
func client(s *Session) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "brabo-proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", s.Socket())
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
}

// get fetches u through the session: the status and the body.
func get(t *testing.T, s *Session, u string) (int, string) {
	t.Helper()
	resp, err := client(s).Get(u)
	if err != nil {
		// A refused CONNECT is an error of the client's, with the status.
		if strings.Contains(err.Error(), "Forbidden") {
			return http.StatusForbidden, err.Error()
		}
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func hello() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.Host) })
}

func port(t testing.TB, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return pu.Port()
}

func TestProxyAllowsALiteralRuleOverHTTPAndHTTPS(t *testing.T) {
	plain := httptest.NewServer(hello())
	defer plain.Close()
	secure := httptest.NewTLSServer(hello())
	defer secure.Close()
	s := session(t, &Proxy{}, []string{"Network(127.0.0.1:" + port(t, plain.URL) + ")", "Network(127.0.0.1:" + port(t, secure.URL) + ")"}, nil, nil)
	for _, u := range []string{plain.URL, secure.URL} {
		code, body := get(t, s, u+"/x")
		if code != 200 || !strings.HasPrefix(body, "hello from 127.0.0.1:") {
			t.Fatalf("GET %s = %d %q", u, code, body)
		}
	}
	if r := s.Refusals(); len(r) != 0 {
		t.Fatalf("refusals: %+v", r)
	}
}

func TestProxyRefusesWithoutAnAllow(t *testing.T) {
	srv := httptest.NewServer(hello())
	defer srv.Close()
	tls := httptest.NewTLSServer(hello())
	defer tls.Close()
	rule := func(u string) string { return "Network(127.0.0.1:" + port(t, u) + ")" }
	for _, c := range []struct {
		name             string
		allow, deny, ask []string
		verdict          policy.NetworkVerdict
	}{
		{name: "no rule", verdict: policy.NetworkNoRule},
		{name: "ask", allow: []string{rule(srv.URL), rule(tls.URL)}, ask: []string{rule(srv.URL), rule(tls.URL)}, verdict: policy.NetworkAsk},
		{name: "deny wins", allow: []string{rule(srv.URL), rule(tls.URL)}, deny: []string{"Network(127.0.0.1)"}, verdict: policy.NetworkDeny},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := session(t, &Proxy{}, c.allow, c.deny, c.ask)
			for _, u := range []string{srv.URL, tls.URL} {
				code, body := get(t, s, u)
				if code != http.StatusForbidden || strings.Contains(body, "hello") {
					t.Fatalf("GET %s = %d %q, want 403", u, code, body)
				}
			}
			got := s.Refusals()
			if len(got) != 2 {
				t.Fatalf("refusals: %+v", got)
			}
			for _, r := range got {
				want := "network: 127.0.0.1:" + fmt.Sprint(r.Port) + " is not allowed ("
				if r.Verdict != string(c.verdict) || !strings.HasPrefix(r.Reason, want) || r.Host != "127.0.0.1" ||
					r.Suggestion != fmt.Sprintf("Network(127.0.0.1:%d)", r.Port) || r.Count != 1 {
					t.Fatalf("refusal %+v, want verdict %s and %q", r, c.verdict, want)
				}
			}
		})
	}
}

// The plain-http refusal's body is the sentence the action's result
// gives, so the command's own output says what to do.
func TestProxyRefusalBodyNamesThePattern(t *testing.T) {
	srv := httptest.NewServer(hello())
	defer srv.Close()
	s := session(t, &Proxy{}, nil, nil, nil)
	code, body := get(t, s, "http://127.0.0.1:"+port(t, srv.URL)+"/")
	want := fmt.Sprintf("brabo: network: 127.0.0.1:%s is not allowed (Network(127.0.0.1:%s) would allow it)", port(t, srv.URL), port(t, srv.URL))
	if code != 403 || strings.TrimSpace(body) != want {
		t.Fatalf("= %d %q, want 403 %q", code, body, want)
	}
	get(t, s, "http://127.0.0.1:"+port(t, srv.URL)+"/again")
	if r := s.Refusals(); len(r) != 1 || r[0].Count != 2 {
		t.Fatalf("refusals %+v, want one destination refused twice", r)
	}
}

// A rule for a name that resolves to 127.0.0.1 does not open loopback.
func TestProxyNameResolvingToLoopbackIsRefused(t *testing.T) {
	srv := httptest.NewServer(hello())
	defer srv.Close()
	tls := httptest.NewTLSServer(hello())
	defer tls.Close()
	s := session(t, &Proxy{}, []string{"Network(localhost)"}, nil, nil)
	for _, u := range []string{srv.URL, tls.URL} {
		code, body := get(t, s, strings.Replace(u, "127.0.0.1", "localhost", 1))
		if code != 403 {
			t.Fatalf("GET %s via localhost = %d %q, want 403", u, code, body)
		}
	}
	for _, r := range s.Refusals() {
		if !strings.Contains(r.Reason, "resolves to 127.0.0.1, a loopback address") && !strings.Contains(r.Reason, "resolves to ::1") {
			t.Fatalf("refusal %+v does not say why", r)
		}
	}
}

// brabo's own listening addresses are refused whatever the name and
// whatever the rule: a literal IP:port opens them no more than a name.
func TestProxyRefusesBrabosOwnAddresses(t *testing.T) {
	api := httptest.NewServer(hello())
	defer api.Close()
	db := httptest.NewServer(hello())
	defer db.Close()
	apiPort, dbPort := port(t, api.URL), port(t, db.URL)
	p := &Proxy{Own: []string{"127.0.0.1:" + apiPort, ":" + dbPort}}
	s := session(t, p, []string{"Network(127.0.0.1:" + apiPort + ")", "Network(127.0.0.1:" + dbPort + ")", "Network(localhost)"}, nil, nil)
	for _, u := range []string{api.URL, db.URL, "http://localhost:" + apiPort, "http://localhost:" + dbPort} {
		if code, body := get(t, s, u); code != 403 || strings.Contains(body, "hello") {
			t.Fatalf("GET %s = %d %q, want 403", u, code, body)
		}
		u = strings.Replace(u, "http://", "https://", 1)
		if code, _ := get(t, s, u); code != 403 {
			t.Fatalf("CONNECT %s = %d, want 403", u, code)
		}
	}
	for _, r := range s.Refusals() {
		if r.Host == "127.0.0.1" && !strings.Contains(r.Reason, "brabo's own listening address") {
			t.Fatalf("refusal %+v does not name brabo's own address", r)
		}
	}
}

// fakeResolver answers example.test with a public address, and nothing
// for internal.test.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// upstreamProxy is brabo's own upstream proxy for the test: it records
// what it is asked for and sends every tunnel and request to to.
type upstreamProxy struct {
	mu   sync.Mutex
	seen []string
	to   string
}

func (u *upstreamProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.seen = append(u.seen, r.Method+" "+r.Host+" "+r.Header.Get("Proxy-Authorization"))
	u.mu.Unlock()
	out, err := net.Dial("tcp", u.to)
	if err != nil {
		http.Error(w, err.Error(), 502)
		return
	}
	defer out.Close()
	if r.Method != http.MethodConnect {
		r.RequestURI = ""
		r.Header.Del("Proxy-Authorization")
		r.Write(out)
		resp, err := http.ReadResponse(bufio.NewReader(out), r)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		return
	}
	in, _, _ := w.(http.Hijacker).Hijack()
	io.WriteString(in, "HTTP/1.1 200 OK\r\n\r\n")
	relay(in, out, in)
}

// brabo's HTTPS_PROXY carries the outgoing leg to a public address; a
// name brabo cannot resolve goes to it by name.
func TestProxyHonoursBrabosUpstreamProxy(t *testing.T) {
	secure := httptest.NewTLSServer(hello())
	defer secure.Close()
	up := &upstreamProxy{to: strings.TrimPrefix(secure.URL, "https://")}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	upURL, _ := url.Parse(upSrv.URL)
	upURL.User = url.UserPassword("brabo", "s3cret")
	p := &Proxy{
		Resolver: fakeResolver{"example.test": {netip.MustParseAddr("203.0.113.7")}},
		Upstream: func(*url.URL) (*url.URL, error) { return upURL, nil },
	}
	s := session(t, p, []string{"Network(example.test)", "Network(internal.test)"}, nil, nil)
	for _, u := range []string{"https://example.test/", "https://internal.test:8443/"} {
		code, body := get(t, s, u)
		if code != 200 || !strings.HasPrefix(body, "hello from") {
			t.Fatalf("GET %s = %d %q", u, code, body)
		}
	}
	want := []string{"CONNECT example.test:443 Basic YnJhYm86czNjcmV0", "CONNECT internal.test:8443 Basic YnJhYm86czNjcmV0"}
	if fmt.Sprint(up.seen) != fmt.Sprint(want) {
		t.Fatalf("the upstream proxy saw %q, want %q", up.seen, want)
	}
	// The rules still come first: nothing unallowed reaches the upstream.
	if code, _ := get(t, s, "https://other.test/"); code != 403 {
		t.Fatalf("other.test = %d, want 403", code)
	}
	if len(up.seen) != 2 {
		t.Fatalf("the upstream proxy saw %q", up.seen)
	}
}

// Closing the session ends its open tunnels: nothing a command left
// running keeps a way out.
func TestSessionCloseEndsTunnels(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c)
		}
	}()
	s := session(t, &Proxy{}, []string{"Network(" + echo.Addr().String() + ")"}, nil, nil)
	c, err := net.Dial("unix", s.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", echo.Addr(), echo.Addr())
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("CONNECT answered %q", line)
	}
	br.ReadString('\n')
	io.WriteString(c, "ping\n")
	if got, _ := br.ReadString('\n'); got != "ping\n" {
		t.Fatalf("echo %q", got)
	}
	s.Close()
	if _, err := br.ReadString('\n'); err == nil {
		t.Fatal("the tunnel outlived its session")
	}
}

// Under root, the session's socket is the sandbox user's alone: that user
// connects, another does not.
func TestSessionSocketBelongsToTheSandboxUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("brabo chowns the socket only as root") // not a missing part: CI runs as root
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{SocketUID: 65534, SocketGID: 65534}
	r, _ := policy.NewRules("", nil, nil, nil)
	s, err := p.Open(os.TempDir(), r) // as brabo does: a folder every user can traverse
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	as := func(uid uint32) string {
		cmd := exec.Command(curl, "-sS", "--max-time", "5", "--unix-socket", s.Socket(), "http://x/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := as(65534); !strings.Contains(out, "brabo's egress proxy takes proxy requests") {
		t.Fatalf("the sandbox user could not reach the proxy: %q", out)
	}
	if out := as(65533); strings.Contains(out, "brabo's egress proxy") || !strings.Contains(out, "Couldn't connect") {
		t.Fatalf("another user reached the proxy: %q", out)
	}
}

// A folder too deep for a unix socket's path is refused with a sentence,
// not the kernel's "invalid argument".
func TestOpenRefusesASocketPathTooLong(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := (&Proxy{}).Open(deep, nil)
	if err == nil || !strings.Contains(err.Error(), "longer than a unix socket's 107 bytes") {
		t.Fatalf("Open = %v", err)
	}
	if left, _ := os.ReadDir(deep); len(left) != 0 {
		t.Fatalf("Open left %v", left)
	}
}

// A command trying many hosts records MaxRefusals destinations and counts
// the rest.
func TestSessionCapsItsRefusals(t *testing.T) {
	s := session(t, &Proxy{}, nil, nil, nil)
	for i := 0; i < MaxRefusals+5; i++ {
		if code, _ := get(t, s, fmt.Sprintf("http://h%d.example/", i)); code != 403 {
			t.Fatalf("h%d: %d", i, code)
		}
	}
	if n, more := len(s.Refusals()), s.More(); n != MaxRefusals || more != 5 {
		t.Fatalf("%d recorded, %d more; want %d and 5", n, more, MaxRefusals)
	}
}
