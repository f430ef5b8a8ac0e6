package app

import (
	"context"
	"log/slog"
	"net"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/policy"
)

// egressNetwork is the way out of the sandbox for brabo serve's terminal
// commands (docs/network.md): brabo's egress proxy, which refuses brabo's
// own listening addresses (the API at apiAddr, the database of db), with
// brabo-sandbox or brabo itself as the forwarder (sandboxBinary). The
// rules are svc's effective rules, set once svc exists (withRules). Nil
// when brabo's binary cannot be found.
func egressNetwork(apiAddr, db string, log *slog.Logger) *executor.Network {
	bin := sandboxBinary()
	if bin.err != nil {
		return nil
	}
	// The sessions' folders are in the temp folder, not the data folder:
	// bwrap, started as the sandbox's unprivileged user, must reach the
	// socket to bind it (the socket is that user's alone, 0600).
	return &executor.Network{
		Proxy:     &egress.Proxy{Own: ownAddrs(apiAddr, db), Log: log},
		Forwarder: bin.path,
	}
}

// sandboxNetwork is egressNetwork for the sandbox sb: nil without one
// (--no-sandbox, no bubblewrap), where a command's network is the host's
// and a proxy it could ignore would promise nothing. The sessions'
// sockets belong to the user sb runs commands as.
func sandboxNetwork(sb *sandbox.Sandbox, apiAddr, db string, log *slog.Logger) *executor.Network {
	if sb == nil {
		return nil
	}
	n := egressNetwork(apiAddr, db, log)
	if n != nil {
		n.Proxy.SocketUID, n.Proxy.SocketGID = sb.User()
	}
	return n
}

// withRules has n decide with svc's effective rules for the project.
func withRules(n *executor.Network, svc *pipeline.Service) {
	if n == nil {
		return
	}
	n.Rules = func(ctx context.Context, p *brabo.Project) (*policy.Rules, error) {
		r, _, err := svc.EffectiveRules(ctx, p)
		return r, err
	}
}

// ownAddrs are brabo's own listening addresses and its database's, as
// host:port: the proxy refuses them whatever a rule says.
func ownAddrs(apiAddr, db string) []string {
	out := []string{apiAddr}
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		// Not url.Parse: a URL may name several hosts
		// (host1:5432,host2:5433), which it refuses.
		rest := db[strings.Index(db, "://")+3:]
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			rest = rest[i+1:]
		}
		for _, h := range strings.Split(rest, ",") {
			if h == "" {
				h = "localhost"
			}
			if _, _, err := net.SplitHostPort(h); err != nil {
				h = net.JoinHostPort(strings.Trim(h, "[]"), "5432")
			}
			out = append(out, h)
		}
	}
	return out
}
