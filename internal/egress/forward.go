package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo/internal/confine"
)

// Subcommand is the forwarder's hidden first argument: brabo runs itself
// as `brabo __brabo-egress -s SOCKET -- program args…` inside the sandbox.
const Subcommand = "__brabo-egress"

// exitCannotForward is the forwarder's exit status when it could not
// start: the command does not run (126, the shell's "found but could not
// run").
const exitCannotForward = 126

// CannotForward starts the message the forwarder prints when it cannot
// start; the executor reads it to tell that nothing ran.
const CannotForward = "brabo: cannot start the network forwarder"

// proxyVars are the variables the command's child gets: every spelling
// ordinary tools read, all pointing at the forwarder.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// ForwarderArgs returns the forwarder's arguments (after the program,
// brabo itself) that run argv with its network through socket.
func ForwarderArgs(socket string, argv ...string) []string {
	return append([]string{Subcommand, "-s", socket, "--"}, argv...)
}

// IsForwarder reports whether args (os.Args) start the forwarder, or its
// tunnel (ConnectSubcommand), which Main runs too.
func IsForwarder(args []string) bool {
	return len(args) > 1 && args[1] == Subcommand || IsConnect(args)
}

// ProxyEnv returns the environment the forwarder gives its child: env
// without any proxy variable, plus the proxy variables set to proxyURL and
// NO_PROXY empty, so nothing bypasses it.
func ProxyEnv(env []string, proxyURL string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY":
			continue
		}
		out = append(out, kv)
	}
	for _, v := range proxyVars {
		out = append(out, v+"="+proxyURL)
	}
	return append(out, "NO_PROXY=", "no_proxy=")
}

// Main is the forwarder: args are os.Args. It listens on 127.0.0.1 (the
// sandbox's own loopback) on a port the kernel picks, relays every
// connection to the socket, and runs the program as its child with the
// proxy variables pointing there; it exits with the child's status (128 +
// the signal for a child killed by one), passing on SIGTERM, SIGINT and
// SIGHUP. It never returns; when it cannot start it prints why and exits
// 126 without running the program. A program that is brabo's Landlock
// launcher (argv[1] is confine.Subcommand) is confined in-process
// (confine.Restrict) and its own program started directly. Started as the
// tunnel (IsConnect), it is ConnectMain.
func Main(args []string) {
	if IsConnect(args) {
		ConnectMain(args)
	}
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, CannotForward+": "+format+"\n", a...)
		os.Exit(exitCannotForward)
	}
	socket, argv, err := parseForwarder(args[2:])
	if err != nil {
		fail("%v", err)
	}
	if fi, err := os.Stat(socket); err != nil || fi.Mode()&os.ModeSocket == 0 {
		fail("%s is not brabo's proxy socket: %v", socket, err)
	}
	if len(argv) > 1 && argv[1] == confine.Subcommand {
		// The command is to run under brabo's Landlock launcher: this
		// process is brabo too, so it confines the thread it starts the
		// command from instead of starting the launcher (one process
		// start fewer per command). The forwarder's other threads stay
		// free to reach the socket; the command and all it starts are
		// confined. A failure is the launcher's: the command does not run.
		inner, err := confine.Restrict(argv[2:])
		if err != nil {
			fmt.Fprintf(os.Stderr, "brabo: cannot confine the command: %v\n", err)
			os.Exit(exitCannotForward)
		}
		argv = inner
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("listening on 127.0.0.1: %v", err)
	}
	go serveForward(ln, socket)
	proxyURL := "http://" + ln.Addr().String()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = ProxyEnv(os.Environ(), proxyURL)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fail("starting %s: %v", argv[0], err)
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(ee.ExitCode())
	}
	fmt.Fprintf(os.Stderr, "brabo: the network forwarder lost its command: %v\n", err)
	os.Exit(1)
}

// parseForwarder reads the forwarder's arguments (after Subcommand).
func parseForwarder(args []string) (string, []string, error) {
	socket := ""
	for len(args) > 0 {
		switch args[0] {
		case "-s":
			if len(args) < 2 || !strings.HasPrefix(args[1], "/") {
				return "", nil, errors.New("-s needs the absolute path of the proxy socket")
			}
			socket, args = args[1], args[2:]
		case "--":
			if socket == "" {
				return "", nil, errors.New("no -s SOCKET before --")
			}
			if len(args) < 2 {
				return "", nil, errors.New("no program after --")
			}
			return socket, args[1:], nil
		default:
			return "", nil, fmt.Errorf("unknown argument %q", args[0])
		}
	}
	return "", nil, errors.New("no -- before the program")
}

// serveForward relays each connection of ln to the unix socket.
func serveForward(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		go func() {
			u, err := net.Dial("unix", socket)
			if err != nil {
				io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nbrabo: the network forwarder cannot reach brabo's proxy\n")
				c.Close()
				return
			}
			relay(c, u, c)
		}()
	}
}
