package executor

import (
	"context"
	"testing"
)

// The retry of a sandbox set-up is for bwrap's own failure to bind a
// protected file that a rename replaced, and for nothing else: any other
// failure, and any output of a command that ran, fails the action once.
func TestRebindRaceIsOnlyBwrapsLostBind(t *testing.T) {
	for _, tc := range []struct {
		name string
		exit int
		out  string
		want bool
	}{
		{"the lost bind", 1, "bwrap: Can't bind mount /oldroot/tmp/3 on /newroot/tmp/x/permissions.json: Unable to mount source on destination: No such file or directory\n", true},
		{"another bwrap failure", 1, "bwrap: Can't bind mount /oldroot/tmp/3 on /newroot/x: Permission denied\n", false},
		{"a set-up failure of another kind", 1, "bwrap: No permissions to create new namespace: No such file or directory\n", false},
		{"another exit code", 2, "bwrap: Can't bind mount /a on /b: No such file or directory\n", false},
		{"output after the line", 1, "bwrap: Can't bind mount /a on /b: No such file or directory\nmore\n", false},
		{"a command's own output", 1, "hello\nbwrap: Can't bind mount /a on /b: No such file or directory\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rebindRace(procOutcome{ExitCode: tc.exit}, tc.out); got != tc.want {
				t.Fatalf("rebindRace(%d, %q) = %v, want %v", tc.exit, tc.out, got, tc.want)
			}
		})
	}
}

// withSetupRetry, the one retry the terminal, a git step and a git query
// start through, starts a command again only while its sandbox lost the
// rename race, at most setupTries times in all, and never a command that
// ran on the host ("" for its head).
func TestWithSetupRetryStartsAgainOnlyALostRace(t *testing.T) {
	lost := "bwrap: Can't bind mount /oldroot/a on /newroot/b: No such file or directory\n"
	for _, tc := range []struct {
		name  string
		heads []string
		want  int
	}{
		{"a lost race, then a run", []string{lost, "ok"}, 2},
		{"lost every time", []string{lost, lost, lost, lost}, setupTries},
		{"a command that ran", []string{"ok"}, 1},
		{"on the host", []string{""}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			oc, err := withSetupRetry(context.Background(), func() (procOutcome, string, error) {
				h := tc.heads[n]
				n++
				if h == lost {
					return procOutcome{ExitCode: 1}, h, nil
				}
				return procOutcome{ExitCode: 0}, h, nil
			})
			if err != nil || n != tc.want {
				t.Fatalf("started %d times (want %d), outcome %+v, error %v", n, tc.want, oc, err)
			}
		})
	}
}
