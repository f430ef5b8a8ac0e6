package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The integrity check covers the whole of git's control files, in every
// git folder a project's git uses, and runs only once every process of
// the action has ended, through the real `brabo serve`
// (a subreaper, as in production) and the real shell:
//   - a long action that rewrites .git/config, alternates and info/
//     while it runs;
//   - a process the action left behind (setsid + env -i: neither its
//     group nor its BRABO_ACTION_ID) that writes .git/config after the
//     action's command exited;
//   - the folder a gitfile points to;
//
// each ends with the files restored and the action failed naming them;
// and a left-behind process that would write later is stopped.
func TestIntegrityCoversGitControlFilesAndLeftBehindWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	// Without the sandbox, where .git is writable (as it is for a hook
	// agent's own commands): in the sandbox these writes fail in the kernel
	// (cmd/brabo/sandbox_test.go), and the check is the layer behind it.
	srv := startServe(t, t.TempDir(), "--no-sandbox")
	gitIn := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	project := func(slug string, gitArgs ...string) (root, agent string) {
		t.Helper()
		root = filepath.Join(t.TempDir(), slug)
		os.MkdirAll(root, 0o755)
		gitIn(root, append([]string{"init", "--quiet"}, gitArgs...)...)
		os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(sh)"]}`), 0o644)
		id := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": slug, "mode": "local", "root": root}, 201)["id"].(string)
		agent = srv.must(t, "POST", "/v1/projects/"+id+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
		return root, id + " " + agent
	}
	run := func(who, script string) map[string]any {
		t.Helper()
		id, agent, _ := strings.Cut(who, " ")
		a := srv.must(t, "POST", "/v1/projects/"+id+"/actions", agent,
			map[string]any{"type": "terminal", "payload": map[string]any{"command": "sh " + script, "timeoutSec": 60}}, 201)
		if a["status"] == "pending" {
			a = srv.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", srv.token, nil, 200)["action"].(map[string]any)
		}
		return a
	}
	failedNaming := func(a map[string]any, files ...string) {
		t.Helper()
		res, _ := a["result"].(map[string]any)
		msg, _ := res["error"].(string)
		if a["status"] != "failed" || !strings.Contains(msg, "integrity:") {
			t.Fatalf("the action ended %v, want failed by the integrity check: %v", a["status"], res)
		}
		for _, f := range files {
			if !strings.Contains(msg, f) {
				t.Errorf("the failure does not name %s: %s", f, msg)
			}
		}
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return "(absent)"
		}
		return string(b)
	}

	root, who := project("long")
	config := filepath.Join(root, ".git", "config")
	before := read(config)
	os.WriteFile(filepath.Join(root, "long.sh"), []byte(`printf '[core]\n\tsshCommand = ./evil.sh\n' >> .git/config
printf '/elsewhere/objects\n' > .git/objects/info/alternates
printf 'planted\n' > .git/info/planted
printf '../../elsewhere\n' > .git/commondir
sleep 1
`), 0o644)
	a := run(who, "long.sh")
	failedNaming(a, ".git/config", ".git/objects/info/alternates", ".git/info/planted", ".git/commondir")
	if got := read(config); got != before {
		t.Errorf(".git/config was not put back:\n%s", got)
	}
	for _, f := range []string{".git/objects/info/alternates", ".git/info/planted", ".git/commondir"} {
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s is still there", f)
		}
	}

	// A writer the action left behind, in its own session with an empty
	// environment, writes after the action's command exited.
	pidFile := filepath.Join(root, "writer.pid")
	os.WriteFile(filepath.Join(root, "leave.sh"), []byte(`setsid env -i /bin/sh -c 'echo $$ > writer.pid; sleep 0.5; printf "[core]\n\tfsmonitor = ./evil.sh\n" >> .git/config' </dev/null >/dev/null 2>&1 &
sleep 0.2 # past its setsid: the command's group is killed when it returns
exit 0
`), 0o644)
	a = run(who, "leave.sh")
	failedNaming(a, ".git/config")
	if got := read(config); got != before {
		t.Errorf("the left-behind writer's .git/config was not put back:\n%s", got)
	}
	if got := read(config); strings.Contains(got, "fsmonitor") {
		t.Errorf("the next action starts from the left-behind rewrite:\n%s", got)
	}

	// One that would write later is stopped once the action is over.
	os.Remove(pidFile)
	os.WriteFile(filepath.Join(root, "late.sh"), []byte(`setsid env -i /bin/sh -c 'echo $$ > writer.pid; sleep 30; printf "[core]\n\tfsmonitor = ./evil.sh\n" >> .git/config' </dev/null >/dev/null 2>&1 &
sleep 0.2
exit 0
`), 0o644)
	start := time.Now()
	a = run(who, "late.sh")
	if a["status"] != "executed" {
		t.Errorf("an action whose left-behind process was stopped before it wrote: %v %v", a["status"], a["result"])
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(read(pidFile))); err != nil {
		t.Errorf("the left-behind process wrote no pid: %v", err)
	} else if syscall.Kill(pid, 0) == nil {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("the left-behind process %d still runs after its action settled (%s)", pid, time.Since(start))
		}
	}

	// The folder a gitfile points to (git init --separate-git-dir).
	sep, who2 := project("gitfile", "--separate-git-dir=.gitstore")
	if !strings.HasPrefix(read(filepath.Join(sep, ".git")), "gitdir:") {
		t.Fatalf(".git is not a gitfile: %q", read(filepath.Join(sep, ".git")))
	}
	storeConfig := filepath.Join(sep, ".gitstore", "config")
	beforeStore := read(storeConfig)
	os.WriteFile(filepath.Join(sep, "store.sh"), []byte(`printf '[core]\n\thooksPath = ./evil\n' >> .gitstore/config
printf '#!/bin/sh\n' > .gitstore/hooks/pre-commit
`), 0o644)
	a = run(who2, "store.sh")
	failedNaming(a, ".gitstore/config", ".gitstore/hooks/pre-commit")
	if got := read(storeConfig); got != beforeStore {
		t.Errorf("the gitfile's folder's config was not put back:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(sep, ".gitstore", "hooks", "pre-commit")); err == nil {
		t.Error("the hook planted in the gitfile's folder is still there")
	}
}

// TestALongActionsConfigRewriteRunsNothingInAConcurrentPreview is issue
// 22's race through the real `brabo serve` (--no-sandbox, where a
// command can write .git: a hook agent's own commands can too): a long
// approved terminal action plants a clean filter in .git/config and
// `* filter=x` in .gitattributes, and while it still runs another
// agent proposes a git_commit, whose card is built from the rewritten
// repository. The planted program runs with plain git, never for the
// card; when the long action ends, the integrity check puts .git/config
// back and fails the action naming it; the git_commit approved after
// commits without running it.
func TestALongActionsConfigRewriteRunsNothingInAConcurrentPreview(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	srv := startServe(t, t.TempDir(), "--no-sandbox")
	root := filepath.Join(t.TempDir(), "race")
	os.MkdirAll(root, 0o755)
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q", "--initial-branch=main")
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# race\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(sh)"], "ask": ["GitCommit()"]}`), 0o644)
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "initial")
	id := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "race", "mode": "local", "root": root}, 201)["id"].(string)
	runner := srv.must(t, "POST", "/v1/projects/"+id+"/agents", srv.token, map[string]any{"name": "runner"}, 201)["token"].(string)
	coder := srv.must(t, "POST", "/v1/projects/"+id+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)

	marker := filepath.Join(t.TempDir(), "ran")
	os.WriteFile(filepath.Join(root, "planted.sh"), []byte("#!/bin/sh\necho ran >> '"+marker+"'\ncat\n"), 0o755)
	config := filepath.Join(root, ".git", "config")
	before, _ := os.ReadFile(config)
	os.WriteFile(filepath.Join(root, "long.sh"), []byte(`printf '[filter "x"]\n\tclean = %s/planted.sh\n' "$PWD" >> .git/config
printf '* filter=x\n' > .gitattributes
printf '# race, changed\n' > README.md
touch ready
i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
`), 0o644)
	long := make(chan map[string]any, 1)
	go func() {
		_, a, _ := srv.call("POST", "/v1/projects/"+id+"/actions", runner,
			map[string]any{"type": "terminal", "payload": map[string]any{"command": "sh long.sh", "timeoutSec": 60}})
		long <- a
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
			break
		}
		if i > 600 {
			t.Fatal("the long action did not start in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	plain := exec.Command("git", "diff", "--quiet", "HEAD")
	plain.Dir = root
	plain.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plant does not work with plain git, so the test proves nothing: %v", err)
	}
	os.Remove(marker)

	commit := srv.must(t, "POST", "/v1/projects/"+id+"/actions", coder,
		map[string]any{"type": "git_commit", "payload": map[string]any{"message": "during the race"}}, 201)
	if commit["status"] != "pending" {
		t.Fatalf("the git_commit was %v: %v", commit["status"], commit["reason"])
	}
	if pv, _ := commit["preview"].(map[string]any); pv == nil || pv["stat"] == nil {
		t.Errorf("the card shows no stat: %v", commit["preview"])
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the planted program ran for the card built while the long action ran")
	}
	os.WriteFile(filepath.Join(root, "go"), nil, 0o644)
	var a map[string]any
	select {
	case a = <-long:
	case <-time.After(60 * time.Second):
		t.Fatal("the long action did not end")
	}
	if a["status"] == "pending" || a["status"] == "approved" || a["status"] == "auto_approved" {
		a = srv.must(t, "GET", "/v1/actions/"+a["id"].(string)+"?wait=30", srv.token, nil, 200)
	}
	res, _ := a["result"].(map[string]any)
	msg, _ := res["error"].(string)
	if a["status"] != "failed" || !strings.Contains(msg, "integrity:") || !strings.Contains(msg, ".git/config") {
		t.Fatalf("the long action ended %v, want failed by the integrity check naming .git/config: %v", a["status"], res)
	}
	if now, _ := os.ReadFile(config); string(now) != string(before) {
		t.Errorf(".git/config was not put back:\n%s", now)
	}
	done := srv.must(t, "POST", "/v1/actions/"+commit["id"].(string)+"/approve", srv.token, nil, 200)["action"].(map[string]any)
	if done["status"] != "executed" {
		t.Errorf("the git_commit approved after the restore: %v %v", done["status"], done["result"])
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the planted program ran for the approved git_commit")
	}
}
