package confine

import (
	"errors"
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
	argv, err := Restrict(args[2:])
	if err != nil {
		fail("%v", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail("%v", err)
	}
	err = syscall.Exec(path, argv, os.Environ())
	fail("exec %s: %v", path, err)
}

// Restrict reads the launcher's arguments (after Subcommand), locks the
// calling goroutine to its thread for good and confines that thread with
// the spec (no_new_privs first): what the thread then executes or starts
// is confined, and nothing else of the process. It returns the program's
// argv. A program that must stay alive beside its confined child (the
// egress forwarder) calls it instead of starting the launcher, and starts
// the child from the same goroutine.
func Restrict(args []string) ([]string, error) {
	spec, argv, err := parse(args)
	if err != nil {
		return nil, err
	}
	if _, err := ABI(); err != nil {
		return nil, err
	}
	rs, err := rules(spec)
	if err != nil {
		return nil, err
	}
	// Landlock applies to the calling thread and what it executes: the
	// ruleset is enforced and the program executed from one locked
	// thread, never unlocked (the runtime drops it rather than reuse it).
	runtime.LockOSThread()
	fd, flags, err := config.NewRulesetFD(rs...)
	if err != nil {
		return nil, err
	}
	if fd < 0 {
		return nil, errors.New("Landlock enforces nothing on this kernel")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return nil, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return argv, nil
}
