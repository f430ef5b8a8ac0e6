// Package cputime reads how much CPU the process has used, so that a
// benchmark can report CPU per operation beside its wall-clock rate: on a
// machine with few cores the CPU an operation costs, not its latency, is
// what bounds the rate of many concurrent clients.
package cputime

import (
	"syscall"
	"time"
)

// Used returns the user plus system CPU time the whole process has used
// so far, all threads included. It returns 0 if the kernel does not say.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PerOp is the CPU used since start divided by n, in microseconds: the
// value of a benchmark's "cpu-us/op" metric.
func PerOp(start time.Duration, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(Used()-start) / float64(time.Microsecond) / float64(n)
}
