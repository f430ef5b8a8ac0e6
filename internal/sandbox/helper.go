package sandbox

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// HelperSubcommand is the root helper's hidden first argument. A program
// that starts sandboxed commands under root calls Main first thing when
// IsHelper(os.Args) (brabo's main, and the TestMain of the test binaries
// that run sandboxed commands).
const HelperSubcommand = "__brabo-sandbox"

// exitCannotSandbox is the helper's exit status when it could not set the
// sandbox up: nothing ran (126, the shell's "found but could not run").
const exitCannotSandbox = 126

// FailurePrefix starts what the helper prints when it could not set the
// sandbox up; the command did not run.
const FailurePrefix = "brabo: cannot sandbox the command: "

// IsHelper reports whether args (os.Args) start the root helper.
func IsHelper(args []string) bool {
	return len(args) > 1 && args[1] == HelperSubcommand
}

// Main is the root helper; args are os.Args. Started by Prepare as root,
// in a mount namespace of its own (CLONE_NEWNS), it:
//
//  1. makes every mount of that namespace private, so nothing it mounts
//     reaches the host's;
//  2. for each -m PATH FD, mounts PATH over itself idmapped with the user
//     namespace FD (owner → the sandbox's uid), so that the unprivileged
//     user can write the owner's files, which keep their owner on disk;
//  3. stages every bind source where the unprivileged user can reach it
//     (stage), since bwrap resolves its sources by path;
//  4. drops to -u UID -g GID (no supplementary groups, no capabilities,
//     no_new_privs) and execs bwrap.
//
// `Main hold` is the holder of a user namespace Prepare keeps: it waits
// for its stdin to close. Main never returns; on any failure it prints why
// (FailurePrefix) and exits 126, and nothing runs.
func Main(args []string) {
	if len(args) > 2 && args[2] == "hold" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, FailurePrefix+format+"\n", a...)
		os.Exit(exitCannotSandbox)
	}
	uid, gid := -1, -1
	type mapping struct {
		path string
		fd   int
	}
	var maps []mapping
	rest := args[2:]
	for len(rest) > 0 && rest[0] != "--" {
		var err error
		switch {
		case rest[0] == "-u" && len(rest) > 1:
			uid, err = strconv.Atoi(rest[1])
			rest = rest[2:]
		case rest[0] == "-g" && len(rest) > 1:
			gid, err = strconv.Atoi(rest[1])
			rest = rest[2:]
		case rest[0] == "-m" && len(rest) > 2:
			var fd int
			fd, err = strconv.Atoi(rest[2])
			maps = append(maps, mapping{rest[1], fd})
			rest = rest[3:]
		default:
			fail("unknown argument %q", rest[0])
		}
		if err != nil {
			fail("%v", err)
		}
	}
	if len(rest) < 2 || uid <= 0 || gid <= 0 {
		fail("want -u UID -g GID [-m PATH FD]... -- bwrap ARGS")
	}
	bwrap, bargs := rest[1], rest[2:]
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("making the mounts private: %v", err)
	}
	for _, m := range maps {
		if err := idmap(m.path, m.fd); err != nil {
			fail("mapping %s to the sandbox's user: %v (does its file system support idmapped mounts?)", m.path, err)
		}
	}
	for _, m := range maps {
		unix.Close(m.fd)
	}
	bargs, err := stage(bargs)
	if err != nil {
		fail("%v", err)
	}
	if err := syscall.Setgroups(nil); err != nil {
		fail("setgroups: %v", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		fail("setgid: %v", err)
	}
	if err := syscall.Setuid(uid); err != nil {
		fail("setuid: %v", err)
	}
	if os.Geteuid() == 0 || os.Getegid() == 0 {
		fail("still root after dropping privileges")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	err = syscall.Exec(bwrap, append([]string{bwrap}, bargs...), os.Environ())
	fail("exec %s: %v", bwrap, err)
}

// idmap mounts path over itself, idmapped with the user namespace usernsFD.
func idmap(path string, usernsFD int) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(usernsFD)}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// arity is how many operands each option Spec.Args writes takes.
var arity = map[string]int{"--info-fd": 1, "--bind": 2, "--ro-bind": 2, "--tmpfs": 1, "--symlink": 2, "--dev": 1, "--proc": 1,
	"--dir": 1, "--chdir": 1, "--hostname": 1, "--setenv": 2, "--perms": 1, "--ro-bind-data": 2}

// stageDir is where the helper puts the sources bwrap binds, in its own
// mount namespace: a tmpfs over /tmp (which exists everywhere and which
// bwrap itself covers with the sandbox's root), each source bound at
// stageDir/<n>. bwrap, started as the unprivileged user, resolves its
// sources by path, and the scope root may lie below folders only root
// may cross (a test's temp folder, /root): the staged copies lie below
// none.
const stageDir = "/tmp"

// stage rewrites the source of every --bind and --ro-bind of bwrap's
// arguments (up to "--") into a staged copy: each source is cloned
// (open_tree) first, as root and through the idmapped mounts; then the
// tmpfs is mounted and each clone moved to its place.
func stage(args []string) ([]string, error) {
	type src struct {
		tree int
		dir  bool
		at   int // index of the source operand in out
	}
	var srcs []src
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		n := arity[a]
		if i+n >= len(args) {
			return nil, fmt.Errorf("bwrap option %s lacks its operands", a)
		}
		if (a == "--bind" || a == "--ro-bind") && !reachable(args[i+1]) {
			var st unix.Stat_t
			if err := unix.Stat(args[i+1], &st); err != nil {
				return nil, fmt.Errorf("bind source %s: %w", args[i+1], err)
			}
			tree, err := unix.OpenTree(unix.AT_FDCWD, args[i+1], unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
			if err != nil {
				return nil, fmt.Errorf("bind source %s: open_tree: %w", args[i+1], err)
			}
			srcs = append(srcs, src{tree: tree, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, at: len(out) + 1})
		}
		out = append(out, args[i:i+n+1]...)
		i += n
	}
	if len(out) == 0 || !slicesContains(out, "--") {
		return nil, fmt.Errorf("no -- in bwrap's arguments")
	}
	if err := unix.Mount("tmpfs", stageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return nil, fmt.Errorf("mounting the staging tmpfs: %w", err)
	}
	for n, s := range srcs {
		at := stageDir + "/" + strconv.Itoa(n)
		var err error
		if s.dir {
			err = os.Mkdir(at, 0o755)
		} else {
			err = os.WriteFile(at, nil, 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("staging: %w", err)
		}
		if err := unix.MoveMount(s.tree, "", unix.AT_FDCWD, at, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return nil, fmt.Errorf("staging %s: move_mount: %w", out[s.at], err)
		}
		unix.Close(s.tree)
		out[s.at] = at
	}
	return out, nil
}

// reachable reports whether the unprivileged user reaches src as it is:
// the system folders, /dev/null. Staging them would only cost time.
func reachable(src string) bool {
	if src == os.DevNull {
		return true
	}
	for _, d := range systemRO {
		if within(src, d) {
			return true
		}
	}
	return strings.HasPrefix(src, "/lib")
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
