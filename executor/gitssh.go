package executor

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// A push or ls-remote to an ssh remote (ssh://…, git+ssh://…, scp-like
// [user@]host:path) runs in the sandbox when the executor has a sandbox
// and a Network, as an https one does: git runs ssh there with brabo's
// own command line (GIT_SSH_COMMAND, which no repository sets: gitguard
// refuses core.sshCommand) — no configuration file (-F /dev/null), no
// agent, no forwarding, no prompt —, whose ProxyCommand is the egress
// tunnel (egress.ConnectSubcommand) of a proxy session allowing the
// remote's host:port only. ssh's keys are the default identity files of
// brabo's user (~/.ssh/id_ed25519, id_ecdsa, id_rsa, those that exist),
// and its known hosts only the lines of that user's known_hosts files
// (and the system's) that name the remote's host, checked strictly: all
// handed in as data files readable by the step's user only
// (sandbox.Spec.Data), on no command line, in no environment and on no
// disk. A host none of those lines names is refused before anything runs
// (ErrSSHHostUnknown). Such a step runs no hook, gitHooks or not.

// ErrSSHHostUnknown is wrapped by the refusal of a push or ls-remote to an
// ssh remote whose host no known_hosts line of brabo's user names: ssh
// would not trust it, and brabo does not ask.
var ErrSSHHostUnknown = errors.New("the ssh host is not in the known_hosts of brabo's user")

// ErrSSHNoIdentity is wrapped by the refusal of a push or ls-remote to an
// ssh remote when brabo's user has none of the default identity files.
var ErrSSHNoIdentity = errors.New("brabo's user has no ssh identity file (~/.ssh/id_ed25519, id_ecdsa or id_rsa)")

// sshIdentities are the identity files, in ~/.ssh, handed to a sandboxed
// ssh: OpenSSH's defaults, without the security-key ones.
var sshIdentities = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// sshKnownHosts are where ssh looks for known hosts by default: the
// user's files (relative to HOME) and the system's.
var sshKnownHosts = []string{".ssh/known_hosts", ".ssh/known_hosts2", "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}

// sshFilePrefix starts the paths of the data files of an ssh step in its
// sandbox.
const sshFilePrefix = "/run/brabo/ssh-"

// maxSSHData bounds each data file of an ssh step: it is handed to bwrap
// on a pipe, whose capacity is 64 KiB.
const maxSSHData = 16 << 10

// sshTarget is the host and port an ssh remote is reached at.
type sshTarget struct {
	host string // the host to connect to: lowercased, an IP address bare and in its short form
	name string // the host as ssh looks it up in known_hosts: as written, lowercased
	port int
}

// known is the host's name in known_hosts: name, or [name]:port.
func (t sshTarget) known() string {
	if t.port == 22 {
		return t.name
	}
	return "[" + t.name + "]:" + strconv.Itoa(t.port)
}

// hostNameRE is a host name brabo hands ssh: letters, digits, dots,
// dashes and underscores, not starting with a dash.
var hostNameRE = regexp.MustCompile(`^[a-z0-9_][a-z0-9._-]*$`)

// sshRemote returns the target of an ssh remote URL; false for a URL of
// another kind, or one whose host brabo does not route (an ssh alias with
// odd characters, a bad port).
func sshRemote(raw string) (sshTarget, bool) {
	var host string
	port := 22
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		switch strings.ToLower(scheme) {
		case "ssh", "git+ssh", "ssh+git":
		default:
			return sshTarget{}, false
		}
		u, err := url.Parse("ssh://" + rest)
		if err != nil {
			return sshTarget{}, false
		}
		host = u.Hostname()
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return sshTarget{}, false
			}
			port = n
		}
	} else {
		if isLocalPath(raw) || strings.Contains(raw, "::") {
			return sshTarget{}, false
		}
		addr := raw
		if i := strings.LastIndexByte(addr[:strings.IndexByte(addr+":", ':')], '@'); i >= 0 && !strings.HasPrefix(addr, "[") {
			addr = addr[i+1:]
		}
		if strings.HasPrefix(addr, "[") {
			end := strings.IndexByte(addr, ']')
			if end < 0 || !strings.HasPrefix(addr[end+1:], ":") {
				return sshTarget{}, false
			}
			host = addr[1:end]
			if i := strings.LastIndexByte(host, '@'); i >= 0 {
				host = host[i+1:]
			}
		} else {
			host, _, _ = strings.Cut(addr, ":")
		}
	}
	host = strings.ToLower(host)
	if a, err := netip.ParseAddr(host); err == nil && a.Zone() == "" {
		return sshTarget{host: a.Unmap().String(), name: host, port: port}, true
	}
	if !hostNameRE.MatchString(host) {
		return sshTarget{}, false
	}
	return sshTarget{host: strings.TrimSuffix(host, "."), name: host, port: port}, true
}

// sshBox returns the sandbox of a step to the ssh remote raw at tgt, and
// done, which closes its proxy session; ok false when the executor has no
// way to route it (no sandbox, no Network): the step then runs on the
// host. A host brabo's user does not know, or a user without an identity,
// refuses the action (a *RepositoryRefusedError): nothing runs.
func (g *gitSession) sshBox(raw string, tgt sshTarget) (spec *sandbox.Spec, done func(), ok bool, err error) {
	n := g.e.opts.Network
	if g.e.opts.Sandbox == nil || n == nil || n.Proxy == nil || n.Forwarder == "" {
		return nil, nil, false, nil
	}
	home := sshHome()
	refuse := func(why error) (*sandbox.Spec, func(), bool, error) {
		return nil, nil, false, &RepositoryRefusedError{Type: g.t, Err: fmt.Errorf("the remote %s: %w", raw, why)}
	}
	known := knownHostsFor(tgt, home)
	if len(known) == 0 {
		return refuse(fmt.Errorf("%w: no line of %s names %s (add its key, e.g. with ssh-keyscan, after checking it)",
			ErrSSHHostUnknown, strings.Join(knownHostsFiles(home), ", "), tgt.known()))
	}
	ids := sshIdentityFiles(home)
	if len(ids) == 0 {
		return refuse(ErrSSHNoIdentity)
	}
	nr, err := g.remoteProxy(tgt.host, tgt.port, raw)
	if err != nil {
		return nil, nil, false, err
	}
	spec = &sandbox.Spec{Root: g.root}
	nr.sandbox(spec)
	spec.Data = append(spec.Data, sandbox.Data{Dst: sshFilePrefix + "known_hosts", Content: known})
	opts := []string{"-F", "/dev/null",
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + sshFilePrefix + "known_hosts",
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "CheckHostIP=no", "-o", "UpdateHostKeys=no",
		"-o", "ForwardAgent=no", "-o", "ForwardX11=no", "-o", "ClearAllForwardings=yes",
		"-o", "PermitLocalCommand=no", "-o", "ControlMaster=no", "-o", "ControlPath=none"}
	for _, id := range ids {
		dst := sshFilePrefix + id.name
		spec.Data = append(spec.Data, sandbox.Data{Dst: dst, Content: id.key})
		opts = append(opts, "-o", "IdentityFile="+dst)
	}
	// The tunnel is to the host and port brabo checked, not to what ssh
	// would expand (%h, %p): the session allows only those anyway.
	proxy := strings.Join(append([]string{sandboxForwarder}, egress.ConnectArgs(sandboxSocket, tgt.host, tgt.port)...), " ")
	opts = append(opts, "-o", "ProxyCommand="+proxy)
	cmd := "ssh"
	for _, o := range opts {
		cmd += " " + shellQuote(o)
	}
	g.with("GIT_SSH_COMMAND="+cmd, "GIT_SSH_VARIANT=ssh", "GIT_SSH=", "SSH_AUTH_SOCK=", "SSH_ASKPASS=")
	return spec, nr.close, true, nil
}

// sshHome is the home folder of brabo's user: HOME, or the account's when
// HOME is not set (a service started without one).
func sshHome() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// shellSafe is a word sh reads as itself.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./=:-]+$`)

// shellQuote quotes s for sh, as git runs GIT_SSH_COMMAND.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// knownHostsFiles are the known_hosts files ssh would read for brabo's
// user, whose home is home.
func knownHostsFiles(home string) []string {
	var files []string
	for _, f := range sshKnownHosts {
		if !filepath.IsAbs(f) {
			if home == "" {
				continue
			}
			f = filepath.Join(home, f)
		}
		files = append(files, f)
	}
	return files
}

// knownHostsFor returns the lines of the known_hosts files that name
// tgt (plain, wildcard or hashed; @cert-authority and @revoked lines
// included), nil when none but revocations do.
func knownHostsFor(tgt sshTarget, home string) []byte {
	var out bytes.Buffer
	trusted := false
	name := tgt.known()
	for _, f := range knownHostsFiles(home) {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(io.LimitReader(fh, 4<<20))
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' {
				continue
			}
			fields := strings.Fields(line)
			marker := ""
			if strings.HasPrefix(fields[0], "@") {
				marker, fields = fields[0], fields[1:]
			}
			if len(fields) < 3 || !knownHostMatch(fields[0], name) {
				continue
			}
			if out.Len()+len(line)+1 > maxSSHData {
				break
			}
			out.WriteString(line + "\n")
			if marker != "@revoked" {
				trusted = true
			}
		}
		fh.Close()
	}
	if !trusted {
		return nil
	}
	return out.Bytes()
}

// knownHostMatch reports whether the host field of a known_hosts line
// (a comma-separated list of patterns, or one hashed name) names name, as
// ssh reads it: a negated pattern that matches makes the line not match.
func knownHostMatch(field, name string) bool {
	if rest, ok := strings.CutPrefix(field, "|1|"); ok {
		salt64, hash64, ok := strings.Cut(rest, "|")
		salt, err1 := base64.StdEncoding.DecodeString(salt64)
		hash, err2 := base64.StdEncoding.DecodeString(hash64)
		if !ok || err1 != nil || err2 != nil {
			return false
		}
		m := hmac.New(sha1.New, salt)
		m.Write([]byte(name))
		return hmac.Equal(m.Sum(nil), hash)
	}
	matched := false
	for _, p := range strings.Split(field, ",") {
		neg := strings.HasPrefix(p, "!")
		if wildMatch(strings.ToLower(strings.TrimPrefix(p, "!")), name) {
			if neg {
				return false
			}
			matched = true
		}
	}
	return matched
}

// wildMatch is ssh's pattern match: * any run, ? any one character.
func wildMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := 0; i <= len(s); i++ {
				if wildMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return s == ""
}

// sshIdentity is one identity file: its name in ~/.ssh and its content.
type sshIdentity struct {
	name string
	key  []byte
}

// sshIdentityFiles reads the default identity files of brabo's user
// whose home is home, in ssh's order: the ones that exist as plain files.
func sshIdentityFiles(home string) []sshIdentity {
	var ids []sshIdentity
	if home == "" {
		return ids
	}
	for _, name := range sshIdentities {
		f := filepath.Join(home, ".ssh", name)
		fi, err := os.Stat(f)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSSHData {
			continue
		}
		if b, err := os.ReadFile(f); err == nil && len(b) > 0 {
			ids = append(ids, sshIdentity{name, b})
		}
	}
	return ids
}
