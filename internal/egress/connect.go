package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ConnectSubcommand is the tunnel's hidden first argument: inside the
// sandbox, ssh's ProxyCommand runs brabo (or brabo-sandbox) as
// `__brabo-connect -s SOCKET HOST PORT`, which asks the session's proxy on
// SOCKET for a CONNECT tunnel to HOST:PORT and relays its standard input
// and output through it. The proxy decides the destination as it decides
// every other: a session opened for one ssh remote allows that remote's
// host:port only, whatever host and port the tunnel is asked for.
const ConnectSubcommand = "__brabo-connect"

// exitTunnelRefused is the tunnel's exit status when no tunnel was opened
// (the proxy refused, or the socket was not there).
const exitTunnelRefused = 1

// TunnelRefused starts the message the tunnel prints when no tunnel was
// opened; the sentence after it is the proxy's.
const TunnelRefused = "brabo: the network tunnel"

// ConnectArgs returns the tunnel's arguments (after the program, brabo
// itself) to host:port through socket.
func ConnectArgs(socket, host string, port int) []string {
	return []string{ConnectSubcommand, "-s", socket, host, strconv.Itoa(port)}
}

// IsConnect reports whether args (os.Args) start the tunnel.
func IsConnect(args []string) bool {
	return len(args) > 1 && args[1] == ConnectSubcommand
}

// ConnectMain is the tunnel: args are os.Args. It never returns: it exits
// 0 once both directions are done, and exitTunnelRefused, having printed
// the proxy's reason, when the tunnel was not opened.
func ConnectMain(args []string) {
	err := connect(args[2:], os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", TunnelRefused, err)
		os.Exit(exitTunnelRefused)
	}
	os.Exit(0)
}

// connect parses the tunnel's arguments (after ConnectSubcommand), opens
// the tunnel and relays in and out through it until both are done.
func connect(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 4 || args[0] != "-s" || !strings.HasPrefix(args[1], "/") {
		return errors.New("usage: " + ConnectSubcommand + " -s SOCKET HOST PORT")
	}
	socket, host := args[1], args[2]
	port, err := strconv.Atoi(args[3])
	if err != nil || port < 1 || port > 65535 || host == "" {
		return fmt.Errorf("%q %q is not a host and a port", host, args[3])
	}
	hostport := net.JoinHostPort(host, strconv.Itoa(port))
	c, err := net.Dial("unix", socket)
	if err != nil {
		return fmt.Errorf("to %s: cannot reach brabo's proxy: %v", hostport, err)
	}
	defer c.Close()
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: hostport}, Host: hostport, Header: http.Header{}}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if err := req.Write(c); err != nil {
		return fmt.Errorf("to %s: %v", hostport, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fmt.Errorf("to %s: brabo's proxy answered no tunnel: %v", hostport, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		why := strings.TrimSpace(resp.Header.Get("X-Brabo-Refused"))
		if why == "" {
			why = strings.TrimSpace(string(body))
		}
		return fmt.Errorf("to %s was refused: %s", hostport, why)
	}
	c.SetDeadline(time.Time{})
	done := make(chan struct{})
	go func() {
		io.Copy(c, in)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		close(done)
	}()
	// What the proxy sent after its answer is the remote's already.
	io.Copy(out, br)
	select {
	case <-done:
	case <-time.After(time.Second):
		// The remote closed: ssh is done; its standard input may stay
		// open, which must not keep the tunnel.
	}
	return nil
}
