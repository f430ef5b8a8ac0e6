// Package confine runs a program under Landlock (Linux): it may write only
// inside the folders it is given (a command's scope root, its private temp
// folder, its project's cache) and to /dev/null, /dev/zero and /dev/full;
// it may read and execute everything else except the hidden folders
// (brabo's data folder, token files); and it may not signal a process
// outside its own sandbox (brabo, other commands).
//
// Landlock restricts the calling thread and what it then executes, so the
// restriction is applied in a launcher: the executor starts brabo itself
// (Launcher) with the hidden subcommand Subcommand, which builds the
// ruleset, restricts its own thread and execs the command from it. A
// program that starts commands this way calls Main first thing when its
// first argument is Subcommand (brabo's main, and the TestMain of the test
// binaries that run confined commands).
//
// Landlock grants rights by hierarchy and cannot subtract one: reads are
// granted on every entry of each ancestor of a hidden folder but the one
// leading to it, so the ancestors themselves cannot be listed (`ls /`
// fails when the data folder is /var/lib/brabo), and an entry created in
// them after the command started is not readable by it.
package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Subcommand is the launcher's hidden first argument.
const Subcommand = "__brabo-confine"

// Spec is what one confined command may reach.
type Spec struct {
	// Write are the folders it may write in (and read), with every right
	// Landlock handles.
	Write []string
	// Hide are paths it may neither read nor write (unless inside a
	// Write folder).
	Hide []string
}

// Args returns the launcher's arguments that run argv under spec:
// Launcher (or os.Args[0]) followed by these.
func (s Spec) Args(argv ...string) []string {
	out := []string{Subcommand}
	for _, w := range s.Write {
		out = append(out, "-w", w)
	}
	for _, h := range s.Hide {
		out = append(out, "-h", h)
	}
	return append(append(out, "--"), argv...)
}

// parse reads the launcher's arguments (after Subcommand).
func parse(args []string) (Spec, []string, error) {
	var s Spec
	for len(args) > 0 {
		switch args[0] {
		case "--":
			if len(args) < 2 {
				return s, nil, errors.New("no program after --")
			}
			return s, args[1:], nil
		case "-w", "-h":
			if len(args) < 2 || !filepath.IsAbs(args[1]) {
				return s, nil, fmt.Errorf("%s needs an absolute path", args[0])
			}
			if args[0] == "-w" {
				s.Write = append(s.Write, filepath.Clean(args[1]))
			} else {
				s.Hide = append(s.Hide, filepath.Clean(args[1]))
			}
			args = args[2:]
		default:
			return s, nil, fmt.Errorf("unknown argument %q", args[0])
		}
	}
	return s, nil, errors.New("no -- before the program")
}

// The rights: every file-system right of Landlock ABI 5 (ABI 6 and 7 add
// none; a kernel with fewer handles fewer, best effort), and the signal
// scope of ABI 6.
var (
	handled  = landlock.V5.HandledAccessFS
	readDir  = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	readFile = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile)
	device   = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
	config   = landlock.Config{HandledAccessFS: handled, Scoped: landlock.ScopedSet(ll.ScopeSignal)}.BestEffort()
)

// devices are the files every confined command may write: the sinks and
// sources nobody owns.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// ABI is the Landlock ABI version the kernel reports, 0 (with the reason)
// when Landlock is missing or off.
func ABI() (int, error) {
	abiOnce.Do(func() {
		abiVersion, abiErr = ll.LandlockGetABIVersion()
		if abiErr == nil && abiVersion < 1 {
			abiErr = fmt.Errorf("the kernel reports Landlock ABI %d", abiVersion)
		}
		if abiErr != nil {
			abiVersion, abiErr = 0, fmt.Errorf("Landlock is not available: %w", abiErr)
		}
	})
	return abiVersion, abiErr
}

var (
	abiOnce    sync.Once
	abiVersion int
	abiErr     error
)

// rules builds the ruleset's rules for spec: full rights in the Write
// folders, the devices, and reads everywhere but the hidden paths.
func rules(s Spec) ([]landlock.Rule, error) {
	out := []landlock.Rule{
		landlock.PathAccess(device, devices...).IgnoreIfMissing(),
	}
	for _, w := range s.Write {
		out = append(out, landlock.PathAccess(handled, w))
	}
	reads, err := readable(s.Hide)
	if err != nil {
		return nil, err
	}
	for _, r := range reads {
		rights := readFile
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			rights = readDir
		}
		out = append(out, landlock.PathAccess(rights, r).IgnoreIfMissing())
	}
	return out, nil
}

// readable returns the paths whose hierarchies may be read: "/" when
// nothing is hidden; otherwise every entry of each ancestor of a hidden
// path except the hidden paths and the ancestors themselves (which get no
// right: a right on a folder is a right on everything beneath). A hidden
// path is hidden as given and with its symlinks resolved, and an entry
// that resolves to a hidden path, below one, or to an ancestor of one (a
// symlink to /var beside /var/lib/brabo) is left out too: a rule follows
// symlinks.
func readable(hide []string) ([]string, error) {
	if len(hide) == 0 {
		return []string{"/"}, nil
	}
	hidden := map[string]bool{}
	for _, h := range hide {
		h = filepath.Clean(h)
		hidden[h] = true
		if r, err := filepath.EvalSymlinks(h); err == nil {
			hidden[r] = true
		}
	}
	ancestors := map[string]bool{}
	for h := range hidden {
		if h == "/" {
			return nil, errors.New("cannot hide /")
		}
		for d := filepath.Dir(h); ; d = filepath.Dir(d) {
			ancestors[d] = true
			if d == "/" {
				break
			}
		}
	}
	reaches := func(p string) bool {
		return hidden[p] || ancestors[p] || under(p, hidden)
	}
	var out []string
	for a := range ancestors {
		if hidden[a] || under(a, hidden) {
			continue // hidden whole, with what is beneath
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("listing %s: %w", a, err)
		}
		for _, e := range ents {
			p := filepath.Join(a, e.Name())
			if reaches(p) {
				continue
			}
			if r, err := filepath.EvalSymlinks(p); err != nil || reaches(r) {
				continue // dangling, or a way back to what is hidden
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// under reports whether p lies below one of the hidden paths.
func under(p string, hidden map[string]bool) bool {
	for h := range hidden {
		if strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}
