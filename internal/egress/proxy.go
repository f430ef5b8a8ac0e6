// Package egress is brabo's egress proxy: the only way out of a
// sandboxed command's network namespace. Each action gets a Session, an
// HTTP proxy on a unix socket of its own that the sandbox binds in; inside
// the sandbox the forwarder (forward.go, brabo itself in a launcher mode)
// listens on the namespace's 127.0.0.1 and relays to that socket, with
// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY pointing at it. ssh, which speaks
// no HTTP, reaches a session through the tunnel (connect.go): its
// ProxyCommand asks the socket for a CONNECT and relays its stream.
//
// The proxy handles plain HTTP and HTTPS CONNECT. It decides each
// connection on the host name the command asked for (policy.DecideNetwork),
// then on every address the name resolves to (policy.DecideNetworkAddress):
// a loopback, link-local or private address passes only when an allow
// pattern names that literal IP:port, and brabo's own listening addresses
// (its API, its database) never pass. It dials the address it checked,
// never the name again, so a name cannot resolve to one address for the
// check and another for the connection. brabo's own upstream proxy
// (HTTPS_PROXY, HTTP_PROXY and NO_PROXY in brabo's environment) carries
// the outgoing leg to a public address.
//
// Every refusal is kept on the session (Refusals) for the action's result
// and its network.refused events; the command sees a 403 whose body is the
// same sentence.
package egress

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Resolver looks up the addresses of a host name (*net.Resolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Proxy is the server-wide configuration every Session shares.
type Proxy struct {
	// Own are brabo's own listening addresses (host:port: the API, the
	// database): refused whatever a rule says. An unspecified host
	// (0.0.0.0:8080, :8080) refuses that port on every local address.
	Own []string
	// Upstream returns the proxy the outgoing leg to target goes through,
	// or nil for a direct connection. Nil reads brabo's own environment
	// (http.ProxyFromEnvironment: HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
	Upstream func(target *url.URL) (*url.URL, error)
	// Resolver resolves host names (net.DefaultResolver when nil).
	Resolver Resolver
	// DialTimeout bounds each outgoing connection (default 30 s).
	DialTimeout time.Duration
	// Log receives one line per refusal; nil logs nothing.
	Log *slog.Logger
	// SocketUID and SocketGID, when brabo runs as root and SocketUID is
	// not 0, own each session's socket: the unprivileged user a sandboxed
	// command runs as (the socket is 0600, its folder 0711, so no other
	// user can connect).
	SocketUID, SocketGID int

	ownOnce sync.Once
	own     []netip.AddrPort
	ownAny  map[uint16]bool // ports brabo listens on on every address
	local   []netip.Addr    // this machine's interface addresses
}

// Refusal is one refused destination of a session (brabo.NetworkRefusal).
type Refusal = brabo.NetworkRefusal

// Session is one action's proxy: a unix socket in a private folder, and
// the refusals of the connections it was asked for.
type Session struct {
	p      *Proxy
	rules  *policy.Rules
	dir    string
	socket string
	ln     net.Listener
	srv    *http.Server

	mu      sync.Mutex
	refused []Refusal
	more    int // refused connections to destinations past MaxRefusals
	tunnels map[net.Conn]bool
	closed  bool
}

// Open starts an action's session: its proxy listens on a unix socket in a
// new private folder under dir (os.TempDir when empty, /tmp when that
// path is too long for a socket), deciding with
// rules, which are the project's effective rules when the action starts.
func (p *Proxy) Open(dir string, rules *policy.Rules) (*Session, error) {
	p.ownOnce.Do(p.loadOwn)
	if dir == "" {
		// A long TMPDIR (a test's, a per-user one) would not fit a unix
		// socket's path: /tmp does, and the folder is private (0700).
		dir = os.TempDir()
		if len(filepath.Join(dir, "brabo-egress-0123456789", "proxy.sock")) > maxSocketPath {
			dir = "/tmp"
		}
	}
	d, err := os.MkdirTemp(dir, "brabo-egress-")
	if err != nil {
		return nil, fmt.Errorf("egress: the session's folder: %w", err)
	}
	s := &Session{p: p, rules: rules, dir: d, socket: filepath.Join(d, "proxy.sock"), tunnels: map[net.Conn]bool{}}
	if len(s.socket) > maxSocketPath {
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress: the socket path %s is longer than a unix socket's %d bytes: give the sessions a shorter folder", s.socket, maxSocketPath)
	}
	ln, err := net.Listen("unix", s.socket)
	if err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("egress: listening on %s: %w", s.socket, err)
	}
	s.ln = ln
	if err := p.ownSocket(d, s.socket); err != nil {
		ln.Close()
		os.RemoveAll(d)
		return nil, err
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: nil}
	go s.srv.Serve(ln)
	return s, nil
}

// maxSocketPath is the longest path a unix socket may have on Linux
// (sun_path holds 108 bytes, the NUL included).
const maxSocketPath = 107

// ownSocket gives the socket to the sandbox's user, when brabo is root.
func (p *Proxy) ownSocket(dir, socket string) error {
	if err := os.Chmod(socket, 0o600); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	if os.Geteuid() != 0 || p.SocketUID == 0 {
		return nil
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	if err := os.Chown(socket, p.SocketUID, p.SocketGID); err != nil {
		return fmt.Errorf("egress: giving the socket to uid %d: %w", p.SocketUID, err)
	}
	return nil
}

// Socket is the path of the session's unix socket, which the sandbox binds
// in.
func (s *Session) Socket() string { return s.socket }

// Refusals returns the refused destinations so far, in the order of their
// first refusal.
func (s *Session) Refusals() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refusal(nil), s.refused...)
}

// MaxRefusals is how many distinct destinations a session records; the
// connections to others are refused and only counted (More).
const MaxRefusals = 50

// More counts the refused connections to destinations past MaxRefusals.
func (s *Session) More() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.more
}

// Close stops the session: the listener, every open connection and tunnel
// (nothing a command left behind keeps a way out), and the folder.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.tunnels {
		c.Close()
	}
	s.mu.Unlock()
	err := s.srv.Close()
	os.RemoveAll(s.dir)
	return err
}

// track keeps c to close with the session; false when it is already closed.
func (s *Session) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.tunnels[c] = true
	return true
}

func (s *Session) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.tunnels, c)
	s.mu.Unlock()
}

// refuse records a refusal of host:port.
func (s *Session) refuse(host string, port int, d policy.NetworkDecision) *Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.refused {
		if r := &s.refused[i]; r.Host == host && r.Port == port {
			r.Count++
			return r
		}
	}
	if len(s.refused) >= MaxRefusals {
		// A command that tries many hosts does not grow the result and
		// the log without bound: the rest are counted.
		s.more++
		return &Refusal{Host: host, Port: port, Verdict: string(d.Verdict), Rule: d.Rule, Suggestion: d.Suggestion, Reason: d.Reason, Count: 1}
	}
	s.refused = append(s.refused, Refusal{Host: host, Port: port, Verdict: string(d.Verdict), Rule: d.Rule,
		Suggestion: d.Suggestion, Reason: d.Reason, Count: 1})
	if s.p.Log != nil {
		s.p.Log.Info("network refused", "host", host, "port", port, "reason", d.Reason)
	}
	return &s.refused[len(s.refused)-1]
}

// ServeHTTP is the proxy: CONNECT opens a tunnel, a request with an
// absolute http URL is forwarded; anything else is a 400.
func (s *Session) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "brabo's egress proxy takes proxy requests (an absolute URL, or CONNECT)", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, "brabo's egress proxy forwards http:// URLs; https goes through CONNECT", http.StatusBadRequest)
		return
	}
	s.forward(w, r)
}

// errRefused is a refusal: the sentence is the command's 403.
type errRefused struct{ r *Refusal }

func (e errRefused) Error() string { return e.r.Reason }

// target splits host:port (defaultPort when it has none) and normalises
// the host.
func target(hostport string, defaultPort int) (string, int, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		if !strings.Contains(err.Error(), "missing port") {
			return "", 0, err
		}
		host, portText = strings.Trim(hostport, "[]"), strconv.Itoa(defaultPort)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("the port %q is not a number from 1 to 65535", portText)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return "", 0, errors.New("no host")
	}
	return host, port, nil
}

// dial decides host:port and opens the outgoing connection: to the checked
// address, or through the upstream proxy (viaProxy true: the connection
// is to the proxy, which is asked for host:port by the caller).
func (s *Session) dial(ctx context.Context, scheme, host string, port int) (c net.Conn, upstream *url.URL, err error) {
	if d := policy.DecideNetwork(s.rules, host, port); !d.Allowed() {
		return nil, nil, errRefused{s.refuse(host, port, d)}
	}
	p := s.p
	var addrs []netip.Addr
	if a, perr := netip.ParseAddr(host); perr == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else {
		res := p.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		lctx, cancel := context.WithTimeout(ctx, p.dialTimeout())
		addrs, err = res.LookupNetIP(lctx, "ip", host)
		cancel()
	}
	up, uerr := p.upstream(scheme, host, port)
	if uerr != nil {
		return nil, nil, fmt.Errorf("brabo's upstream proxy setting: %w", uerr)
	}
	if err != nil || len(addrs) == 0 {
		if up != nil {
			// brabo cannot resolve it, its upstream proxy may: nothing
			// local of this machine is reached through a name it cannot
			// resolve itself.
			c, err := p.dialer().DialContext(ctx, "tcp", up.Host)
			return c, up, err
		}
		return nil, nil, fmt.Errorf("cannot resolve %s: %w", host, err)
	}
	var ok []netip.Addr
	var first *policy.NetworkDecision
	localOK := false
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(port))
		if p.isOwn(ap) {
			d := policy.NetworkDecision{Verdict: policy.NetworkDeny,
				Reason: fmt.Sprintf("network: %s is not allowed (%s is brabo's own listening address; no rule opens it)", shown(host, port), ap)}
			if first == nil {
				first = &d
			}
			continue
		}
		d := policy.DecideNetworkAddress(s.rules, host, ap)
		if !d.Allowed() {
			if first == nil {
				first = &d
			}
			continue
		}
		if policy.LocalAddressKind(ap.Addr()) != "" {
			localOK = true
		}
		ok = append(ok, ap.Addr())
	}
	if len(ok) == 0 {
		return nil, nil, errRefused{s.refuse(host, port, *first)}
	}
	if up != nil && !localOK {
		c, err := p.dialer().DialContext(ctx, "tcp", up.Host)
		return c, up, err
	}
	for _, a := range ok {
		if c, err = p.dialer().DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String()); err == nil {
			return c, nil, nil
		}
	}
	return nil, nil, err
}

func shown(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// connect serves CONNECT host:port: a tunnel after the checks.
func (s *Session) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := target(r.Host, 443)
	if err != nil {
		http.Error(w, "brabo's egress proxy: CONNECT "+r.Host+": "+err.Error(), http.StatusBadRequest)
		return
	}
	out, up, err := s.dial(r.Context(), "https", host, port)
	if err != nil {
		fail(w, err)
		return
	}
	if up != nil {
		if err := upstreamConnect(out, up, net.JoinHostPort(host, strconv.Itoa(port))); err != nil {
			out.Close()
			http.Error(w, "brabo's egress proxy: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		out.Close()
		http.Error(w, "brabo's egress proxy cannot tunnel here", http.StatusInternalServerError)
		return
	}
	in, brw, err := hj.Hijack()
	if err != nil {
		out.Close()
		return
	}
	if !s.track(in) || !s.track(out) {
		in.Close()
		out.Close()
		return
	}
	defer s.untrack(in)
	defer s.untrack(out)
	if _, err := io.WriteString(in, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		in.Close()
		out.Close()
		return
	}
	var fromClient io.Reader = in
	if n := brw.Reader.Buffered(); n > 0 {
		fromClient = io.MultiReader(io.LimitReader(brw.Reader, int64(n)), in)
	}
	relay(in, out, fromClient)
}

// relay copies both ways between the command's side a (read from ra) and
// the outgoing side b until both are done.
func relay(a, b net.Conn, ra io.Reader) {
	done := make(chan struct{})
	go func() {
		io.Copy(b, ra)
		closeWrite(b)
		close(done)
	}()
	io.Copy(a, b)
	closeWrite(a)
	<-done
	a.Close()
	b.Close()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// upstreamConnect asks brabo's upstream proxy, on c, for a tunnel to
// hostport.
func upstreamConnect(c net.Conn, up *url.URL, hostport string) error {
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: hostport}, Host: hostport, Header: http.Header{}}
	if auth := proxyAuth(up); auth != "" {
		req.Header.Set("Proxy-Authorization", auth)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	defer c.SetDeadline(time.Time{})
	if err := req.Write(c); err != nil {
		return fmt.Errorf("brabo's upstream proxy %s: %w", up.Host, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fmt.Errorf("brabo's upstream proxy %s: %w", up.Host, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("brabo's upstream proxy %s refused CONNECT %s: %s", up.Host, hostport, resp.Status)
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("brabo's upstream proxy %s sent data before the tunnel", up.Host)
	}
	return nil
}

func proxyAuth(up *url.URL) string {
	if up.User == nil {
		return ""
	}
	pw, _ := up.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(up.User.Username()+":"+pw))
}

// hopHeaders are the headers of one hop, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward serves a plain http request: one outgoing connection per
// request, so that each request is decided on its own host.
func (s *Session) forward(w http.ResponseWriter, r *http.Request) {
	host, port, err := target(r.URL.Host, 80)
	if err != nil {
		http.Error(w, "brabo's egress proxy: "+r.URL.Host+": "+err.Error(), http.StatusBadRequest)
		return
	}
	out, up, err := s.dial(r.Context(), "http", host, port)
	if err != nil {
		fail(w, err)
		return
	}
	if !s.track(out) {
		out.Close()
		return
	}
	defer s.untrack(out)
	defer out.Close()
	req := r.Clone(r.Context())
	req.RequestURI = ""
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	for _, h := range strings.Split(r.Header.Get("Connection"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			req.Header.Del(h)
		}
	}
	req.Close = true
	if up != nil {
		if auth := proxyAuth(up); auth != "" {
			req.Header.Set("Proxy-Authorization", auth)
		}
		err = req.WriteProxy(out)
	} else {
		err = req.Write(out)
	}
	if err != nil {
		http.Error(w, "brabo's egress proxy: sending the request: "+err.Error(), http.StatusBadGateway)
		return
	}
	br := bufio.NewReaderSize(out, 64<<10)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		http.Error(w, "brabo's egress proxy: reading the response: "+err.Error(), http.StatusBadGateway)
		return
	}
	// The head is rewritten (no hop-by-hop header, Connection: close);
	// the body is relayed as it comes, framing included, until the
	// server closes (it was asked to): the kernel moves it, not a copy
	// through the response writer. The command's connection closes after
	// it, so its next request is decided on its own.
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "brabo's egress proxy cannot relay here", http.StatusInternalServerError)
		return
	}
	in, cbuf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer in.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	if len(resp.TransferEncoding) > 0 {
		resp.Header.Set("Transfer-Encoding", strings.Join(resp.TransferEncoding, ", "))
	}
	resp.Header.Set("Connection", "close")
	fmt.Fprintf(cbuf, "HTTP/%d.%d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.Status)
	resp.Header.Write(cbuf)
	cbuf.WriteString("\r\n")
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		cbuf.Write(b)
		br.Discard(n)
	}
	if err := cbuf.Flush(); err != nil {
		return
	}
	if req.Method == http.MethodHead {
		return
	}
	io.Copy(in, out)
}

// fail answers a failed dial: 403 with the sentence for a refusal, 502
// otherwise.
func fail(w http.ResponseWriter, err error) {
	var ref errRefused
	if errors.As(err, &ref) {
		w.Header().Set("X-Brabo-Refused", ref.r.Reason)
		http.Error(w, "brabo: "+ref.r.Reason, http.StatusForbidden)
		return
	}
	http.Error(w, "brabo's egress proxy: "+err.Error(), http.StatusBadGateway)
}

func (p *Proxy) dialTimeout() time.Duration {
	if p.DialTimeout > 0 {
		return p.DialTimeout
	}
	return 30 * time.Second
}

func (p *Proxy) dialer() *net.Dialer { return &net.Dialer{Timeout: p.dialTimeout()} }

// upstream is brabo's own proxy for the outgoing leg to scheme://host:port.
func (p *Proxy) upstream(scheme, host string, port int) (*url.URL, error) {
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if p.Upstream != nil {
		return p.Upstream(u)
	}
	return http.ProxyFromEnvironment(&http.Request{URL: u})
}

// loadOwn resolves Own once.
func (p *Proxy) loadOwn() {
	p.ownAny = map[uint16]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if pfx, err := netip.ParsePrefix(a.String()); err == nil {
				p.local = append(p.local, pfx.Addr().Unmap())
			}
		}
	}
	for _, hp := range p.Own {
		host, portText, err := net.SplitHostPort(hp)
		if err != nil {
			continue
		}
		port, err := strconv.Atoi(portText)
		if err != nil || port < 1 || port > 65535 {
			continue
		}
		if a, err := netip.ParseAddr(host); err == nil && !a.IsUnspecified() {
			p.own = append(p.own, netip.AddrPortFrom(a.Unmap(), uint16(port)))
			continue
		} else if err == nil || host == "" {
			p.ownAny[uint16(port)] = true
			continue
		}
		// A name (localhost, db.internal): every address it has now,
		// and its port on every local address, since a name can move.
		p.ownAny[uint16(port)] = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		addrs, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		cancel()
		for _, a := range addrs {
			p.own = append(p.own, netip.AddrPortFrom(a.Unmap(), uint16(port)))
		}
	}
}

// isOwn reports whether ap is one of brabo's own listening addresses.
func (p *Proxy) isOwn(ap netip.AddrPort) bool {
	a := ap.Addr().Unmap()
	for _, o := range p.own {
		if o.Port() == ap.Port() && (o.Addr() == a || o.Addr().IsLoopback() && a.IsLoopback()) {
			return true
		}
	}
	if !p.ownAny[ap.Port()] {
		return false
	}
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	for _, l := range p.local {
		if l == a {
			return true
		}
	}
	return false
}
