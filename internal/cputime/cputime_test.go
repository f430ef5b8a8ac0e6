package cputime

import (
	"testing"
	"time"
)

// TestUsedGrowsWithWork: spinning for 50 ms of wall time must show at
// least some of it as CPU, and PerOp divides it.
func TestUsedGrowsWithWork(t *testing.T) {
	start := Used()
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	if got := Used() - start; got < 10*time.Millisecond {
		t.Fatalf("50 ms of spinning (%d turns) counted %v of CPU", x, got)
	}
	if per := PerOp(start, 10); per < 1000 {
		t.Fatalf("PerOp over 10 ops = %.0f µs, want ≥ 1,000", per)
	}
	if PerOp(start, 0) != 0 {
		t.Fatal("PerOp over 0 ops is not 0")
	}
}
