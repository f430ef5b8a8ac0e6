package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/sqlstore"
)

// A ViewLatest that shares a batch with a write whose commit then fails
// answers that failure, not what it read: what it read held the write the
// failed commit undid. The commit is made to fail by a foreign key
// checked at COMMIT (defer_foreign_keys), the batch run by runBatch as
// the writer runs it, with the read sent as ViewLatest sends it.
func TestViewLatestAnswersItsBatchsFailedCommit(t *testing.T) {
	old := checkpointPeriod
	checkpointPeriod = time.Hour // no WAL restart on the write connection meanwhile
	defer func() { checkpointPeriod = old }()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &brabo.Member{ID: "mem_1", Name: "ana", TokenHash: "h"}
	if err := s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateMember(ctx, m) }); err != nil {
		t.Fatal(err)
	}

	// The batch: a write that breaks a foreign key (a role in a project
	// that does not exist), then a read that sees it.
	q := sqlstore.NewWriteQueue(ErrClosed)
	wrote, read := make(chan error, 1), make(chan error, 1)
	var role brabo.Role
	go func() {
		wrote <- q.Update(ctx, func(tx brabo.Tx) error {
			return tx.SetRole(ctx, brabo.Membership{ProjectID: "prj_ghost", MemberID: m.ID, Role: brabo.Owner})
		})
	}()
	waitQueued := func(batch []*sqlstore.WriteReq, n int) []*sqlstore.WriteReq {
		for len(batch) < n {
			more, _, _ := q.Next(64)
			batch = append(batch, more...)
		}
		return batch
	}
	batch := waitQueued(nil, 1)
	go func() {
		read <- q.View(ctx, func(tx brabo.Tx) error {
			var err error
			role, err = tx.Role(ctx, "prj_ghost", m.ID)
			return err
		})
	}()
	batch = waitQueued(batch, 2)
	if _, err := s.write.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
		t.Fatal(err)
	}
	s.runBatch(batch)

	if err := <-wrote; err == nil {
		t.Fatal("the write that broke a foreign key committed")
	}
	err = <-read
	if err == nil {
		t.Fatalf("the read answered role %q and no error, from a batch whose commit failed", role)
	}
	if !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("the read answered %v, want the batch's failed commit", err)
	}
}
