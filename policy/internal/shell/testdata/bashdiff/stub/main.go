// Command stub stands in for every program on the PATH of the differential
// test (policy/bashdiff_*_test.go). It is hard-linked under many names and
// copied into a temporary module before it is built, so it imports only the
// standard library.
//
// Most names do nothing and exit 0: the harness learns what bash ran from
// the execve calls strace records, not from the program. A few names do a
// little of their real job, because what they do decides what bash or the
// next program runs:
//
//   - cat, echo and tee write what the real ones would, so that
//     `cat run.sh | sh`, `tee >(sh) < run.sh` or `echo push | xargs git`
//     feed the next program what they really would;
//   - env, timeout, nice, nohup, stdbuf and xargs run the program they wrap
//     (xargs with the words it reads), so that the program a wrapper would
//     have started shows up as an execve too.
//
// The emulation is approximate in what it prints and how xargs groups its
// words, never in which program a wrapper runs.
package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	name := filepath.Base(os.Args[0])
	if exe, err := os.Executable(); err == nil {
		name = filepath.Base(exe)
	}
	args := os.Args[1:]
	switch name {
	case "cat":
		catFiles(args)
	case "echo":
		echo(args)
	case "tee":
		tee(args)
	case "env":
		envCmd(args)
	case "timeout":
		timeoutCmd(args)
	case "nice":
		niceCmd(args)
	case "nohup":
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		run(args, os.Environ())
	case "stdbuf":
		stdbufCmd(args)
	case "xargs":
		xargsCmd(args)
	}
	os.Exit(0)
}

func catFiles(args []string) {
	files := []string{}
	for i, a := range args {
		if a == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		files = append(files, a)
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, f := range files {
		if f == "-" {
			io.Copy(os.Stdout, os.Stdin)
			continue
		}
		if b, err := os.ReadFile(f); err == nil {
			os.Stdout.Write(b)
		}
	}
}

func tee(args []string) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	outs := []io.Writer{os.Stdout}
	for _, a := range args {
		switch {
		case a == "-a" || a == "--append":
			flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			if f, err := os.OpenFile(a, flags, 0o644); err == nil {
				defer f.Close()
				outs = append(outs, f)
			}
		}
	}
	io.Copy(io.MultiWriter(outs...), os.Stdin)
}

func echo(args []string) {
	newline := true
	for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E") {
		if args[0] == "-n" {
			newline = false
		}
		args = args[1:]
	}
	os.Stdout.WriteString(strings.Join(args, " "))
	if newline {
		os.Stdout.WriteString("\n")
	}
}

// run replaces the stub with argv[0], looked up on PATH, or on the stub's
// own folder when the environment has no PATH (env -i).
func run(argv []string, env []string) {
	if len(argv) == 0 {
		return
	}
	syscall.Exec(lookPath(argv[0], env), argv, env)
}

func lookPath(prog string, env []string) string {
	if strings.Contains(prog, "/") {
		return prog
	}
	path := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[len("PATH="):]
		}
	}
	if path == "" {
		if exe, err := os.Executable(); err == nil {
			path = filepath.Dir(exe)
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return prog
}

func envCmd(args []string) {
	env := os.Environ()
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-i" || a == "-" || a == "--ignore-environment":
			env = nil
		case a == "-0" || a == "--null" || a == "-v" || a == "--debug":
		case a == "-u" || a == "-C":
			if len(args) > 1 {
				if a == "-u" {
					env = unset(env, args[1])
				} else {
					os.Chdir(args[1])
				}
				args = args[1:]
			}
		case strings.HasPrefix(a, "--unset="):
			env = unset(env, a[len("--unset="):])
		case strings.HasPrefix(a, "-u"):
			env = unset(env, a[2:])
		case strings.HasPrefix(a, "--chdir="):
			os.Chdir(a[len("--chdir="):])
		case strings.HasPrefix(a, "-C"):
			os.Chdir(a[2:])
		case a == "-S" || a == "--split-string":
			if len(args) > 1 {
				args = append(strings.Fields(args[1]), args[2:]...)
				continue
			}
		case strings.HasPrefix(a, "--split-string="):
			args = append(strings.Fields(a[len("--split-string="):]), args[1:]...)
			continue
		case strings.HasPrefix(a, "-S"):
			args = append(strings.Fields(a[2:]), args[1:]...)
			continue
		case a == "--":
			args = args[1:]
			goto assignments
		case strings.HasPrefix(a, "-"):
			return // an option this stub does not know: run nothing
		default:
			goto assignments
		}
		args = args[1:]
	}
assignments:
	for len(args) > 0 && strings.Contains(args[0], "=") {
		env = append(unset(env, args[0][:strings.IndexByte(args[0], '=')]), args[0])
		args = args[1:]
	}
	run(args, env)
}

func unset(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func timeoutCmd(args []string) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		if (a == "-s" || a == "-k" || a == "--signal" || a == "--kill-after") && len(args) > 0 {
			args = args[1:]
		}
	}
	if len(args) > 0 {
		args = args[1:] // the duration
	}
	run(args, os.Environ())
}

func niceCmd(args []string) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		if (a == "-n" || a == "--adjustment") && len(args) > 0 {
			args = args[1:]
		}
	}
	run(args, os.Environ())
}

func stdbufCmd(args []string) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		if (a == "-i" || a == "-o" || a == "-e") && len(args) > 0 {
			args = args[1:]
		}
	}
	run(args, os.Environ())
}

// xargsCmd reads words from stdin (or -a FILE) and runs the command with
// them: once per line with -I, in groups of N with -n N, else once.
func xargsCmd(args []string) {
	var replace, delim, argFile string
	null, noEmpty, perN := false, false, 0
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		value := func(short, long string) (string, bool) {
			switch {
			case a == short || a == long:
				if len(args) > 0 {
					v := args[0]
					args = args[1:]
					return v, true
				}
				return "", true
			case strings.HasPrefix(a, long+"="):
				return a[len(long)+1:], true
			case strings.HasPrefix(a, short):
				return a[len(short):], true
			}
			return "", false
		}
		if a == "--" {
			break
		}
		if v, ok := value("-I", "--replace"); ok {
			replace = v
		} else if v, ok := value("-d", "--delimiter"); ok {
			delim = v
		} else if v, ok := value("-a", "--arg-file"); ok {
			argFile = v
		} else if v, ok := value("-n", "--max-args"); ok {
			perN = atoi(v)
		} else if v, ok := value("-L", "--max-lines"); ok {
			perN = atoi(v)
		} else if _, ok := value("-P", "--max-procs"); ok {
		} else if _, ok := value("-s", "--max-chars"); ok {
		} else if _, ok := value("-E", "--eof"); ok {
		} else if a == "-0" || a == "--null" {
			null = true
		} else if a == "-r" || a == "--no-run-if-empty" {
			noEmpty = true
		} else if a == "-i" {
			replace = "{}"
		}
	}
	if len(args) == 0 {
		args = []string{"echo"}
	}
	var in io.Reader = os.Stdin
	if argFile != "" {
		f, err := os.Open(argFile)
		if err != nil {
			return
		}
		in = f
	}
	data, _ := io.ReadAll(bufio.NewReader(in))
	var items []string
	switch {
	case replace != "":
		items = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	case null:
		items = strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
	case delim != "":
		items = strings.Split(string(data), delim[:1])
	default:
		items = strings.Fields(string(data))
	}
	if len(items) == 1 && items[0] == "" {
		items = nil
	}
	if len(items) == 0 && (noEmpty || replace != "") {
		return
	}
	switch {
	case replace != "":
		for _, it := range items {
			argv := make([]string, len(args))
			for i, a := range args {
				argv[i] = strings.ReplaceAll(a, replace, it)
			}
			child(argv)
		}
	case perN > 0:
		for len(items) > 0 {
			n := min(perN, len(items))
			child(append(append([]string{}, args...), items[:n]...))
			items = items[n:]
		}
	default:
		child(append(append([]string{}, args...), items...))
	}
}

func child(argv []string) {
	cmd := exec.Command(lookPath(argv[0], os.Environ()), argv[1:]...)
	cmd.Args[0] = argv[0]
	// Stdin stays nil: GNU xargs gives its command /dev/null.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Run()
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
