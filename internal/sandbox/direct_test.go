package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestStartSetsUpTheSandboxInAThreadOfItsOwn: under root, Start starts
// bwrap itself (no helper process) as the sandbox's uid, with
// no_new_privs and no capability, and the mounts it made for the command
// (the idmapped scope root, the staging tmpfs over /tmp) are in no mount
// namespace of this process or of the host's, even with several commands
// started at once; files this process writes in /tmp meanwhile stay on
// the host.
func TestStartSetsUpTheSandboxInAThreadOfItsOwn(t *testing.T) {
	sb := need(t)
	if os.Geteuid() != 0 {
		t.Skip("Start differs from the helper only under root") // not a missing part: CI runs as root
	}
	root := project(t)
	p, cmd := prepare(t, sb, Spec{Root: root}, "grep -E '^(NoNewPrivs|CapEff|Uid)' /proc/self/status")
	out, err := p.output(cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	bw, _ := exec.LookPath("bwrap")
	if cmd.Path != bw || cmd.SysProcAttr.Credential == nil || cmd.SysProcAttr.Credential.Uid != DefaultUID {
		t.Errorf("Start started %s as %+v; want bwrap as %d", cmd.Path, cmd.SysProcAttr.Credential, DefaultUID)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("inside, want %q:\n%s", want, out)
		}
	}
	var wg sync.WaitGroup
	outs := make([]string, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = run(t, sb, Spec{Root: root}, "echo x > made"+string(rune('a'+i))+" && echo wrote")
		}()
	}
	host := t.TempDir()
	for i := 0; i < 50; i++ {
		f := filepath.Join(host, "f")
		if err := os.WriteFile(f, []byte("h"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("cat", f).Output(); err != nil || string(b) != "h" {
			t.Fatalf("a file this process wrote in %s is not on the host: %q %v", host, b, err)
		}
	}
	wg.Wait()
	for i, o := range outs {
		if !strings.Contains(o, "wrote") {
			t.Errorf("command %d, started beside the others:\n%s", i, o)
		}
	}
	for _, mi := range []string{"/proc/self/mountinfo", "/proc/1/mountinfo"} {
		b, err := os.ReadFile(mi)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), root) {
			t.Errorf("%s shows a mount of the sandbox's scope root:\n%s", mi, b)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(root, "madea"), &st); err != nil || st.Uid != 0 {
		t.Errorf("the file the command wrote: %v, owner %d; want root's, the scope root's owner", err, st.Uid)
	}
}

// TestStartRefusesAParentDeathSignal: bwrap is forked from the setup
// thread, so a parent-death signal would follow that thread, not the
// caller's.
func TestStartRefusesAParentDeathSignal(t *testing.T) {
	sb := need(t)
	if os.Geteuid() != 0 {
		t.Skip("Start differs from the helper only under root") // not a missing part: CI runs as root
	}
	p, cmd := prepare(t, sb, Spec{Root: project(t)}, "true")
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if _, err := p.output(cmd); err == nil || !strings.Contains(err.Error(), "parent-death") {
		t.Errorf("want the refusal, got %v", err)
	}
}

// TestStartKeepsBwrapsParentAlive: the commands Start starts, from a
// thread that then waits for them, run to their end.
func TestStartKeepsBwrapsParentAlive(t *testing.T) {
	sb := need(t)
	root := project(t)
	for i := 0; i < 8; i++ {
		if out := run(t, sb, Spec{Root: root}, "sleep 0.1; echo done"); !strings.Contains(out, "done") {
			t.Fatalf("run %d did not finish:\n%s", i, out)
		}
	}
}
