package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/procs"
)

// DefaultUID is the uid (and gid) commands run as when brabo runs as
// root: a number no distribution hands out (above the 16-bit range and
// below the ranges podman and systemd allocate for user namespaces), so
// no file on the machine belongs to it (docs/sandbox.md).
const DefaultUID = 1_900_000_000

// Sandbox starts sandboxed commands. The zero value is not usable: Helper
// must be set. It is safe for concurrent use.
type Sandbox struct {
	// Bwrap is the bubblewrap binary ("bwrap" in PATH when empty).
	Bwrap string
	// Helper is brabo's own binary (os.Executable), or a test binary
	// whose TestMain calls Main: it is the root helper (under root) and
	// the Landlock launcher bound inside (LauncherPath).
	Helper string
	// UID and GID are what commands run as when this process is root
	// (DefaultUID when 0). A process that is not root runs them as
	// itself.
	UID, GID int
	// Hide are host paths no command may read (the --db-file), masked
	// when they lie in a system folder the sandbox binds (Spec.Hide).
	Hide []string
	// NoLandlock leaves Landlock out inside the sandbox (where the kernel
	// has it, the command runs under the launcher).
	NoLandlock bool

	mu     sync.Mutex
	userns map[[2]int]*os.File // owner uid, gid → a user namespace mapping it to UID, GID

	checkOnce sync.Once
	checkErr  error
}

// Prepared is one sandboxed command, ready to start: Apply it to an
// exec.Cmd, which keeps its own Dir-less settings (stdout, Setsid, ...).
type Prepared struct {
	Path       string
	Args       []string // Args[0] is Path
	Env        []string
	ExtraFiles []*os.File
	// Cloneflags are the namespaces the first process needs
	// (CLONE_NEWNS for the root helper).
	Cloneflags uintptr
	// Write are the folders Landlock lets the command write in.
	Write []string
	// info is the read end of bwrap's --info-fd, where it writes the pid
	// of the namespace's first process (Wait).
	info *os.File
	pid  chan int
	kept []*os.File // the Sandbox's user namespaces among ExtraFiles
	// direct is, under root, how Start runs the command without the
	// helper process (direct.go).
	direct *direct
}

// Apply sets cmd up to run the prepared command: its path, arguments,
// environment, descriptors and namespaces. cmd.Dir is cleared (the
// sandbox sets the command's folder itself).
func (p *Prepared) Apply(cmd *exec.Cmd) {
	cmd.Path, cmd.Args, cmd.Env, cmd.Dir = p.Path, p.Args, p.Env, ""
	cmd.Err = nil
	cmd.ExtraFiles = append(cmd.ExtraFiles, p.ExtraFiles...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= p.Cloneflags
}

// User returns the uid and gid commands run as when this process is
// root (the socket a sandbox gets is theirs).
func (s *Sandbox) User() (int, int) { return s.uid() }

func (s *Sandbox) uid() (int, int) {
	u, g := s.UID, s.GID
	if u == 0 {
		u = DefaultUID
	}
	if g == 0 {
		g = u
	}
	return u, g
}

func (s *Sandbox) bwrap() (string, error) {
	name := s.Bwrap
	if name == "" {
		name = "bwrap"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return path, nil
}

// Prepare builds the command that runs argv under spec. Under root it is
// the helper, in a mount namespace of its own, which maps the writable
// folders to the sandbox's uid and starts bwrap as that uid; otherwise
// bwrap itself, as this process's user. Prepared.Start does the helper's
// work in this process instead, and starts bwrap directly.
func (s *Sandbox) Prepare(spec Spec, argv []string) (*Prepared, error) {
	if len(argv) == 0 {
		return nil, &Error{Reason: "no command"}
	}
	bw, err := s.bwrap()
	if err != nil {
		return nil, &Error{Reason: "starting the command", Err: err}
	}
	if spec.Launcher == "" && !s.NoLandlock {
		spec.Launcher = s.Helper
	}
	spec.Hide = append(append([]string(nil), spec.Hide...), s.Hide...)
	pl, err := build(spec)
	if err != nil {
		return nil, err
	}
	if spec.Launcher != "" {
		if _, err := confine.ABI(); err == nil {
			argv = append([]string{LauncherPath}, confine.Spec{Write: pl.write}.Args(argv...)...)
		}
	}
	if len(spec.Prefix) > 0 {
		argv = append(append([]string(nil), spec.Prefix...), argv...)
	}
	out := &Prepared{Env: spec.env(), Write: pl.write}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, &Error{Reason: "the info pipe", Err: err}
	}
	out.info = r
	out.ExtraFiles = append(out.ExtraFiles, w) // fd 3 in the first process
	// The command's account (passwd.go): its own /etc/passwd and
	// /etc/group over the host's, read-only, on descriptors 4 and 5.
	u, g := s.uid()
	if os.Geteuid() != 0 {
		u, g = os.Getuid(), os.Getgid()
	}
	passwd, group := identity(u, g)
	for i, f := range []struct {
		b   []byte
		dst string
	}{{passwd, "/etc/passwd"}, {group, "/etc/group"}} {
		df, err := dataFile(f.b)
		if err != nil {
			out.close()
			return nil, &Error{Reason: "the sandbox's " + f.dst, Err: err}
		}
		out.ExtraFiles = append(out.ExtraFiles, df)
		pl.ops = append(pl.ops, op{"--perms", []string{"0644"}}, op{"--ro-bind-data", []string{strconv.Itoa(4 + i), f.dst}})
	}
	for _, d := range spec.Data {
		if !filepath.IsAbs(d.Dst) {
			out.close()
			return nil, &Error{Reason: fmt.Sprintf("data file %q is not absolute", d.Dst)}
		}
		df, err := dataFile(d.Content)
		if err != nil {
			out.close()
			return nil, &Error{Reason: "the data file " + d.Dst, Err: err}
		}
		fd := 3 + len(out.ExtraFiles)
		out.ExtraFiles = append(out.ExtraFiles, df)
		pl.ops = append(pl.ops, op{"--perms", []string{"0400"}}, op{"--ro-bind-data", []string{strconv.Itoa(fd), d.Dst}})
	}
	bargs := append([]string{"--info-fd", "3"}, pl.render(argv)...)
	if os.Geteuid() != 0 {
		out.Path, out.Args = bw, append([]string{bw}, bargs...)
		return out, nil
	}
	if s.Helper == "" {
		out.close()
		return nil, &Error{Reason: "no helper binary to drop root with"}
	}
	args := []string{s.Helper, HelperSubcommand, "-u", strconv.Itoa(u), "-g", strconv.Itoa(g)}
	out.direct = &direct{bwrap: bw, bargs: bargs, uid: u, gid: g, files: len(out.ExtraFiles)}
	fds := map[[2]int]int{}
	for _, m := range pl.mapped {
		var st syscall.Stat_t
		if err := syscall.Stat(m, &st); err != nil {
			out.close()
			return nil, &Error{Reason: "reading the owner of " + m, Err: err}
		}
		owner := [2]int{int(st.Uid), int(st.Gid)}
		fd, ok := fds[owner]
		if !ok {
			f, err := s.usernsFor(owner)
			if err != nil {
				out.close()
				return nil, err
			}
			fd = 3 + len(out.ExtraFiles)
			fds[owner] = fd
			out.ExtraFiles = append(out.ExtraFiles, f)
			out.kept = append(out.kept, f)
		}
		args = append(args, "-m", m, strconv.Itoa(fd))
		out.direct.maps = append(out.direct.maps, mapping{m, out.ExtraFiles[fd-3]})
	}
	out.Path = s.Helper
	out.Args = append(append(args, "--", bw), bargs...)
	out.Cloneflags = syscall.CLONE_NEWNS
	return out, nil
}

// usernsFor returns a user namespace that maps owner (uid, gid) to the
// sandbox's uid and gid, made once per owner: an idmapped mount made with
// it shows owner's files as the sandbox user's, and stores what that user
// writes as owner's.
func (s *Sandbox) usernsFor(owner [2]int) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.userns[owner]; f != nil {
		return f, nil
	}
	u, g := s.uid()
	cmd := exec.Command(s.Helper, HelperSubcommand, "hold")
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: owner[0], HostID: u, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: owner[1], HostID: g, Size: 1}}}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &Error{Reason: "a user namespace for the owner's mapping", Err: err}
	}
	if err := procs.Start(cmd); err != nil {
		return nil, &Error{Reason: "a user namespace for the owner's mapping", Err: err}
	}
	f, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/user")
	stdin.Close()
	_ = procs.Wait(cmd)
	if err != nil {
		return nil, &Error{Reason: "a user namespace for the owner's mapping", Err: err}
	}
	if s.userns == nil {
		s.userns = map[[2]int]*os.File{}
	}
	s.userns[owner] = f
	return f, nil
}

// Check runs a trivial command (`true`) the way the executor runs every one
// (Prepare, Apply, and the root helper under root),
// once per Sandbox, and returns why it failed (wrapping ErrUnavailable):
// bubblewrap is missing, user namespaces are refused, the helper cannot
// map a folder.
func (s *Sandbox) Check() error {
	s.checkOnce.Do(func() { s.checkErr = s.check() })
	return s.checkErr
}

func (s *Sandbox) check() error {
	dir, err := os.MkdirTemp("", "brabo-sandbox-check-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer os.RemoveAll(dir)
	p, err := s.Prepare(Spec{Root: dir, Env: []string{"PATH=/usr/bin:/bin"}}, []string{"true"})
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	cmd := &exec.Cmd{}
	p.Apply(cmd)
	out, err := procsOutput(cmd)
	p.Started()
	if err != nil {
		return fmt.Errorf("%w: a trivial sandboxed command failed: %v: %s", ErrUnavailable, err, trim(out))
	}
	return nil
}

// procsOutput is cmd.CombinedOutput through procs.Start and Wait (brabo
// is a subreaper: every child goes through them).
func procsOutput(cmd *exec.Cmd) ([]byte, error) {
	var b limitedBuf
	cmd.Stdout, cmd.Stderr = &b, &b
	err := procs.Run(cmd)
	return b.b, err
}

type limitedBuf struct{ b []byte }

func (l *limitedBuf) Write(p []byte) (int, error) {
	if len(l.b) < 4096 {
		l.b = append(l.b, p[:min(len(p), 4096-len(l.b))]...)
	}
	return len(p), nil
}

func trim(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

// Available reports whether bubblewrap is on PATH and runs a trivial
// sandbox as an unprivileged user (this process's, or DefaultUID under
// root): user namespaces are allowed. It is checked once.
func Available() error {
	availOnce.Do(func() { availErr = available() })
	return availErr
}

var (
	availOnce sync.Once
	availErr  error
)

func available() error {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	cmd := exec.Command(bw, "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/true")
	cmd.Env = []string{}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: DefaultUID, Gid: DefaultUID}}
		cmd.Dir = "/"
	}
	if out, err := procsOutput(cmd); err != nil {
		return fmt.Errorf("%w: bwrap could not start a sandbox (are user namespaces allowed?): %v: %s", ErrUnavailable, err, trim(out))
	}
	return nil
}
