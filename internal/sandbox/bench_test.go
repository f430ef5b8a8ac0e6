package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkTrue is one sandboxed `true`, Landlock inside, as the executor
// runs it (Prepared.Start); BenchmarkTrueHelper the same through the root
// helper process (Apply alone); BenchmarkTrueNoLandlock without the
// launcher inside, and BenchmarkBwrapOnly bwrap with the same arguments
// and no helper: what each layer costs. The helper and the launcher are
// this test binary, which links little more than brabo-sandbox.
func BenchmarkTrue(b *testing.B) {
	benchTrue(b, &Sandbox{Helper: testArgs0}, true)
}

func BenchmarkTrueHelper(b *testing.B) {
	benchTrue(b, &Sandbox{Helper: testArgs0}, false)
}

func BenchmarkTrueNoLandlock(b *testing.B) {
	benchTrue(b, &Sandbox{Helper: testArgs0, NoLandlock: true}, true)
}

func benchTrue(b *testing.B, sb *Sandbox, start bool) {
	root := b.TempDir()
	for i := 0; i < b.N; i++ {
		p, err := sb.Prepare(Spec{Root: root, Env: []string{"PATH=/usr/bin:/bin"}}, []string{"true"})
		if err != nil {
			b.Fatal(err)
		}
		cmd := &exec.Cmd{}
		p.Apply(cmd)
		var out []byte
		if start {
			out, err = p.output(cmd)
		} else {
			out, err = procsOutput(cmd)
			p.Started()
		}
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
