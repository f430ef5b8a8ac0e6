package egress

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// echoServer answers each connection with "echo:" and what it read, and
// counts its connections.
func echoServer(t *testing.T) (port int, conns *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				fmt.Fprintf(c, "echo:%s", b)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, conns
}

// TestTunnelReachesItsSessionsHostPortOnly: from a network namespace of
// its own, the tunnel ssh's ProxyCommand runs (ConnectSubcommand) relays
// its standard input and output to the host:port its session allows; to
// any other host:port — another port of the same address, a name for
// it — it is refused with the proxy's sentence, exits 1, and the other
// server gets no connection.
func TestTunnelReachesItsSessionsHostPortOnly(t *testing.T) {
	needBwrap(t)
	allowed, _ := echoServer(t)
	other, otherConns := echoServer(t)
	s := session(t, &Proxy{}, []string{fmt.Sprintf("Network(127.0.0.1:%d)", allowed)}, nil, nil)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tunnel := func(host string, port int) string {
		return fmt.Sprintf(`x=$(printf hi | %s %s -s %s %s %d 2>&1); echo "$x rc=$?"`, self, ConnectSubcommand, s.Socket(), host, port)
	}
	out, code := inSandbox(t, s, strings.Join([]string{tunnel("127.0.0.1", allowed), tunnel("127.0.0.1", other), tunnel("localhost", allowed)}, "\n"))
	t.Logf("%s", out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] != "echo:hi rc=0" {
		t.Fatalf("the tunnel to the allowed host:port: %q", out)
	}
	for i, hp := range []string{fmt.Sprintf("127.0.0.1:%d", other), fmt.Sprintf("localhost:%d", allowed)} {
		want := TunnelRefused + ": to " + hp + " was refused: network: " + hp + " is not allowed"
		if l := lines[i+1]; !strings.HasPrefix(l, want) || !strings.HasSuffix(l, " rc=1") {
			t.Errorf("the tunnel to %s: %q, want %q… rc=1", hp, l, want)
		}
	}
	if n := otherConns.Load(); n != 0 {
		t.Errorf("the server no rule allows got %d connections", n)
	}
	if r := s.Refusals(); len(r) != 2 {
		t.Errorf("refusals %+v, want the two other destinations", r)
	}
}
