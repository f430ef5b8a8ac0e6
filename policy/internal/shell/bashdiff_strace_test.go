package shell_test

// The strace log reader of the differential test (bashdiff_harness_test.go).
//
// strace runs with -f -qq -xx -y -v -e signal=none, so a line of its log is
// one of
//
//	PID name(ARGS) = RET
//	PID name(ARGS <unfinished ...>
//	PID <... name resumed>ARGS) = RET
//
// -xx prints every string byte as \xHH, so a string never holds a quote, a
// comma or a bracket of its own and the arguments split on the top-level
// commas. -y appends the path of a descriptor in angle brackets
// (AT_FDCWD</proj>, 3</etc/passwd>), hex-encoded as well.

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
)

// straceCall is one system call of the log, its two halves joined when
// another process interrupted it.
type straceCall struct {
	pid  int
	name string
	args []string // top-level arguments, as printed
	ret  string   // what follows "= ", e.g. "0", "-1 ENOENT (No such file or directory)", "3<\x2f…>"
}

// ok reports whether the call succeeded.
func (c *straceCall) ok() bool { return c.ret != "" && c.ret[0] != '-' && c.ret[0] != '?' }

// errno is the error name of a failed call ("ENOENT"), or "".
func (c *straceCall) errno() string {
	if !strings.HasPrefix(c.ret, "-1 ") {
		return ""
	}
	f := strings.Fields(c.ret[3:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// retInt is the numeric return value (a child's pid for clone), or -1.
func (c *straceCall) retInt() int {
	end := 0
	for end < len(c.ret) && c.ret[end] >= '0' && c.ret[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(c.ret[:end])
	if err != nil {
		return -1
	}
	return n
}

// readStrace returns the calls of a log in the order they started: a call
// that was interrupted takes the place of its first half, so a fork comes
// before anything its child did.
func readStrace(r io.Reader) []*straceCall {
	type half struct {
		at   int
		text string
	}
	var calls []*straceCall
	pending := map[int]half{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		sp := strings.IndexByte(line, ' ')
		if sp <= 0 {
			continue
		}
		pid, err := strconv.Atoi(line[:sp])
		if err != nil {
			continue
		}
		rest := strings.TrimLeft(line[sp+1:], " ")
		switch {
		case strings.HasSuffix(rest, "<unfinished ...>"):
			calls = append(calls, nil) // its place, filled when it resumes
			pending[pid] = half{len(calls) - 1, strings.TrimSuffix(rest, "<unfinished ...>")}
		case strings.HasPrefix(rest, "<... "):
			p, ok := pending[pid]
			if !ok {
				continue
			}
			delete(pending, pid)
			i := strings.Index(rest, " resumed>")
			if i < 0 {
				continue
			}
			calls[p.at] = parseStraceCall(pid, strings.TrimRight(p.text, " ")+rest[i+len(" resumed>"):])
		default:
			if c := parseStraceCall(pid, rest); c != nil {
				calls = append(calls, c)
			}
		}
	}
	// a call cut short by the end of the log (a killed process) is kept
	// without its result: an attempt is an attempt
	for pid, p := range pending {
		calls[p.at] = parseStraceCall(pid, p.text+") = ?")
	}
	out := calls[:0]
	for _, c := range calls {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// parseStraceCall parses "name(args) = ret"; nil if the text is not a call
// (a signal, an exit notice).
func parseStraceCall(pid int, s string) *straceCall {
	open := strings.IndexByte(s, '(')
	if open <= 0 || strings.ContainsAny(s[:open], " -+<") {
		return nil
	}
	c := &straceCall{pid: pid, name: s[:open]}
	depth, start, i := 0, open+1, open+1
scan:
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		case '[', '{', '(', '<':
			depth++
		case ']', '}', '>':
			depth--
		case ')':
			if depth == 0 {
				break scan
			}
			depth--
		case ',':
			if depth == 0 {
				c.args = append(c.args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if a := strings.TrimSpace(s[start:min(i, len(s))]); a != "" || len(c.args) > 0 {
		c.args = append(c.args, a)
	}
	if i < len(s) {
		if eq := strings.Index(s[i:], "= "); eq >= 0 {
			c.ret = strings.TrimSpace(s[i+eq+2:])
		}
	}
	return c
}

// straceString decodes a printed string argument ("\x2f\x65…", maybe with
// a trailing "..." when strace cut it); ok is false for anything else
// (NULL, an address).
func straceString(a string) (string, bool) {
	if len(a) < 2 || a[0] != '"' {
		return "", false
	}
	end := strings.LastIndexByte(a, '"')
	if end <= 0 {
		return "", false
	}
	return unescapeStrace(a[1:end]), true
}

// unescapeStrace decodes the \xHH (and, defensively, the C) escapes strace
// prints.
func unescapeStrace(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'x':
			if i+2 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(n))
					i += 2
					continue
				}
			}
			b.WriteByte(c)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 8)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// straceArray decodes a printed array of strings (argv, envp).
func straceArray(a string) ([]string, bool) {
	if !strings.HasPrefix(a, "[") {
		return nil, false
	}
	var out []string
	for i := 0; i < len(a); i++ {
		if a[i] != '"' {
			continue
		}
		j := strings.IndexByte(a[i+1:], '"')
		if j < 0 {
			break
		}
		out = append(out, unescapeStrace(a[i+1:i+1+j]))
		i += j + 1
	}
	return out, true
}

// straceFdPath returns the path -y printed after a descriptor
// ("AT_FDCWD</proj>" → "/proj"), or "" when there is none or it is not a
// file path (a pipe, a socket).
func straceFdPath(a string) string {
	lt := strings.IndexByte(a, '<')
	if lt < 0 || !strings.HasSuffix(a, ">") {
		return ""
	}
	p := unescapeStrace(a[lt+1 : len(a)-1])
	if !strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// straceFd returns the descriptor's text before its -y annotation
// ("AT_FDCWD", "3").
func straceFd(a string) string {
	if lt := strings.IndexByte(a, '<'); lt >= 0 {
		return a[:lt]
	}
	return a
}

// TestBashDiffStraceReader reads a hand-made log: halves joined in start
// order, strings and -y paths decoded, signals skipped.
func TestBashDiffStraceReader(t *testing.T) {
	hx := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		}
		return b.String()
	}
	q := func(s string) string { return `"` + hx(s) + `"` }
	log := strings.Join([]string{
		`100 execve(` + q("/usr/bin/bash") + `, [` + q("bash") + `, ` + q("-c") + `, ` + q("x, [y]") + `], [` + q("PATH=/s") + `]) = 0`,
		`100 clone(child_stack=NULL, flags=CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>`,
		`101 execve(` + q("/s/git") + `, [` + q("git") + `, ` + q("push") + `], [` + q("PATH=/s") + `] <unfinished ...>`,
		`100 <... clone resumed>, child_tidptr=0x7f) = 101`,
		`101 <... execve resumed>) = 0`,
		`100 --- SIGCHLD {si_signo=SIGCHLD, si_pid=101} ---`,
		`100 openat(AT_FDCWD<` + hx("/proj") + `>, ` + q("../x") + `, O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EACCES (Permission denied)`,
		`100 openat(AT_FDCWD<` + hx("/proj") + `>, ` + q("a.txt") + `, O_RDONLY) = 3<` + hx("/proj/a.txt") + `>`,
	}, "\n")
	calls := readStrace(strings.NewReader(log))
	var names []string
	for _, c := range calls {
		names = append(names, strconv.Itoa(c.pid)+" "+c.name)
	}
	if got, want := strings.Join(names, ", "), "100 execve, 100 clone, 101 execve, 100 openat, 100 openat"; got != want {
		t.Fatalf("calls %s, want %s", got, want)
	}
	if argv, _ := straceArray(calls[0].args[1]); len(argv) != 3 || argv[2] != "x, [y]" {
		t.Errorf("argv %q", argv)
	}
	if calls[1].retInt() != 101 || !calls[2].ok() {
		t.Errorf("clone = %q, execve = %q", calls[1].ret, calls[2].ret)
	}
	st := &procState{cwd: "/elsewhere", kind: procShell}
	touches := straceTouches(calls[3], st)
	if len(touches) != 1 || touches[0].path != "/x" || !touches[0].write || touches[0].errno != "EACCES" || st.cwd != "/proj" {
		t.Errorf("touches %+v, cwd %s", touches, st.cwd)
	}
	if touches = straceTouches(calls[4], st); len(touches) != 1 || !touches[0].read || touches[0].real != "/proj/a.txt" {
		t.Errorf("touches %+v", touches)
	}
}
