package app

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
)

// slimSandbox is the name of the slim binary on a sandboxed command's
// path (cmd/brabo-sandbox), looked for beside brabo's own.
const slimSandbox = "brabo-sandbox"

// sandboxBin is the program brabo starts on every sandboxed command's
// path — the sandbox's root helper, the Landlock launcher, the egress
// forwarder — (pickSandboxBinary): path, and why, when a brabo-sandbox
// lies beside brabo's binary, it was passed over; err when brabo's own
// binary cannot be found.
type sandboxBin struct {
	path, why string
	err       error
}

// sandboxBinary decides the sandboxBin once per process.
var sandboxBinary = sync.OnceValue(func() sandboxBin {
	self, err := os.Executable()
	if err != nil {
		return sandboxBin{err: err}
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	path, why := pickSandboxBinary(self)
	return sandboxBin{path: path, why: why}
})

// pickSandboxBinary returns brabo-sandbox beside self when it is a
// regular, executable file of the same build as self (sameBuild, read
// from the files, without running them), else self, which does the same,
// slower: its package initialisation costs tens of milliseconds on a busy
// machine (docs/PERFORMANCE.md). why is set when a brabo-sandbox is there
// but not used.
func pickSandboxBinary(self string) (path, why string) {
	slim := filepath.Join(filepath.Dir(self), slimSandbox)
	fi, err := os.Stat(slim)
	if err != nil {
		return self, ""
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return self, slim + " is not an executable file"
	}
	if err := sameBuild(self, slim); err != nil {
		return self, err.Error()
	}
	return slim, ""
}

// sameBuild reports (nil) whether the Go binaries a and b were built from
// the same module version, VCS revision and toolchain: a brabo-sandbox
// left from another version of brabo may not speak this one's arguments,
// or confine less, so it is passed over rather than trusted. A build with
// neither a version nor a revision (go build -buildvcs=false in a
// checkout) cannot be told apart from another such build; like the slim
// brabo-hook, brabo-sandbox is then trusted to be installed with brabo
// (README: go install ./cmd/brabo ./cmd/brabo-hook ./cmd/brabo-sandbox ./cmd/brabo-check).
func sameBuild(a, b string) error {
	ia, err := buildinfo.ReadFile(a)
	if err != nil {
		return fmt.Errorf("reading the build of %s: %w", a, err)
	}
	ib, err := buildinfo.ReadFile(b)
	if err != nil {
		return fmt.Errorf("reading the build of %s: %w", b, err)
	}
	ka, kb := buildKey(ia), buildKey(ib)
	if ka != kb {
		return fmt.Errorf("%s is of another build (%s) than %s (%s)", b, kb, a, ka)
	}
	return nil
}

// buildKey is what two builds of brabo must share to speak the same
// hidden subcommands.
func buildKey(bi *debug.BuildInfo) string {
	setting := func(k string) string {
		for _, s := range bi.Settings {
			if s.Key == k {
				return s.Value
			}
		}
		return ""
	}
	return fmt.Sprintf("%s %s %s revision=%q modified=%q time=%q", bi.GoVersion, bi.Main.Path, bi.Main.Version,
		setting("vcs.revision"), setting("vcs.modified"), setting("vcs.time"))
}
