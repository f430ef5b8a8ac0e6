// Package sandbox runs a command brabo starts on an agent's behalf inside
// bubblewrap (bwrap): a root built from an allow-list of read-only system
// folders, the scope root and the project's cache writable at their own
// paths, the scope root's protected paths read-only over it, a fresh /tmp
// and HOME, empty /run, its own PID, network (loopback only), IPC and UTS
// namespaces, and nothing of brabo's — its data folder, its token files,
// its sockets, other projects, the user's home — at all (docs/sandbox.md).
//
// Spec says what one command gets; Sandbox turns it into a process to
// start (Prepare). Under root, the command never
// runs as root: bwrap is started as an unprivileged uid (Sandbox.UID),
// after, in a private mount namespace, the owner of each writable folder
// was mapped to that uid with an idmapped mount: by a helper process
// (brabo-sandbox or brabo's own binary with the hidden subcommand
// HelperSubcommand), the command Apply leaves, or by Start in a thread of
// this process. Files the command writes keep their owner on disk.
//
// Binds and Env are the extension points for what a later part of brabo
// hands a command (the egress proxy binds its unix socket and sets
// the proxy variables): a Bind is bound at Dst, read-only or not, after
// everything else, and Env is added to the command's environment.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LauncherPath is where brabo's own binary (the Landlock launcher,
// internal/confine) is bound read-only inside every sandbox.
const LauncherPath = "/run/brabo/launcher"

// Home is the command's HOME inside the sandbox: a folder of its fresh
// /tmp, discarded with the action.
const Home = "/tmp/home"

// Bind is one more path a command gets: Src on the host bound at Dst in
// the sandbox (Dst defaults to Src), read-only unless ReadOnly is false.
// A unix socket may be bound like a file.
//
// Under root, a writable folder is shown, as the scope root is, owned by
// the sandbox's user (an idmapped mount: what it writes keeps its owner
// on disk); Map does that for a read-only folder too (a remote repository
// git reads, which refuses a repository owned by another user).
type Bind struct {
	Src, Dst string
	ReadOnly bool
	Map      bool
}

// Spec is what one sandboxed command gets.
type Spec struct {
	// Root is the scope root, absolute: bound writable at its own path
	// (its symlinks resolved), and the command's default folder.
	Root string
	// Dir is the folder the command starts in, inside Root (Root when
	// empty).
	Dir string
	// Cache is the project's cache folder, bound writable at its own
	// path ("" for none).
	Cache string
	// MayWrite, when set, says which protected paths of Root (Protected)
	// stay writable: the ones a maintainer approved the action to change.
	// Nil leaves every one read-only.
	MayWrite func(path string) bool
	// Binds are more paths the command gets, bound after everything else
	// (the extension point for the egress proxy's socket).
	Binds []Bind
	// Env is the command's environment ("NAME=value"), already built from
	// an allow-list (internal/procenv); HOME and TMPDIR are set to the
	// sandbox's own.
	Env []string
	// Hide are more host paths the command must not read, masked when
	// they lie in a system folder it gets (the --db-file, in /etc);
	// Sandbox.Hide is added to them.
	Hide []string
	// Prefix, when set, starts the command line, in front of the
	// Landlock launcher (the egress forwarder, which applies
	// Landlock itself to what it starts).
	Prefix []string
	// Launcher, when set, is the host path of brabo's binary, bound
	// read-only at LauncherPath so that Landlock can be applied inside.
	Launcher string
	// Data are files made for this command alone: each Content is handed
	// to bwrap on a descriptor only it holds and appears, read-only and
	// readable by the command's user only, at Dst (a credential for the
	// one remote a push reaches). It is on no disk and no command line.
	Data []Data
}

// Data is one file of Spec.Data.
type Data struct {
	Dst     string
	Content []byte
}

// systemRO are the host folders the root is built from, read-only, when
// they exist; a symlink (/bin -> usr/bin on a merged /usr) is recreated as
// the same symlink.
var systemRO = []string{"/usr", "/bin", "/sbin", "/etc"}

// etcSecrets are the files of /etc a command never reads: /dev/null is
// bound over each that exists. etcSecretDirs get an empty tmpfs.
var (
	etcSecrets    = []string{"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "security/opasswd", "brabo"}
	etcSecretDirs = []string{"sudoers.d", "ssl/private"}
)

// op is one step of the sandbox's construction: a bwrap option and its
// operands. Binds keep their source apart, so the root helper can replace
// a path by a descriptor.
type op struct {
	flag string   // "--ro-bind", "--bind", "--tmpfs", "--symlink", ...
	args []string // operands; for a bind, [src, dst]
}

func (o op) isBind() bool { return o.flag == "--bind" || o.flag == "--ro-bind" }

// plan is the bwrap invocation of one command, before rendering.
type plan struct {
	ops []op
	// mapped are the writable host folders (and the outside git folders)
	// the root helper maps to the sandbox's uid, outermost first.
	mapped []string
	// write are the folders Landlock lets the command write inside.
	write []string
}

// build makes the plan of spec: the order matters, since a later mount
// covers an earlier one (/tmp before a root that lives under /tmp, the
// root before its protected paths).
func build(s Spec) (*plan, error) {
	if !filepath.IsAbs(s.Root) {
		return nil, &Error{Reason: fmt.Sprintf("the scope root %q is not absolute", s.Root)}
	}
	root, err := filepath.EvalSymlinks(s.Root)
	if err != nil {
		return nil, &Error{Reason: "the scope root", Err: err}
	}
	p := &plan{}
	add := func(flag string, args ...string) { p.ops = append(p.ops, op{flag, args}) }
	for _, d := range systemRO {
		p.system(d)
	}
	libs, _ := filepath.Glob("/lib*")
	for _, d := range libs {
		p.system(d)
	}
	hide := make([]string, 0, len(etcSecrets)+len(etcSecretDirs)+len(s.Hide))
	for _, f := range append(append([]string(nil), etcSecrets...), etcSecretDirs...) {
		hide = append(hide, filepath.Join("/etc", f))
	}
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*")
	for _, h := range append(append(hide, keys...), s.Hide...) {
		p.mask(h)
	}
	add("--dev", "/dev")
	add("--proc", "/proc")
	add("--tmpfs", "/tmp")
	add("--dir", Home)
	add("--tmpfs", "/run")
	add("--symlink", "../run", "/var/run")
	if s.Launcher != "" {
		add("--ro-bind", s.Launcher, LauncherPath)
	}
	if s.Cache != "" {
		cache, err := filepath.EvalSymlinks(s.Cache)
		if err != nil {
			return nil, &Error{Reason: "the project's cache folder", Err: err}
		}
		add("--bind", cache, cache)
		p.mapped = append(p.mapped, cache)
		p.write = append(p.write, cache)
	}
	add("--bind", root, root)
	p.mapped = append(p.mapped, root)
	p.write = append(p.write, root, "/tmp")
	prot, err := Protected(root)
	if err != nil {
		return nil, err
	}
	for _, pp := range prot {
		if !within(pp.Path, root) {
			p.mapped = append(p.mapped, pp.Path) // a worktree's git folders
		}
		if s.MayWrite != nil && s.MayWrite(pp.Path) {
			add("--bind", pp.Path, pp.Path)
			if !within(pp.Path, root) {
				p.write = append(p.write, pp.Path)
			}
			continue
		}
		add("--ro-bind", pp.Path, pp.Path)
	}
	for _, b := range s.Binds {
		if !filepath.IsAbs(b.Src) {
			return nil, &Error{Reason: fmt.Sprintf("bind %q is not absolute", b.Src)}
		}
		dst := b.Dst
		if dst == "" {
			dst = b.Src
		}
		if b.ReadOnly {
			add("--ro-bind", b.Src, dst)
		} else {
			add("--bind", b.Src, dst)
			p.write = append(p.write, dst)
		}
		if b.Map || !b.ReadOnly {
			if src, err := filepath.EvalSymlinks(b.Src); err == nil && !slices.ContainsFunc(p.mapped, func(m string) bool { return within(src, m) }) {
				p.mapped = append(p.mapped, src)
			}
		}
	}
	dir := root
	if s.Dir != "" {
		d, err := filepath.EvalSymlinks(s.Dir)
		if err != nil {
			return nil, &Error{Reason: "the command's folder", Err: err}
		}
		if !within(d, root) {
			return nil, &Error{Reason: fmt.Sprintf("the command's folder %s is outside the scope root %s", d, root)}
		}
		dir = d
	}
	add("--chdir", dir)
	p.mapped = outermost(p.mapped)
	return p, nil
}

// mask hides path when it lies in one of the system folders bound in (a
// --db-file in /etc): /dev/null over a file, an empty tmpfs over a
// folder; nothing for a path that does not exist or lies elsewhere (it is
// absent from the sandbox anyway).
func (p *plan) mask(path string) {
	if !filepath.IsAbs(path) {
		return
	}
	path = filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	in := false
	for _, d := range systemRO {
		in = in || within(path, d)
	}
	if !in && !strings.HasPrefix(path, "/lib") {
		return
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
	case fi.IsDir():
		p.ops = append(p.ops, op{"--tmpfs", []string{path}})
	default:
		p.ops = append(p.ops, op{"--ro-bind", []string{os.DevNull, path}})
	}
}

// system adds a system folder of the allow-list: read-only, or the same
// symlink when it is one; nothing when it is absent.
func (p *plan) system(d string) {
	fi, err := os.Lstat(d)
	if err != nil {
		return
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if t, err := os.Readlink(d); err == nil {
			p.ops = append(p.ops, op{"--symlink", []string{t, d}})
		}
		return
	}
	if fi.IsDir() {
		p.ops = append(p.ops, op{"--ro-bind", []string{d, d}})
	}
}

// outermost drops the paths inside another of the list (one idmapped
// mount covers what is beneath it), keeping the order.
func outermost(paths []string) []string {
	var out []string
	for _, p := range paths {
		if slices.ContainsFunc(paths, func(q string) bool { return q != p && within(p, q) }) {
			continue
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// namespaces are the options every sandbox gets: its own user, PID,
// network (loopback only), IPC, UTS and cgroup namespaces; no way to
// start another user namespace inside; killed with its parent; a new
// session (no terminal to inject keys into).
var namespaces = []string{"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
	"--unshare-cgroup-try", "--disable-userns", "--die-with-parent", "--new-session", "--hostname", "brabo-sandbox"}

// render writes the plan as bwrap's arguments, argv after them.
func (p *plan) render(argv []string) []string {
	out := append([]string(nil), namespaces...)
	for _, o := range p.ops {
		out = append(out, o.flag)
		out = append(out, o.args...)
	}
	out = append(out, "--")
	return append(out, argv...)
}

// Args returns bwrap's arguments (without the program name) that run argv
// under spec. The root helper is not part of them: Sandbox.Prepare is how
// brabo starts a command.
func (s Spec) Args(argv ...string) ([]string, error) {
	p, err := build(s)
	if err != nil {
		return nil, err
	}
	return p.render(argv), nil
}

// Env is the environment of a command under spec: spec.Env with HOME and
// TMPDIR set to the sandbox's own.
func (s Spec) env() []string {
	out := make([]string, 0, len(s.Env)+2)
	for _, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" || name == "TMPDIR" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+Home, "TMPDIR=/tmp")
}

// within reports whether p is dir or inside it; both clean and absolute.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Error is a sandbox that could not be set up for a command: the command
// did not run, inside or outside it.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string {
	msg := "sandbox: " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnavailable is wrapped by the error of Available and of Prepare on a
// machine where bubblewrap cannot run a sandbox.
var ErrUnavailable = errors.New("bubblewrap is not available")
