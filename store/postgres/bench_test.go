package postgres

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/cputime"
	"github.com/brabo-dev/brabo/store/storetest"
)

// BenchmarkBareInsert is the floor the pipeline is measured against: 16
// concurrent clients, one single-row INSERT per transaction, through the
// pool the store uses.
func BenchmarkBareInsert(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, storetest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE bench (id BIGSERIAL PRIMARY KEY, payload TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start, cpu := time.Now(), cputime.Used()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := tx.Exec(ctx, `INSERT INTO bench (payload) VALUES ($1)`, "pnpm test"); err != nil {
				b.Error(err)
				tx.Rollback(ctx)
				return
			}
			if err := tx.Commit(ctx); err != nil {
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
	s, err := Open(context.Background(), storetest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchLeaseRenewal(b, s)
}
