// Package sshtest is test support: a real OpenSSH server of a test's own
// (sshd as a non-daemon on a free port of 127.0.0.1, its own host key, an
// authorized_keys holding a key it generated), for the tests of pushes
// over ssh. Without sshd or ssh-keygen the test skips, but fails where
// BRABO_REQUIRE_SSHD is set (CI).
package sshtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/proctest"
)

// Server is one running sshd.
type Server struct {
	// Port is its port on 127.0.0.1.
	Port int
	// User is the account a client logs in as: the test's own.
	User string
	// KnownHost is the known_hosts line of its host key
	// ([127.0.0.1]:port key).
	KnownHost string
	// Key and PubKey are the client's private key (the file's content,
	// OpenSSH format, no passphrase) and its public key, which
	// authorized_keys holds.
	Key, PubKey string
	// Log is sshd's log file.
	Log string
}

// URL returns the ssh:// URL of the path on the server.
func (s *Server) URL(path string) string {
	return "ssh://" + s.User + "@127.0.0.1:" + strconv.Itoa(s.Port) + path
}

// sshd is where Debian's openssh-server installs the server: it must be
// started by its absolute path.
const sshd = "/usr/sbin/sshd"

// Need skips the test when sshd or ssh-keygen is missing, and fails it
// instead where BRABO_REQUIRE_SSHD is set.
func Need(t testing.TB) {
	t.Helper()
	_, err := os.Stat(sshd)
	if err == nil {
		_, err = exec.LookPath("ssh-keygen")
	}
	if err == nil {
		_, err = exec.LookPath("ssh")
	}
	if err != nil {
		if os.Getenv("BRABO_REQUIRE_SSHD") != "" {
			t.Fatalf("BRABO_REQUIRE_SSHD is set and OpenSSH is missing: %v", err)
		}
		t.Skip("OpenSSH's server is missing (BRABO_REQUIRE_SSHD makes this a failure):", err)
	}
}

// Keygen makes a new ed25519 key pair without a passphrase in dir, named
// name, and returns the private key's and the public key's content.
func Keygen(t testing.TB, dir, name string) (private, public string) {
	t.Helper()
	f := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", f).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	priv, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(f + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return string(priv), strings.TrimSpace(string(pub))
}

// Start starts an sshd that lets the test's user in with a key it makes,
// stopped when the test ends. A delay above 0 makes every session wait
// that long before it runs the client's command (a forced command that
// then runs it), so that a test sees the client while it is connected.
func Start(t testing.TB, delay time.Duration) *Server {
	t.Helper()
	Need(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	_, hostPub := Keygen(t, dir, "host_key")
	priv, pub := Keygen(t, dir, "client_key")
	auth := filepath.Join(dir, "authorized_keys")
	line := pub
	if delay > 0 {
		line = fmt.Sprintf(`command="sleep %.3f; eval \"$SSH_ORIGINAL_COMMAND\"" %s`, delay.Seconds(), pub)
	}
	if err := os.WriteFile(auth, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation folder
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	log := filepath.Join(dir, "sshd.log")
	config := filepath.Join(dir, "sshd_config")
	conf := strings.Join([]string{
		"Port " + strconv.Itoa(port), "ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(dir, "host_key"), "AuthorizedKeysFile " + auth,
		"PidFile none", "StrictModes no", "UsePAM no", "PasswordAuthentication no",
		"KbdInteractiveAuthentication no", "PubkeyAuthentication yes", "PermitRootLogin prohibit-password",
		"AllowUsers " + u.Username, "LogLevel VERBOSE", "",
	}, "\n")
	if err := os.WriteFile(config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", config, "-E", log)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting sshd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(log)
			t.Fatalf("sshd ended: %s\n%s", out.String(), b)
		default:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("sshd does not answer on port %d: %s\n%s", port, out.String(), b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &Server{Port: port, User: u.Username, KnownHost: "[127.0.0.1]:" + strconv.Itoa(port) + " " + hostPub,
		Key: priv, PubKey: pub, Log: log}
}

// LogText is sshd's log so far, for a test's failure message.
func (s *Server) LogText() string {
	b, _ := os.ReadFile(s.Log)
	return string(b)
}

// Client is an ssh client process (or the tunnel of one) a Watcher saw.
type Client struct {
	PidNS, NetNS string // its namespaces (readlink /proc/<pid>/ns/…)
	Cmdline      string // its command line, arguments joined by spaces
}

// Watcher polls the process table, while a push runs, for ssh clients
// (a program named ssh, or a command line holding match) and for a
// secret on any command line or in any environment.
type Watcher struct {
	mu      sync.Mutex
	clients []Client
	held    []string
	stop    chan struct{}
	done    chan struct{}
}

// Watch starts a Watcher.
func Watch(secret, match string) *Watcher {
	w := &Watcher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			held := proctest.Holding(secret)
			ents, _ := os.ReadDir("/proc")
			var clients []Client
			for _, d := range ents {
				b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
				if err != nil || !strings.HasPrefix(string(b), "ssh\x00") && !strings.Contains(string(b), match) {
					continue
				}
				pid, _ := os.Readlink(filepath.Join("/proc", d.Name(), "ns", "pid"))
				nt, _ := os.Readlink(filepath.Join("/proc", d.Name(), "ns", "net"))
				clients = append(clients, Client{PidNS: pid, NetNS: nt, Cmdline: strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))})
			}
			w.mu.Lock()
			w.held = append(w.held, held...)
			w.clients = append(w.clients, clients...)
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return w
}

// Stop ends the watch and returns the clients seen and where the secret
// was seen.
func (w *Watcher) Stop() (clients []Client, held []string) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clients, w.held
}

// KeySecret is a line of the body of the private key key: what must
// travel on no command line and in no environment.
func KeySecret(t testing.TB, key string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(key), "\n")
	if len(lines) < 3 {
		t.Fatalf("a private key of %d lines", len(lines))
	}
	return lines[1]
}
