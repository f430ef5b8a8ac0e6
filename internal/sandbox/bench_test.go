package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkTrue is one sandboxed `true`, Landlock inside, as the executor
// runs it; BenchmarkTrueNoLandlock without the launcher inside, and
// BenchmarkBwrapOnly bwrap with the same arguments and no helper: what
// each layer costs.
func BenchmarkTrue(b *testing.B) {
	sb := &Sandbox{Helper: testArgs0}
	root := b.TempDir()
	for i := 0; i < b.N; i++ {
		p, err := sb.Prepare(Spec{Root: root, Env: []string{"PATH=/usr/bin:/bin"}}, []string{"true"})
		if err != nil {
			b.Fatal(err)
		}
		cmd := &exec.Cmd{}
		p.Apply(cmd)
		out, err := procsOutput(cmd)
		p.Started()
		if err != nil {
			b.Fatal(err, string(out))
		}
	}
}

func BenchmarkTrueNoLandlock(b *testing.B) {
	sb := &Sandbox{Helper: testArgs0, NoLandlock: true}
	root := b.TempDir()
	for i := 0; i < b.N; i++ {
		p, _ := sb.Prepare(Spec{Root: root, Env: []string{"PATH=/usr/bin:/bin"}}, []string{"true"})
		cmd := &exec.Cmd{}
		p.Apply(cmd)
		out, err := procsOutput(cmd)
		p.Started()
		if err != nil {
			b.Fatal(err, string(out))
		}
	}
}

func BenchmarkBwrapOnly(b *testing.B) {
	root := b.TempDir()
	for i := 0; i < b.N; i++ {
		args, _ := Spec{Root: root}.Args("true")
		cmd := exec.Command("bwrap", args...)
		if out, err := procsOutput(cmd); err != nil {
			b.Fatal(err, string(out))
		}
	}
}
