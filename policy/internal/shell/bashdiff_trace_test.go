package shell_test

// What the strace log of one line says bash did (bashdiff_harness_test.go
// runs the line): every execve attempt, and every path a shell process
// touched outside the project folder that a shell does not touch on its
// own.
//
// What a shell does on its own and is therefore not counted:
//   - the reads a shell does when it starts, learnt by tracing `-c :` (the
//     dynamic loader, libc's nsswitch and passwd lookups), each at most as
//     often as at start-up and only right after a real shell was exec'd: a
//     forked subshell has none, and a second read of /etc/passwd
//     (`< /etc/passwd`) counts;
//   - libc's locale, charset-conversion and time-zone data (read when a line
//     sets LANG or LC_*, prints an error message, or formats a time with
//     printf %(…)T): data files, not anything a decision names;
//   - the files nobody owns (/dev/null, /dev/std*, /dev/tty) and the
//     descriptors a shell already holds (/dev/fd/N, /proc/self/fd/N): what
//     such a descriptor points at was opened, and checked, before;
//   - reading the stub folder (a glob on $PATH): it holds only the stubs;
//   - bash's here-document temporary files, /tmp/sh-thd.XXXXXX (a body
//     larger than a pipe buffer).
//
// A stub or a real program other than a shell is not followed once it
// started (its own start-up is the Go or C runtime's): only the programs it
// starts in turn are, which is how a wrapper (env, xargs…) shows up.

import (
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// bashNobodysFile matches the files nobody owns and the descriptors a shell
// already holds.
var bashNobodysFile = regexp.MustCompile(`^(/dev/(null|stdin|stdout|stderr|tty)|/dev/fd/[0-9]+|/proc/(self|[0-9]+)/fd/[0-9]+)$`)

// bashLibcData are the folders of libc's locale, gconv and time-zone data.
var bashLibcData = []string{"/usr/lib/locale", "/usr/share/locale", "/usr/share/i18n",
	"/usr/lib/x86_64-linux-gnu/gconv", "/usr/lib/aarch64-linux-gnu/gconv", "/usr/lib64/gconv",
	"/etc/locale.alias", "/etc/localtime", "/usr/share/zoneinfo"}

// bashHeredocTemp matches bash's here-document temporary files.
var bashHeredocTemp = regexp.MustCompile(`^/tmp/sh-thd\.[A-Za-z0-9]{6}$`)

// procKind says what a traced process is running.
type procKind int

const (
	procShell   procKind = iota // a real shell: its paths are checked
	procStub                    // a stub: only the programs it starts count (wrappers)
	procProgram                 // another real program: only the programs it starts count
)

// procState is what the reader knows of one process.
type procState struct {
	cwd    string
	kind   procKind
	budget map[string]int // start-up reads the shell may still do unchecked
}

// interpret walks the calls in start order, following each process's kind
// and directory, and fills run.execs and run.outside.
func (w *bashWorker) interpret(calls []*straceCall, run *bashRun) {
	procs := map[int]*procState{}
	first := true
	for _, c := range calls {
		st := procs[c.pid]
		if st == nil { // not seen forked: count it as a shell, to miss nothing
			st = &procState{cwd: w.root, kind: procShell}
			procs[c.pid] = st
		}
		switch c.name {
		case "clone", "clone3", "fork", "vfork":
			if child := c.retInt(); child > 0 {
				procs[child] = &procState{cwd: st.cwd, kind: st.kind}
			}
			continue
		case "execve", "execveat":
			x, ok := w.execOf(c, st)
			if !ok {
				continue
			}
			if first {
				first = false // the harness starting bash
			} else {
				run.execs = append(run.execs, x)
			}
			if x.errno == "" {
				st.kind, st.budget = w.kindOf(x)
			}
			continue
		}
		for _, t := range straceTouches(c, st) {
			if (c.name == "chdir" || c.name == "fchdir") && c.ok() {
				st.cwd = t.path
			}
			if st.kind == procShell && !w.allowedTouch(st, t) {
				run.outside = append(run.outside, t)
			}
		}
	}
}

// execOf reads an execve or execveat call.
func (w *bashWorker) execOf(c *straceCall, st *procState) (bashExec, bool) {
	pi := 0
	if c.name == "execveat" {
		pi = 1
	}
	if len(c.args) < pi+2 {
		return bashExec{}, false
	}
	file, ok := straceString(c.args[pi])
	if !ok {
		return bashExec{}, false
	}
	if pi == 1 && !strings.HasPrefix(file, "/") {
		if dir := straceFdPath(c.args[0]); dir != "" {
			file = path.Join(dir, file)
		}
	}
	argv, _ := straceArray(c.args[pi+1])
	x := bashExec{cwd: st.cwd, path: file, argv: argv, by: [...]string{"shell", "stub", "program"}[st.kind]}
	if !c.ok() && c.ret != "?" { // "?": the process ended before strace saw the result
		x.errno = c.errno()
	}
	if len(c.args) > pi+2 {
		if env, ok := straceArray(c.args[pi+2]); ok {
			x.env = w.addedEnv(env)
		}
	}
	x.prog = file
	if p := bashResolve(st.cwd, file); path.Dir(p) == w.env.stubDir {
		x.prog = path.Base(p)
	}
	return x, true
}

// bashBaseEnv are the variables bash exports on its own.
var bashBaseEnv = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}

var bashEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// addedEnv keeps the variables the line set: not the two the harness gives
// (unless changed), not those bash maintains itself, not names that cannot
// be written as an assignment (exported functions).
func (w *bashWorker) addedEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case bashBaseEnv[name] || !bashEnvName.MatchString(name):
		case name == "PATH" && value == w.env.stubDir:
		case name == "HOME" && value == w.home:
		default:
			out = append(out, kv)
		}
	}
	return out
}

// kindOf says what a process runs after a successful exec, and gives a
// shell its start-up reads.
func (w *bashWorker) kindOf(x bashExec) (procKind, map[string]int) {
	p := bashResolve(x.cwd, x.path)
	if path.Dir(p) == w.env.stubDir && !bashIsShellLink(path.Base(p)) {
		return procStub, nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return procProgram, nil
	}
	reads, ok := w.env.shells[real]
	if !ok {
		return procProgram, nil
	}
	budget := map[string]int{}
	for _, r := range reads {
		budget[path.Clean(r)]++
	}
	return procShell, budget
}

func bashIsShellLink(name string) bool {
	for _, n := range bashShellLinks {
		if n == name {
			return true
		}
	}
	return false
}

func bashResolve(cwd, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// stracePathArgs says, for each call that names paths, where they are:
// {index of the directory descriptor or -1, index of the path}.
var stracePathArgs = map[string][][2]int{
	"open": {{-1, 0}}, "openat": {{0, 1}}, "openat2": {{0, 1}}, "creat": {{-1, 0}},
	"rename": {{-1, 0}, {-1, 1}}, "renameat": {{0, 1}, {2, 3}}, "renameat2": {{0, 1}, {2, 3}},
	"unlink": {{-1, 0}}, "unlinkat": {{0, 1}}, "rmdir": {{-1, 0}}, "mkdir": {{-1, 0}},
	"mkdirat": {{0, 1}}, "link": {{-1, 0}, {-1, 1}}, "linkat": {{0, 1}, {2, 3}},
	"symlink": {{-1, 1}}, "symlinkat": {{1, 2}}, "chdir": {{-1, 0}}, "truncate": {{-1, 0}},
	"chmod": {{-1, 0}}, "fchmodat": {{0, 1}},
}

// straceFlagsArg is where an open call's flags are.
var straceFlagsArg = map[string]int{"open": 1, "openat": 2, "openat2": 2}

// bashTouch is one path a system call of a shell named (or a network
// address it connected to).
type bashTouch struct {
	op    string // "openat O_RDONLY", "chdir", "unlink", "connect" …
	path  string // absolute, resolved against the process's directory
	given string // as the call named it
	errno string
	real  string // where the call really landed (-y), when it succeeded
	read  bool   // an open for reading only
	write bool   // creates, changes or removes something
}

func (t bashTouch) String() string {
	s := t.op + " " + t.path
	if t.given != "" && t.given != t.path {
		s += " (given as " + t.given + ")"
	}
	if t.real != "" && t.real != t.path {
		s += " (really " + t.real + ")"
	}
	if t.errno != "" {
		s += " (failed: " + t.errno + ")"
	}
	return s
}

// straceTouches returns what a call touched, resolved against the
// directory of its process (which -y prints and which is refreshed here).
func straceTouches(c *straceCall, st *procState) []bashTouch {
	switch c.name {
	case "fchdir":
		if len(c.args) > 0 {
			if p := straceFdPath(c.args[0]); p != "" {
				return []bashTouch{{op: "fchdir", path: p, errno: c.errno()}}
			}
		}
		return nil
	case "connect":
		if len(c.args) > 1 && strings.Contains(c.args[1], "AF_INET") {
			return []bashTouch{{op: "connect", path: c.args[1], errno: c.errno()}}
		}
		return nil
	}
	var out []bashTouch
	for _, pa := range stracePathArgs[c.name] {
		if pa[1] >= len(c.args) {
			continue
		}
		p, ok := straceString(c.args[pa[1]])
		if !ok {
			continue
		}
		base := st.cwd
		if pa[0] >= 0 && pa[0] < len(c.args) {
			if dir := straceFdPath(c.args[pa[0]]); dir != "" {
				base = dir
				if straceFd(c.args[pa[0]]) == "AT_FDCWD" {
					st.cwd = dir // strace knows the directory better than we do
				}
			}
		}
		t := bashTouch{op: c.name, path: bashResolve(base, p), given: p, errno: c.errno()}
		if fi, ok := straceFlagsArg[c.name]; ok && fi < len(c.args) {
			flags := c.args[fi]
			t.op += " " + strings.TrimSuffix(strings.TrimPrefix(flags, "{flags="), "}")
			t.write = straceOpenWrites(flags)
			t.read = !t.write
			if c.ok() {
				t.real = straceFdPath(c.ret)
			}
		} else {
			t.write = c.name != "chdir"
		}
		out = append(out, t)
	}
	return out
}

// straceOpenWrites reports whether open flags write, create or truncate.
func straceOpenWrites(flags string) bool {
	for _, f := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE"} {
		if strings.Contains(flags, f) {
			return true
		}
	}
	return false
}

// allowedTouch reports whether a shell's touch is inside the project folder
// or one of the things a shell does on its own (see the top of this file),
// consuming a start-up read when it is one.
func (w *bashWorker) allowedTouch(st *procState, t bashTouch) bool {
	if t.op == "connect" {
		return false
	}
	if bashNobodysFile.MatchString(t.path) {
		return true
	}
	judged := t.path
	if t.real != "" {
		judged = t.real // the file the call really reached
	}
	if bashWithin(judged, w.root) {
		return true
	}
	if !t.write && bashWithin(t.path, w.env.stubDir) {
		return true
	}
	if t.read {
		if st.budget[t.path] > 0 {
			st.budget[t.path]--
			return true
		}
		for _, p := range bashLibcData {
			if bashWithin(t.path, p) {
				return true
			}
		}
	}
	return bashHeredocTemp.MatchString(t.path)
}
