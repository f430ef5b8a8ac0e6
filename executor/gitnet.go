package executor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/policy"
)

// A push or ls-remote to an http or https remote runs in the sandbox when
// the executor has a sandbox and a Network: through brabo's egress proxy,
// in a session whose rules allow exactly the remote's host:port
// (Network(host:port)) for that one step, under the forwarder; the
// credential is read by brabo on the host (`git credential fill`, with
// the user's own git configuration, never the repository's) and handed
// to the sandboxed git as a file only that step's bwrap is given
// (sandbox.Spec.Data, on a descriptor), which a helper that only answers
// get prints: it is on no command line, in no environment and on no
// disk. Such a step runs no hook (gitHooks or not): a hook in the same
// sandbox could read the file.

// credentialFile is where a push's credential appears in its sandbox.
const credentialFile = "/run/brabo/git-credential"

// httpRemote returns the parsed URL of an http or https remote.
func httpRemote(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return nil, false
	}
	return u, true
}

// networkBox returns the sandbox of a step to the http(s) remote u, the
// options that go before git's subcommand, and done, which closes the
// step's proxy session; ok false when the executor has no way to route it
// (no sandbox, no Network): the step then runs on the host.
func (g *gitSession) networkBox(u *url.URL) (spec *sandbox.Spec, gitOpts []string, done func(), ok bool, err error) {
	n := g.e.opts.Network
	if g.e.opts.Sandbox == nil || n == nil || n.Proxy == nil || n.Forwarder == "" {
		return nil, nil, nil, false, nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	portN, err := strconv.Atoi(port)
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("%s: the remote %s: the port %q", g.t, u.Redacted(), port)
	}
	nr, err := g.remoteProxy(u.Hostname(), portN, u.Redacted())
	if err != nil {
		return nil, nil, nil, false, err
	}
	spec = &sandbox.Spec{Root: g.root}
	nr.sandbox(spec)
	// No credential of the repository's or of anything else: only the
	// one brabo read for this remote, if any.
	gitOpts = []string{"-c", "credential.helper="}
	if cred := g.hostCredential(u); cred != "" {
		spec.Data = append(spec.Data, sandbox.Data{Dst: credentialFile, Content: []byte(cred)})
		// A helper that only answers get: the file is read-only, and
		// git's store helper would try to write it back.
		gitOpts = append(gitOpts, "-c", `credential.helper=!f() { test "$1" = get && cat `+credentialFile+`; }; f`)
	}
	g.with("GIT_TERMINAL_PROMPT=0")
	return spec, gitOpts, nr.close, true, nil
}

// remoteProxy opens the proxy session of one step to a network remote
// (shown names it): its rules allow host:port only.
func (g *gitSession) remoteProxy(host string, port int, shown string) (*netRun, error) {
	n := g.e.opts.Network
	pattern := net.JoinHostPort(host, strconv.Itoa(port))
	if strings.Contains(host, ":") {
		pattern = host + ":" + strconv.Itoa(port) // Network(…) writes an IPv6 address bare
	}
	rules, err := policy.Parse("the remote "+shown, []byte(fmt.Sprintf(`{"allow": [%q]}`, "Network("+pattern+")")))
	if err != nil {
		return nil, fmt.Errorf("%s: the remote's network rule: %w", g.t, err)
	}
	sess, err := n.Proxy.Open(n.Dir, rules)
	if err != nil {
		return nil, fmt.Errorf("%s: the network proxy: %w", g.t, err)
	}
	return &netRun{n: n, sess: sess}, nil
}

// hostCredential asks the user's git on the host (`git credential fill`,
// outside any repository, with the user's HOME and git configuration but
// no prompt) for the credential of u, and returns it as a credential
// helper answers (username=…, password=…), "" when there is none.
func (g *gitSession) hostCredential(u *url.URL) string {
	ctx, cancel := context.WithTimeout(g.ctx, g.e.opts.GitTimeout)
	defer cancel()
	var in bytes.Buffer
	fmt.Fprintf(&in, "protocol=%s\nhost=%s\n", u.Scheme, u.Host)
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		fmt.Fprintf(&in, "path=%s\n", p)
	}
	if u.User != nil && u.User.Username() != "" {
		fmt.Fprintf(&in, "username=%s\n", u.User.Username())
	}
	in.WriteString("\n")
	env := procenv.Set(g.e.baseEnv(), "HOME="+os.Getenv("HOME"), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "GIT_TERMINAL_PROMPT=") || strings.HasPrefix(kv, "GIT_ASKPASS=") {
			kept = append(kept, kv)
		}
	}
	cmd := exec.CommandContext(ctx, g.e.opts.GitPath, "credential", "fill")
	cmd.Dir, cmd.Env, cmd.Stdin = "/", kept, &in
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := procs.Run(cmd); err != nil {
		return ""
	}
	var user, pass string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "username":
			user = v
		case "password":
			pass = v
		}
	}
	if pass == "" {
		return ""
	}
	if strings.ContainsAny(user+pass, "\n\x00") {
		return ""
	}
	return "username=" + user + "\npassword=" + pass + "\n"
}
