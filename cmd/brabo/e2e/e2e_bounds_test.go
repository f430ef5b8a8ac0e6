package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/store/sqlite"
)

// TestConnectionsAreBoundedUnderLoad holds 2,000 idle connections, 100
// kept-alive ones that went quiet, and 200 bodies sent a byte at a time
// against the real http.Server (HTTPServer, on loopback), with short
// bounds: the server closes every one of them by its timeouts, while a
// client asking /healthz on fresh connections is answered throughout.
//
// It needs about 5,000 descriptors (each connection is two, the client's
// and the server's, in this one process). Go raises the soft RLIMIT_NOFILE
// to the hard limit at start-up; the test raises it itself if it is still
// lower (the hard limit too, which root may), and fails saying so when it
// cannot.
func TestConnectionsAreBoundedUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: opens 2,300 connections")
	}
	const idle, quiet, slow = 2000, 100, 200
	need := uint64(2*(idle+quiet+slow) + 500)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < need {
		raised := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
		// above the hard limit only root (CAP_SYS_RESOURCE) may go; CI runs as root
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			t.Fatalf("the test needs %d descriptors; the limit is %d (hard %d) and raising it failed: %v (run as root, or raise the hard limit: ulimit -Hn %d)",
				need, lim.Cur, lim.Max, err, need)
		}
	}

	s, err := sqlite.Open(context.Background(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	e.api.ReadHeaderTimeout, e.api.BodyTimeout, e.api.IdleTimeout = time.Second, time.Second, time.Second
	srv := e.api.HTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	// /healthz on a fresh connection every 50 ms, each answered within a
	// second, from before the flood until after it is gone.
	var asked, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var health sync.WaitGroup
	health.Add(1)
	go func() {
		defer health.Done()
		client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			asked.Add(1)
			resp, err := client.Get("http://" + addr + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				failed.Add(1)
				firstFailure.CompareAndSwap(nil, err.Error())
			}
		}
	}()

	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	start := time.Now()
	var idles, quiets, slows []net.Conn
	for i := 0; i < idle; i++ {
		idles = append(idles, dial())
	}
	for i := 0; i < quiet; i++ {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: brabo\r\n\r\n")
		quiets = append(quiets, c)
	}
	for i := 0; i < slow; i++ {
		c := dial()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: brabo\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{",
			e.pp("/actions"), e.agent)
		slows = append(slows, c)
		go func() { // a byte every 100 ms, until the server closes
			for {
				time.Sleep(100 * time.Millisecond)
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
	}
	t.Logf("%d connections open in %s", idle+quiet+slow, time.Since(start).Round(time.Millisecond))

	// Each connection must be closed by the server (EOF or reset), not by
	// the client's own deadline, within the timeouts and a margin.
	deadline := time.Now().Add(6 * time.Second)
	closedAll := func(conns []net.Conn, what string, wantStatus string) {
		t.Helper()
		var open, wrong atomic.Int64
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(deadline)
				got, err := io.ReadAll(bufio.NewReader(c))
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					open.Add(1)
					return
				}
				// The kept-alive ones read their /healthz answer first, the
				// slow bodies their 408.
				if wantStatus != "" && !strings.Contains(string(got), wantStatus) {
					wrong.Add(1)
				}
			}()
		}
		wg.Wait()
		if open.Load() > 0 {
			t.Errorf("%d of %d %s connections were still open %s after they were made", open.Load(), len(conns), what, time.Since(start).Round(time.Millisecond))
		}
		if wrong.Load() > 0 {
			t.Errorf("%d of %d %s connections were not answered %q before they were closed", wrong.Load(), len(conns), what, wantStatus)
		}
	}
	closedAll(idles, "idle", "")
	closedAll(quiets, "kept-alive", "HTTP/1.1 200")
	closedAll(slows, "slow-body", "HTTP/1.1 408")
	time.Sleep(300 * time.Millisecond)
	close(stop)
	health.Wait()
	if failed.Load() > 0 || asked.Load() < 20 {
		t.Errorf("/healthz during the flood: %d of %d failed (first: %v)", failed.Load(), asked.Load(), firstFailure.Load())
	}
	// Nothing the slow bodies carried was proposed.
	if list := e.ok("GET", "/v1/queue", e.admin, nil, 200)["actions"].([]any); len(list) != 0 {
		t.Errorf("the slow bodies proposed %d actions", len(list))
	}
}
