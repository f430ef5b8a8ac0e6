package cputime

import (
	"testing"
	"time"
)

// TestUsedGrowsWithWork: spinning shows as CPU, whatever else the machine
// runs: the test spins until Used has grown by 10 ms (a slow or busy
// machine only takes longer; the bound ends a Used that never grows), and
// PerOp divides what it measured.
func TestUsedGrowsWithWork(t *testing.T) {
	start := Used()
	x := 0
	for deadline := time.Now().Add(30 * time.Second); Used()-start < 10*time.Millisecond; {
		for range 100_000 {
			x++
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s of spinning (%d turns) counted %v of CPU", x, Used()-start)
		}
	}
	if per := PerOp(start, 10); per < 1000 {
		t.Fatalf("PerOp over 10 ops = %.0f µs after 10 ms of CPU, want ≥ 1,000", per)
	}
	if PerOp(start, 0) != 0 {
		t.Fatal("PerOp over 0 ops is not 0")
	}
}
