package confine

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// exitCannotConfine is the launcher's exit status when it could not
// confine the command: the command does not run unconfined (126 is the
// shell's "found but could not run").
const exitCannotConfine = 126

// IsLauncher reports whether args (os.Args) start the launcher.
func IsLauncher(args []string) bool {
	return len(args) > 1 && args[1] == Subcommand
}

// Main is the launcher: args are os.Args. It builds the ruleset of the
// spec, restricts this thread with it (no_new_privs first, as Landlock
// requires of an unprivileged caller) and execs the program from the same
// thread, so the program and all it starts are confined. It never returns:
// on any failure it prints why and exits 126, and the program does not
// run, unconfined or otherwise.
func Main(args []string) {
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "brabo: cannot confine the command: "+format+"\n", a...)
		os.Exit(exitCannotConfine)
	}
	spec, argv, err := parse(args[2:])
	if err != nil {
		fail("%v", err)
	}
	if _, err := ABI(); err != nil {
		fail("%v", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail("%v", err)
	}
	rs, err := rules(spec)
	if err != nil {
		fail("%v", err)
	}
	// Landlock applies to the calling thread and what it executes: the
	// ruleset is enforced and the program executed from one locked
	// thread, never unlocked (the runtime drops it rather than reuse it).
	runtime.LockOSThread()
	fd, flags, err := config.NewRulesetFD(rs...)
	if err != nil {
		fail("%v", err)
	}
	if fd < 0 {
		fail("Landlock enforces nothing on this kernel")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		fail("landlock_restrict_self: %v", err)
	}
	unix.Close(fd)
	err = syscall.Exec(path, argv, os.Environ())
	fail("exec %s: %v", path, err)
}
