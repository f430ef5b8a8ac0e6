package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/policy"
)

// Network routes a terminal command's connections through brabo's egress
// proxy (internal/egress, docs/network.md): the command runs under the
// forwarder, which points HTTP_PROXY, HTTPS_PROXY and ALL_PROXY at a
// session of the proxy deciding with the project's rules. In the sandbox's
// network namespace that is the command's only way out; without a sandbox
// it is a route the command may ignore, which is why brabo sets it only
// with the sandbox. Typed actions brabo runs itself do not use the
// project's rules: a git_push or pr_open to an http(s) or ssh remote
// goes through a session of its own allowing only the remote's host:port
// (gitnet.go, gitssh.go); the others use brabo's own network.
type Network struct {
	// Proxy is the egress proxy the sessions are opened on.
	Proxy *egress.Proxy
	// Rules returns the rules an action's connections are decided with:
	// the project's effective rules when the command starts. It is read
	// at each start, so that it may be set after the executor is built
	// (the pipeline that answers it is built later). An error, or nil,
	// refuses every connection (an empty file allows nothing).
	Rules func(ctx context.Context, p *brabo.Project) (*policy.Rules, error)
	// Forwarder is the program that runs egress.Main when its first
	// argument is egress.Subcommand: brabo itself, or a test binary whose
	// TestMain does. In a sandbox, the path it is bound at.
	Forwarder string
	// Dir holds the sessions' folders (os.TempDir when empty).
	Dir string
}

// netRun is one command's session, nil-safe: a nil *netRun wraps nothing
// and reports nothing.
type netRun struct {
	n    *Network
	sess *egress.Session
}

// openNetwork opens the action's session when the executor has a Network.
func (e *Executor) openNetwork(ctx context.Context, req brabo.ExecRequest) (*netRun, error) {
	n := e.opts.Network
	if n == nil || n.Proxy == nil || n.Forwarder == "" {
		return nil, nil
	}
	var rules *policy.Rules
	if n.Rules != nil {
		r, err := n.Rules(ctx, req.Project)
		if err != nil {
			// Never fail open: a project whose rules cannot be read
			// reaches nothing.
			r = policy.Unreadable("permissions.json", "the rules could not be read for the network: "+err.Error())
		}
		rules = r
	}
	sess, err := n.Proxy.Open(n.Dir, rules)
	if err != nil {
		return nil, fmt.Errorf("the network proxy: %w", err)
	}
	return &netRun{n: n, sess: sess}, nil
}

// socket is the session's socket on the host ("" for none).
func (r *netRun) socket() string {
	if r == nil {
		return ""
	}
	return r.sess.Socket()
}

// wrap returns the command line that runs name args under the forwarder,
// its proxy socket at socket (the host path, or where a sandbox binds it).
func (r *netRun) wrap(socket, name string, args []string) (string, []string) {
	if r == nil {
		return name, args
	}
	return r.n.Forwarder, egress.ForwarderArgs(socket, append([]string{name}, args...)...)
}

// In the sandbox, the session's socket and the forwarder are bound at
// these paths, both read-only: connecting to a socket needs no write
// access to its mount (the kernel refuses writes on a read-only mount to
// files, folders and links only), and a read-only bind adds nothing to
// what Landlock lets the command write.
const (
	sandboxSocket    = "/run/brabo/egress.sock"
	sandboxForwarder = "/run/brabo/egress"
)

// sandbox adds the session to a sandbox's spec: the socket and brabo's
// binary bound in, and the forwarder in front of the command line,
// outside the Landlock launcher, which it then applies itself
// (egress.Main), so brabo starts once per command.
func (r *netRun) sandbox(spec *sandbox.Spec) {
	if r == nil {
		return
	}
	spec.Binds = append(spec.Binds, sandbox.Bind{Src: r.sess.Socket(), Dst: sandboxSocket, ReadOnly: true},
		sandbox.Bind{Src: r.n.Forwarder, Dst: sandboxForwarder, ReadOnly: true})
	spec.Prefix = append([]string{sandboxForwarder}, egress.ForwarderArgs(sandboxSocket)...)
}

// cannotForward reports whether the forwarder refused to start (nothing
// ran), with its message.
func (r *netRun) cannotForward(exit int, out string) (string, bool) {
	if r == nil || exit != 126 {
		return "", false
	}
	i := strings.Index(out, egress.CannotForward)
	if i < 0 {
		return "", false
	}
	return strings.TrimSpace(out[i:]), true
}

// finish closes the session and records its refusals on res: the
// Detail the pipeline turns into network.refused events, and the
// sentences the card and the agent read.
func (r *netRun) finish(res *brabo.Result) {
	if r == nil {
		return
	}
	r.sess.Close()
	if res != nil {
		res.SetNetworkRefusals(r.sess.Refusals())
		if more := r.sess.More(); more > 0 {
			res.Detail[brabo.DetailNetwork] += fmt.Sprintf("; and %d more connections to other destinations were refused", more)
		}
	}
}

// close closes the session when finish did not (an early return).
func (r *netRun) close() {
	if r != nil {
		r.sess.Close()
	}
}
