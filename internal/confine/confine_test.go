package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary be the launcher, as brabo's main does.
func TestMain(m *testing.M) {
	if IsLauncher(os.Args) {
		Main(os.Args)
	}
	os.Exit(m.Run())
}

func TestArgsRoundTrip(t *testing.T) {
	s := Spec{Write: []string{"/w/one", "/w/two"}, Hide: []string{"/data"}}
	args := s.Args("bash", "-c", "echo -- -w")
	got, argv, err := parse(args[1:])
	if err != nil || !slices.Equal(got.Write, s.Write) || !slices.Equal(got.Hide, s.Hide) ||
		!slices.Equal(argv, []string{"bash", "-c", "echo -- -w"}) {
		t.Fatalf("parse(%q) = %+v %q %v", args, got, argv, err)
	}
	for _, bad := range [][]string{{"-w", "relative", "--", "x"}, {"-w", "/a"}, {"--"}, {"-x", "/a", "--", "x"}} {
		if _, _, err := parse(bad); err == nil {
			t.Errorf("parse(%q) accepted", bad)
		}
	}
}

// TestReadableLeavesOutWhatReachesTheHidden: the read rules cover the
// ancestors' other entries, never the hidden folder, an ancestor, or a
// symlink leading to either.
func TestReadableLeavesOutWhatReachesTheHidden(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	data := filepath.Join(base, "lib", "brabo")
	for _, d := range []string{data, filepath.Join(base, "lib", "other"), filepath.Join(base, "proj")} {
		os.MkdirAll(d, 0o755)
	}
	os.Symlink(filepath.Join(base, "lib"), filepath.Join(base, "to-lib"))
	os.Symlink(data, filepath.Join(base, "to-data"))
	os.Symlink(filepath.Join(base, "proj"), filepath.Join(base, "to-proj"))
	got, err := readable([]string{data})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(base, "lib", "other"), filepath.Join(base, "proj"), filepath.Join(base, "to-proj")} {
		if !slices.Contains(got, want) {
			t.Errorf("readable lacks %s", want)
		}
	}
	for _, never := range []string{data, filepath.Join(base, "lib"), base, "/", filepath.Join(base, "to-lib"), filepath.Join(base, "to-data")} {
		if slices.Contains(got, never) {
			t.Errorf("readable holds %s, which reaches the hidden folder", never)
		}
	}
}

// requireLandlock skips a test where the kernel has no Landlock, and fails
// it when BRABO_REQUIRE_LANDLOCK=1 (.ci/run sets it). confinetest.Require
// does the same for other packages; this package's tests cannot import it.
func requireLandlock(t *testing.T) {
	t.Helper()
	if _, err := ABI(); err != nil {
		if os.Getenv("BRABO_REQUIRE_LANDLOCK") == "1" {
			t.Fatalf("the test needs Landlock, and BRABO_REQUIRE_LANDLOCK=1: %v", err)
		}
		t.Skipf("BRABO_REQUIRE_LANDLOCK=1 fails this instead: %v", err)
	}
}

// confined runs a shell script under spec through this test binary as the
// launcher and returns its combined output.
func confined(t *testing.T, spec Spec, script string) string {
	t.Helper()
	requireLandlock(t)
	cmd := exec.Command(os.Args[0], spec.Args("sh", "-c", script)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the confined command failed: %v\n%s", err, out)
	}
	return string(out)
}

// TestConfinedWritesOnlyWhereAllowed: inside the write folder a command
// writes; beside it, in the hidden folder or anywhere else it cannot;
// it reads outside, not in the hidden folder; /dev/null takes writes; and
// it cannot signal its parent.
func TestConfinedWritesOnlyWhereAllowed(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj, sibling, data := filepath.Join(base, "proj"), filepath.Join(base, "sibling"), filepath.Join(base, "data")
	for _, d := range []string{proj, sibling, data} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(data, "secret"), []byte("s3cret"), 0o644)
	os.WriteFile(filepath.Join(sibling, "readme"), []byte("sibling-text"), 0o644)
	try := func(what, cmd string) string {
		return "echo " + what + "=$(" + cmd + " >/dev/null 2>&1 && echo ok || echo denied); "
	}
	out := confined(t, Spec{Write: []string{proj}, Hide: []string{data}},
		try("inside", "echo x > "+proj+"/made")+
			try("sibling", "echo x > "+sibling+"/made")+
			try("data", "echo x > "+data+"/made")+
			try("datadir", "ls "+data)+
			try("readsecret", "cat "+data+"/secret")+
			try("readsibling", "cat "+sibling+"/readme")+
			try("devnull", "echo x > /dev/null")+
			try("signal", "kill -0 "+strconv.Itoa(os.Getpid())))
	want := map[string]string{"inside": "ok", "sibling": "denied", "data": "denied", "datadir": "denied",
		"readsecret": "denied", "readsibling": "ok", "devnull": "ok", "signal": "denied"}
	for k, v := range want {
		if !strings.Contains(out, k+"="+v+"\n") {
			t.Errorf("%s: want %s; output:\n%s", k, v, out)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "made")); err != nil {
		t.Error("the write inside the folder did not happen")
	}
	for _, p := range []string{filepath.Join(sibling, "made"), filepath.Join(data, "made")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// TestLauncherFailsClosed: a launcher that cannot confine (here: a write
// folder that does not exist) runs nothing and exits 126.
func TestLauncherFailsClosed(t *testing.T) {
	requireLandlock(t)
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command(os.Args[0], Spec{Write: []string{"/nonexistent/brabo"}}.Args("sh", "-c", "touch "+marker)...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitCannotConfine || !strings.Contains(string(out), "cannot confine") {
		t.Errorf("exit %v, output %q; want 126 and the reason", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran unconfined")
	}
}
