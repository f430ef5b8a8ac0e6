package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/confine"
)

// TestMain lets the test binary be the root helper and the Landlock
// launcher, as brabo's main does.
var testArgs0 = os.Args[0]

func TestMain(m *testing.M) {
	if IsHelper(os.Args) {
		Main(os.Args)
	}
	if confine.IsLauncher(os.Args) {
		confine.Main(os.Args)
	}
	os.Exit(m.Run())
}

// need fails the test when bubblewrap cannot run here and
// BRABO_REQUIRE_SANDBOX is set (CI), and skips it otherwise.
func need(t *testing.T) *Sandbox {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("BRABO_REQUIRE_SANDBOX is set and the sandbox is missing: %v", err)
		}
		t.Skip("the sandbox is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
	}
	sb := &Sandbox{Helper: os.Args[0]}
	if err := sb.Check(); err != nil {
		t.Fatalf("bwrap runs, but brabo's sandbox does not: %v", err)
	}
	return sb
}

// run runs script under spec, started as the executor starts it
// (Prepared.Start: under root, without the helper process), and returns
// its combined output.
func run(t *testing.T, sb *Sandbox, spec Spec, script string) string {
	t.Helper()
	p, cmd := prepare(t, sb, spec, script)
	out, _ := p.output(cmd)
	return string(out)
}

// runHelper is run through the root helper process: the command Apply
// leaves, started as it is.
func runHelper(t *testing.T, sb *Sandbox, spec Spec, script string) string {
	t.Helper()
	p, cmd := prepare(t, sb, spec, script)
	out, _ := procsOutput(cmd)
	p.Started()
	return string(out)
}

func prepare(t *testing.T, sb *Sandbox, spec Spec, script string) (*Prepared, *exec.Cmd) {
	t.Helper()
	if spec.Env == nil {
		spec.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	}
	p, err := sb.Prepare(spec, []string{"bash", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{}
	p.Apply(cmd)
	return p, cmd
}

// project makes a scope root with a git repository, permissions.json and
// an agent's configuration, under a folder only root may cross when the
// test runs as root.
func project(t *testing.T) string {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(base, "proj")
	for _, d := range []string{root, filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".claude", "agents"), filepath.Join(root, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"permissions.json": "{}", ".git/HEAD": "ref: refs/heads/main\n",
		".git/config": "[core]\n", ".claude/settings.json": "{}", "CLAUDE.md": "hi", "src/a.txt": "a"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func try(what, cmd string) string {
	return "echo " + what + "=$( (" + cmd + ") >/dev/null 2>&1 && echo ok || echo denied); "
}

func expect(t *testing.T, out string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if !strings.Contains(out, k+"="+v+"\n") {
			t.Errorf("%s: want %s; output:\n%s", k, v, out)
		}
	}
}

// TestSandboxedCommandSeesOnlyItsScope: the command writes its scope root
// and its fresh /tmp and HOME; it cannot write the protected paths, read
// /etc/shadow, see a sibling folder of the root, signal or see this
// process, reach the host's loopback; under root it runs as an
// unprivileged uid and what it writes keeps the root's owner on disk.
// Both ways of starting it hold it: Prepared.Start (the executor's) and
// the root helper process Apply leaves.
func TestSandboxedCommandSeesOnlyItsScope(t *testing.T) {
	t.Run("start", func(t *testing.T) { seesOnlyItsScope(t, run) })
	t.Run("helper", func(t *testing.T) { seesOnlyItsScope(t, runHelper) })
}

func seesOnlyItsScope(t *testing.T, run func(*testing.T, *Sandbox, Spec, string) string) {
	sb := need(t)
	root := project(t)
	sibling := filepath.Join(filepath.Dir(root), "sibling")
	os.MkdirAll(sibling, 0o755)
	os.WriteFile(filepath.Join(sibling, "secret"), []byte("s"), 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	out := run(t, sb, Spec{Root: root, Dir: filepath.Join(root, "src")},
		"echo uid=$(id -u); echo pwd=$(pwd); echo home=$HOME; "+
			try("write", "echo x > "+root+"/made && echo y > made")+
			try("tmp", "echo x > /tmp/t && echo x > $HOME/h")+
			try("perms", "echo x > "+root+"/permissions.json")+
			try("gitconfig", "echo x >> "+root+"/.git/config")+
			try("hook", "echo x > "+root+"/.git/hooks/pre-commit")+
			try("claude", "echo x > "+root+"/.claude/settings.json")+
			try("claudeagents", "echo x > "+root+"/.claude/agents/a.md")+
			try("claudemd", "echo x > "+root+"/CLAUDE.md")+
			try("readperms", "cat "+root+"/permissions.json")+
			try("shadow", "cat /etc/shadow")+
			try("sibling", "cat "+sibling+"/secret")+
			try("parent", "kill -0 "+strconv.Itoa(os.Getpid()))+
			try("procparent", "cat /proc/"+strconv.Itoa(os.Getpid())+"/environ")+
			try("tcp", "exec 3<>/dev/tcp/127.0.0.1/"+port)+
			try("run", "ls /run/postgresql || ls /var/run/postgresql"))
	expect(t, out, map[string]string{"write": "ok", "tmp": "ok", "perms": "denied", "gitconfig": "denied", "hook": "denied",
		"claude": "denied", "claudeagents": "denied", "claudemd": "denied", "readperms": "ok", "shadow": "denied",
		"sibling": "denied", "parent": "denied", "procparent": "denied", "tcp": "denied", "run": "denied"})
	if !strings.Contains(out, "pwd="+root+"/src\n") || !strings.Contains(out, "home="+Home+"\n") {
		t.Errorf("folder or home wrong:\n%s", out)
	}
	if os.Geteuid() == 0 && !strings.Contains(out, "uid="+strconv.Itoa(DefaultUID)+"\n") {
		t.Errorf("under root the command must run as %d:\n%s", DefaultUID, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(root, "made"), &st); err != nil {
		t.Fatal("the write inside the root did not happen")
	}
	var rst syscall.Stat_t
	syscall.Stat(root, &rst)
	if st.Uid != rst.Uid {
		t.Errorf("the file the command wrote belongs to uid %d on disk, the root to %d", st.Uid, rst.Uid)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "permissions.json")); string(b) != "{}" {
		t.Errorf("permissions.json changed: %q", b)
	}
	if _, err := os.Stat("/tmp/t"); err == nil {
		// Only a problem when our own script made it.
		if b, _ := os.ReadFile("/tmp/t"); string(b) == "x\n" {
			t.Error("the sandbox's /tmp is the host's")
		}
	}
}

// TestMayWriteOpensOnlyTheApprovedPaths: a protected path MayWrite names
// is writable, the others stay read-only.
func TestMayWriteOpensOnlyTheApprovedPaths(t *testing.T) {
	sb := need(t)
	root := project(t)
	gitDir := filepath.Join(root, ".git")
	out := run(t, sb, Spec{Root: root, MayWrite: func(p string) bool { return p == gitDir }},
		try("git", "echo x >> "+root+"/.git/config")+try("perms", "echo x > "+root+"/permissions.json"))
	expect(t, out, map[string]string{"git": "ok", "perms": "denied"})
}

// TestSymlinkToHiddenPathReadsNothing: a symlink in the project to a
// folder outside it, and a protected name that is such a symlink, bring
// nothing of the outside in.
func TestSymlinkToHiddenPathReadsNothing(t *testing.T) {
	sb := need(t)
	root := project(t)
	secret := filepath.Join(filepath.Dir(root), "secret")
	os.MkdirAll(secret, 0o755)
	os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o644)
	os.Symlink(secret, filepath.Join(root, "link"))
	os.Symlink(filepath.Join(secret, "key"), filepath.Join(root, "AGENTS.md"))
	prot, err := Protected(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prot {
		if !within(p.Path, root) {
			t.Errorf("Protected names %s outside the root", p.Path)
		}
	}
	out := run(t, sb, Spec{Root: root}, try("link", "cat link/key")+try("agents", "cat AGENTS.md"))
	expect(t, out, map[string]string{"link": "denied", "agents": "denied"})
}

// TestGitfileBindsItsGitFolders: a worktree's gitfile brings its git
// folder and the common one in, read-only, so that git works; git status
// runs in the worktree, and a write to the common folder fails.
func TestGitfileBindsItsGitFolders(t *testing.T) {
	sb := need(t)
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatal(err)
		}
		t.Skip("git is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	main, wt := filepath.Join(base, "main"), filepath.Join(base, "wt")
	gitRun := func(dir string, args ...string) {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(main, 0o755)
	gitRun(main, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(main, "f"), []byte("f"), 0o644)
	gitRun(main, "add", "f")
	gitRun(main, "commit", "-qm", "one")
	gitRun(main, "worktree", "add", "-q", wt, "-b", "agent")
	prot, err := Protected(wt)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range prot {
		paths = append(paths, p.Path)
	}
	for _, want := range []string{filepath.Join(wt, ".git"), filepath.Join(main, ".git"), filepath.Join(main, ".git", "worktrees", "wt")} {
		if !slices.Contains(paths, want) {
			t.Errorf("Protected(%s) lacks %s: %q", wt, want, paths)
		}
	}
	out := run(t, sb, Spec{Root: wt}, try("status", "git status --short")+try("common", "echo x > "+main+"/.git/config")+
		try("mainfile", "cat "+main+"/f"))
	expect(t, out, map[string]string{"status": "ok", "common": "denied", "mainfile": "denied"})
}

// TestNothingOutlivesTheCommand: a setsid, double-forked child is gone
// when the sandbox's first process exits: it never writes.
func TestNothingOutlivesTheCommand(t *testing.T) {
	sb := need(t)
	root := project(t)
	run(t, sb, Spec{Root: root}, "(setsid bash -c 'sleep 1; echo late > "+root+"/late' &) ; echo started")
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(root, "late")); err == nil {
		t.Fatal("a child of the command outlived it and wrote")
	}
}

// TestBindsAndEnvExtendTheSandbox: an extra bind (a unix socket, read
// only) and an extra variable reach the command.
func TestBindsAndEnvExtendTheSandbox(t *testing.T) {
	sb := need(t)
	root := project(t)
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(sockDir, 0o755)
	os.Chmod(sock, 0o777)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	out := run(t, sb, Spec{Root: root, Binds: []Bind{{Src: sock, Dst: "/run/brabo/proxy.sock", ReadOnly: true}},
		Env: []string{"PATH=/usr/bin:/bin", "HTTPS_PROXY=unix:/run/brabo/proxy.sock"}},
		"echo proxy=$HTTPS_PROXY; python3 -c 'import socket;s=socket.socket(socket.AF_UNIX);s.connect(\"/run/brabo/proxy.sock\");print(\"got=\"+s.recv(10).decode().strip())'")
	if !strings.Contains(out, "proxy=unix:/run/brabo/proxy.sock\n") || !strings.Contains(out, "got=hello\n") {
		t.Errorf("the bind or the variable did not reach the command:\n%s", out)
	}
}

// TestArgsBuildTheRootFromTheAllowList: the arguments bind the system
// folders read-only, mask /etc's secrets, and never bind / or the home
// folder.
func TestArgsBuildTheRootFromTheAllowList(t *testing.T) {
	root := project(t)
	args, err := Spec{Root: root}.Args("true")
	if err != nil {
		t.Fatal(err)
	}
	joined := " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --ro-bind /usr /usr ", " --ro-bind /etc /etc ", " --unshare-net ", " --unshare-pid ",
		" --die-with-parent ", " --new-session ", " --tmpfs /tmp ", " --tmpfs /run ", " --bind " + root + " " + root + " ",
		" --ro-bind " + root + "/permissions.json " + root + "/permissions.json ", " --ro-bind " + root + "/.git " + root + "/.git "} {
		if !strings.Contains(joined, want) {
			t.Errorf("args lack %q:\n%s", want, joined)
		}
	}
	if _, err := os.Stat("/etc/shadow"); err == nil && !strings.Contains(joined, " --ro-bind /dev/null /etc/shadow ") {
		t.Errorf("/etc/shadow is not masked:\n%s", joined)
	}
	for _, never := range []string{" / / ", " /root ", " /home "} {
		if strings.Contains(joined, never) {
			t.Errorf("args hold %q:\n%s", never, joined)
		}
	}
	if _, err := (Spec{Root: "relative"}).Args("true"); err == nil {
		t.Error("a relative root was accepted")
	}
}

// TestHideMasksAFileInASystemFolder: a server file in /etc (a --db-file)
// reads as empty inside.
func TestHideMasksAFileInASystemFolder(t *testing.T) {
	sb := need(t)
	f, err := os.CreateTemp("/etc", "brabo-test-db-url-*")
	if err != nil {
		t.Skip("cannot write in /etc:", err) // not a missing part: as root, which CI runs as, /etc is writable
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	f.WriteString("postgres://secret")
	f.Close()
	out := run(t, sb, Spec{Root: project(t), Hide: []string{f.Name()}}, "cat "+f.Name()+"; echo end")
	if strings.Contains(out, "secret") || !strings.Contains(out, "end") {
		t.Errorf("the hidden file reads:\n%s", out)
	}
}
