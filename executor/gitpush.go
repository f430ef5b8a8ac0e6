package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/gitguard"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// git_push and pr_open run in the sandbox too when the executor has one
// (docs/sandbox.md, "Git actions"). Their local steps (remote get-url,
// rev-parse) see the project's git folder read-only, all of it. The push
// itself writes exactly its remote-tracking refs — the folders
// refs/remotes/<remote> and logs/refs/remotes/<remote> of the common git
// folder, made when missing — and nothing else of the project; a remote
// on this machine (a path, file://…) is bound into that one sandbox, its
// git folders writable for a push and read-only for pr_open's ls-remote,
// their control files (config, hooks/, info/, objects/info/, ...)
// read-only over them. A network remote needs the user's credentials and
// a way out: an https one (gitnet.go) and an ssh one (gitssh.go) get both
// for that step alone, through a proxy session allowing the remote's
// host:port only; a git:// one, or a remote with several push URLs, still
// runs its push and ls-remote on the host, under gitguard, hooks off
// (hostStep). A remote of any other kind is refused before git runs.

// ErrRemoteUnroutable is wrapped by the refusal of a git action whose
// remote is neither on this machine nor reached by a transport git runs
// itself (https, http, ssh, git): an unknown scheme makes git start a
// remote helper (git-remote-<scheme>), a program brabo does not run,
// inside the sandbox or outside it.
var ErrRemoteUnroutable = errors.New("brabo does not route a git remote of this kind")

// remoteKind is how brabo's git reaches a remote URL.
type remoteKind int

const (
	remoteLocal   remoteKind = iota // a path or file://: bound into the sandbox
	remoteNetwork                   // https, http, ssh, git, scp-like: through the proxy or on the host
)

// networkSchemes are the URL schemes of transports built into git.
var networkSchemes = map[string]bool{"https": true, "http": true, "ssh": true, "git": true, "git+ssh": true, "ssh+git": true}

// classifyRemote returns how url is reached, or an error wrapping
// ErrRemoteUnroutable.
func classifyRemote(t brabo.ActionType, url string) (remoteKind, error) {
	refuse := func(why string) (remoteKind, error) {
		return 0, &RepositoryRefusedError{Type: t, Err: fmt.Errorf("the remote %s: %s: %w", url, why, ErrRemoteUnroutable)}
	}
	switch {
	case strings.Contains(url, "::"):
		return refuse("it names a remote helper (…::)")
	case strings.HasPrefix(strings.ToLower(url), "file://"), isLocalPath(url):
		return remoteLocal, nil
	}
	if scheme, _, ok := strings.Cut(url, "://"); ok {
		if !networkSchemes[strings.ToLower(scheme)] {
			return refuse(fmt.Sprintf("its scheme %q makes git run a remote helper", scheme))
		}
		return remoteNetwork, nil
	}
	return remoteNetwork, nil // host:path, ssh's scp-like form
}

// remoteSession moves the session into the sandbox of a step that reads
// the project's repository only: its git folders read-only, all of them.
func (g *gitSession) remoteSession() *gitSession {
	if g.e.opts.Sandbox != nil {
		g.sandboxed(&sandbox.Spec{Root: g.root})
	}
	return g
}

// remoteStep is where a push or ls-remote runs (remoteBox).
type remoteStep struct {
	// box is its sandbox; nil with onHost false: the executor has no
	// sandbox, and it runs on the host as every step does.
	box *sandbox.Spec
	// onHost: a network remote brabo does not route from the sandbox.
	onHost bool
	// opts go before git's subcommand (the credential helper of an http
	// remote); done ends what the step was given (its proxy session).
	opts []string
	done func()
}

// run runs the step's git command args (push or ls-remote ...) where it
// belongs, and ends what it was given.
func (r *remoteStep) run(g *gitSession, args ...string) int {
	if r.onHost {
		return g.hostStep(args...)
	}
	if r.box != nil {
		g.sandboxed(r.box)
	}
	if r.done != nil {
		// A step given a credential runs no hook, gitHooks or not: a
		// hook in its sandbox would read the credential.
		g.env = g.e.gitEnv(g.req, g.set, false)
	}
	return g.step(append(append([]string(nil), r.opts...), args...)...)
}

// output is run for a step whose standard output the action reads (the
// refs ls-remote lists); the transcript keeps the command and its output.
func (r *remoteStep) output(g *gitSession, args ...string) (string, int) {
	args = append(append([]string(nil), r.opts...), args...)
	fmt.Fprintf(g.out, "$ git %s\n", displayArgs(args))
	var out string
	var code int
	switch {
	case r.onHost:
		out, code = g.hostQuery(args...)
	default:
		if r.box != nil {
			g.sandboxed(r.box)
		}
		if r.done != nil {
			g.env = g.e.gitEnv(g.req, g.set, false)
		}
		out, code = g.query(args...)
	}
	if out != "" {
		fmt.Fprintln(g.out, out)
	}
	g.code = code
	return out, code
}

// lsRemoteCommit is the commit of ref in ls-remote's answer out ("" when
// it lists no such ref).
func lsRemoteCommit(out, ref string) string {
	for _, l := range strings.Split(out, "\n") {
		if sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t"); ok && name == ref {
			return sha
		}
	}
	return ""
}

func (r *remoteStep) close() {
	if r.done != nil {
		r.done()
	}
}

// remoteBox returns where a push (push true) or ls-remote to the remote
// named remote, whose URLs are urls, runs from the session's repository.
// Every URL is classified first: one brabo cannot route refuses the
// action, with or without a sandbox. A single http, https or ssh URL runs
// in the sandbox through the egress proxy when the executor has a Network
// (gitnet.go, gitssh.go); another network remote runs on the host.
func (g *gitSession) remoteBox(remote string, urls []string, push bool) (*remoteStep, error) {
	var locals []string
	onHost := false
	for _, u := range urls {
		kind, err := classifyRemote(g.t, u)
		if err != nil {
			return nil, err
		}
		if kind == remoteNetwork {
			onHost = true
		} else if p, ok := localRemote(u, g.dir); ok {
			locals = append(locals, p)
		}
	}
	if g.e.opts.Sandbox == nil {
		return &remoteStep{}, nil
	}
	var spec *sandbox.Spec
	step := &remoteStep{}
	if onHost {
		if len(urls) != 1 {
			return &remoteStep{onHost: true}, nil
		}
		var ok bool
		var err error
		if u, isHTTP := httpRemote(urls[0]); isHTTP {
			spec, step.opts, step.done, ok, err = g.networkBox(u)
		} else if tgt, isSSH := sshRemote(urls[0]); isSSH {
			spec, step.done, ok, err = g.sshBox(urls[0], tgt) // gitssh.go
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			return &remoteStep{onHost: true}, nil
		}
	} else {
		spec = &sandbox.Spec{Root: g.root}
	}
	step.box = spec
	if push && g.layout != nil {
		for _, d := range []string{filepath.Join("refs", "remotes", remote), filepath.Join("logs", "refs", "remotes", remote)} {
			if p, ok := gitSubdir(g.layout.CommonDir, d); ok {
				spec.Binds = append(spec.Binds, sandbox.Bind{Src: p})
			}
		}
	}
	for _, p := range locals {
		spec.Binds = append(spec.Binds, remoteBinds(p, push)...)
	}
	return step, nil
}

// gitSubdir makes (when missing) the folder rel of the git folder dir and
// returns it resolved; false when a part of it is not a plain folder (a
// symlink, a file): nothing is then bound, and git's update of the ref
// fails in the read-only git folder instead. A folder it makes belongs to
// the owner of the folder it is made in.
func gitSubdir(dir, rel string) (string, bool) {
	cur, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "" || part == "." || part == ".." {
			return "", false
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(next, 0o755); err != nil {
				return "", false
			}
			var st syscall.Stat_t
			if syscall.Stat(cur, &st) == nil {
				_ = os.Lchown(next, int(st.Uid), int(st.Gid))
			}
			fi, err = os.Lstat(next)
		}
		if err != nil || !fi.IsDir() {
			return "", false
		}
		cur = next
	}
	return cur, true
}

// remoteBinds are the binds of a remote repository on this machine at
// path: its git folder and common folder, writable for a push, with their
// control files read-only over them. A path that is not a git repository
// (no HEAD, objects/ and refs/) binds nothing, so that a remote URL never
// brings another folder of the machine in: git then fails on it.
func remoteBinds(path string, push bool) []sandbox.Bind {
	var dirs []string
	switch {
	case isGitDir(path):
		dirs = []string{path}
		if data, err := os.ReadFile(filepath.Join(path, "commondir")); err == nil {
			c := strings.TrimRight(string(data), "\r\n")
			if !filepath.IsAbs(c) {
				c = filepath.Join(path, c)
			}
			dirs = append(dirs, c)
		}
	default:
		// A repository with a work tree (git reaches it through
		// <path>/.git): only its git folders.
		if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
			return nil
		}
		l, err := gitguard.Check("", path)
		if err != nil {
			return nil
		}
		dirs = []string{l.GitDir, l.CommonDir}
	}
	var binds []sandbox.Bind
	seen := map[string]bool{}
	for _, d := range dirs {
		r, err := filepath.EvalSymlinks(d)
		if err != nil || seen[r] || !isGitDir(r) {
			continue
		}
		seen[r] = true
		binds = append(binds, sandbox.Bind{Src: r, ReadOnly: !push, Map: true})
		for _, c := range gitControl {
			if p, err := filepath.EvalSymlinks(filepath.Join(r, c)); err == nil && within(r, p) {
				binds = append(binds, sandbox.Bind{Src: p, ReadOnly: true})
			}
		}
	}
	return binds
}

// isGitDir reports whether dir looks like a git folder: HEAD, objects/
// and refs/ in it.
func isGitDir(dir string) bool {
	for _, e := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, e)); err != nil {
			return false
		}
	}
	return true
}

// urlLines splits git's one-URL-a-line answer.
func urlLines(out string) []string {
	var urls []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			urls = append(urls, l)
		}
	}
	return urls
}
