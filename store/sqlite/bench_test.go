package sqlite

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/cputime"
	"github.com/brabo-dev/brabo/store/storetest"
)

// BenchmarkBareInsert is the floor the pipeline is measured against: 16
// concurrent clients, one single-row INSERT per transaction, on a database
// opened exactly as the store opens it.
func BenchmarkBareInsert(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE bench (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start, cpu := time.Now(), cputime.Used()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tx, err := s.write.BeginTx(ctx, nil)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO bench (payload) VALUES ($1)`, "pnpm test"); err != nil {
				b.Error(err)
				tx.Rollback()
				return
			}
			if err := tx.Commit(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "inserts/s")
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-us/op")
}

// BenchmarkLeaseRenewal: one renewal of n agents' leases, per agent and
// in bulk (storetest.BenchLeaseRenewal, BRABO_BENCH_LEASES).
func BenchmarkLeaseRenewal(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "brabo.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchLeaseRenewal(b, s)
}
