package procs_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procs"
)

// start runs a shell script in a session of its own with env added, through
// procs.Start, and stops whatever is left of it at the end of the test.
func start(t *testing.T, script string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := procs.Start(cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { procs.Wait(cmd); close(done) }()
	t.Cleanup(func() {
		for _, kv := range env {
			if id, ok := strings.CutPrefix(kv, procs.EnvName+"="); ok {
				procs.Stop(context.Background(), procs.Target{ActionID: id, PGID: cmd.Process.Pid}, 0)
			}
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd
}

// waitFor polls until cond holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func count(t *testing.T, target procs.Target) int {
	t.Helper()
	list, err := procs.Find(target)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestStopFindsEscapedDescendants: the processes of an action that left
// its process group (setsid) or its parent (a double fork) are found by
// their BRABO_ACTION_ID and stopped, TERM first; another action's
// processes are left alone.
func TestStopFindsEscapedDescendants(t *testing.T) {
	const mine, other = "act_procs_mine", "act_procs_other"
	since := procs.NowTicks() - 1
	start(t, `setsid sh -c 'sleep 300' & (sleep 300 &); trap 'exit 0' TERM; sleep 300 & wait`, procs.EnvName+"="+mine)
	start(t, `sleep 300`, procs.EnvName+"="+other)
	// bash, the setsid sh and its sleep, the orphaned sleep, the last sleep.
	waitFor(t, "the action's five processes", func() bool { return count(t, procs.Target{ActionID: mine}) >= 5 })
	waitFor(t, "the other action's process", func() bool { return count(t, procs.Target{ActionID: other}) == 1 })

	// A process started before the action began is none of its own.
	if n := count(t, procs.Target{ActionID: mine, Since: procs.NowTicks() + 100}); n != 0 {
		t.Fatalf("processes started before Since were counted: %d", n)
	}
	n, err := procs.Stop(context.Background(), procs.Target{ActionID: mine, Since: since}, 2*time.Second)
	if err != nil || n < 5 {
		t.Fatalf("Stop signalled %d processes, %v; want at least 5", n, err)
	}
	if left := count(t, procs.Target{ActionID: mine}); left != 0 {
		t.Errorf("%d processes of the action are still alive", left)
	}
	if count(t, procs.Target{ActionID: other}) != 1 {
		t.Error("Stop killed another action's process")
	}
}

// TestARecycledGroupIsNotTheAction: a process group counts only while its
// leader is the one recorded (same start time) or gone.
func TestARecycledGroupIsNotTheAction(t *testing.T) {
	cmd := start(t, `sleep 300`)
	pid := cmd.Process.Pid
	waitFor(t, "the sleep", func() bool { return procs.StartTicks(pid) != 0 })
	real := procs.StartTicks(pid)
	if n := count(t, procs.Target{PGID: pid, LeaderStart: real + 1}); n != 0 {
		t.Fatalf("a group whose leader started at another time was taken for the action's: %d", n)
	}
	if n := count(t, procs.Target{PGID: pid, LeaderStart: real}); n != 1 {
		t.Fatalf("the recorded group: %d processes, want 1", n)
	}
	if _, err := procs.Stop(context.Background(), procs.Target{PGID: pid, LeaderStart: real + 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("Stop of a recycled group killed the unrelated process: %v", err)
	}
}

// TestSubreaperReapsOrphansAndLeavesStartedChildren: as a subreaper the
// process inherits the orphans of its commands and reaps them, while the
// children it started through Start keep their exit status for Wait.
func TestSubreaperReapsOrphansAndLeavesStartedChildren(t *testing.T) {
	if err := procs.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command("sh", "-c", "(sleep 0.5 &); exit "+strconv.Itoa(i%3))
			err := procs.Run(cmd)
			if code := cmd.ProcessState.ExitCode(); code != i%3 {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a started child lost its exit status to the reaper: %v", err)
	}
	self := os.Getpid()
	children := func() (alive, zombies int) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if st, err := procs.ReadStat(pid); err == nil && st.PPID == self {
				if st.Gone() {
					zombies++
				} else {
					alive++
				}
			}
		}
		return alive, zombies
	}
	// Every started child was waited for: the children left are the
	// orphans, inherited because this process is a subreaper.
	if alive, _ := children(); alive == 0 {
		t.Fatal("no orphan was inherited: the process is not a subreaper")
	}
	waitFor(t, "the orphans to exit and be reaped", func() bool {
		alive, zombies := children()
		return alive == 0 && zombies == 0
	})
}

func TestHostAlive(t *testing.T) {
	h := &procs.Host{}
	self := h.Self()
	if self.Host == "" || self.BootID == "" || self.PID != os.Getpid() || self.PIDStart == 0 {
		t.Fatalf("Self = %+v", self)
	}
	now := time.Now()
	past := now.Add(-time.Hour)
	for _, tc := range []struct {
		what string
		in   brabo.Instance
		want bool
	}{
		{"this process, its lease long gone", brabo.Instance{Host: self.Host, BootID: self.BootID, PID: self.PID, PIDStart: self.PIDStart, LeaseUntil: past}, true},
		{"a recycled pid", brabo.Instance{Host: self.Host, BootID: self.BootID, PID: self.PID, PIDStart: self.PIDStart + 1, LeaseUntil: now.Add(time.Hour)}, false},
		{"a previous boot", brabo.Instance{Host: self.Host, BootID: "another-boot", PID: self.PID, PIDStart: self.PIDStart, LeaseUntil: now.Add(time.Hour)}, false},
		{"another host within its lease", brabo.Instance{Host: self.Host + "-other", BootID: "b", PID: 1, LeaseUntil: now.Add(time.Minute)}, true},
		{"another host past its lease", brabo.Instance{Host: self.Host + "-other", BootID: "b", PID: 1, LeaseUntil: past}, false},
	} {
		if got := h.Alive(&tc.in, now); got != tc.want {
			t.Errorf("%s: Alive = %v, want %v", tc.what, got, tc.want)
		}
	}
	// A record of another host is never acted on here.
	n, err := h.StopAction(context.Background(), &brabo.RunningAction{ActionID: "act_x", Host: self.Host + "-other", BootID: self.BootID, PGID: self.PID}, 0)
	if n != 0 || err != nil {
		t.Errorf("StopAction of another host's record: %d, %v", n, err)
	}
}

// BenchmarkFind is one scan of /proc for an action's processes, as the
// executor makes at the end of every action (Since leaves out the
// environment of the processes started before it).
func BenchmarkFind(b *testing.B) {
	since := procs.NowTicks()
	for i := 0; i < b.N; i++ {
		procs.Find(procs.Target{ActionID: "act_bench", Since: since})
	}
}
