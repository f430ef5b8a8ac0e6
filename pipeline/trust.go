package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Trusted policy (DESIGN §9). The store, not the file on
// disk, is the source of trust for permissions.json: brabo decides with
// the file on disk when it is a trusted version, or when, compared with
// the current trusted version as compiled pattern sets, it lets nothing
// more through (policy.Compare). A file that loosens, does not parse, or
// cannot be read waits for a maintainer (Accept or Restore), and brabo
// decides with the trusted version meanwhile, so its denies hold.

// stableAfter is how old a file's modification time must be, when brabo
// reads it, for its size, time and identity to stand for its content on
// later decisions. A file written within the clock's granularity of a read
// could change again without moving its time, so it is read again every
// time until it has been still that long ("racily clean", as git says).
const stableAfter = time.Second

// diskFile is one read of a permissions.json.
type diskFile struct {
	info   fs.FileInfo // nil for a missing file
	stable bool
	data   []byte
	hash   string
	rules  *policy.Rules
	err    error // the file's own error (invalid entries)
}

// same reports whether fi (nil: missing) is, by size, time, mode and
// identity, the file d was read from.
func (d *diskFile) same(fi fs.FileInfo) bool {
	if d.info == nil || fi == nil {
		return d.info == nil && fi == nil
	}
	return d.info.Size() == fi.Size() && d.info.ModTime().Equal(fi.ModTime()) &&
		d.info.Mode() == fi.Mode() && os.SameFile(d.info, fi)
}

// readDisk returns the project's permissions.json as it is now: the last
// read when the file's size, time and identity did not move since a read
// of a file that was still, else a new read, hashed and compiled.
func (s *Service) readDisk(path string) (*diskFile, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		return nil, err
	}
	if c, ok := s.diskCache.Load(path); ok && c.(*diskFile).stable && c.(*diskFile).same(fi) {
		return c.(*diskFile), nil
	}
	readAt := time.Now()
	data, info, err := readPermissionsInfo(path)
	if err != nil {
		return nil, err
	}
	d := &diskFile{info: info, data: data, hash: policy.ContentHash(data)}
	d.rules, d.err = policy.Parse("permissions.json", data)
	d.stable = info == nil || readAt.Sub(info.ModTime()) > stableAfter
	s.diskCache.Store(path, d)
	return d, nil
}

// trustedRules compiles a trusted content, by hash: a content is compiled
// once however many projects and decisions use it. The cache is bounded:
// past its size it starts again.
type trustedRules struct {
	mu sync.Mutex
	m  map[string]*policy.Rules
}

const maxTrustedRules = 256

func (c *trustedRules) get(hash string) *policy.Rules {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[hash]
}

func (c *trustedRules) put(hash string, r *policy.Rules) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxTrustedRules {
		c.m = map[string]*policy.Rules{}
	}
	c.m[hash] = r
}

// TrustState is what brabo makes of a project's permissions.json
// (brabo.TrustState).
type TrustState = brabo.TrustState

// trustState is a TrustState with the compiled rules behind it: the
// trusted version's, the file on disk, and the ones decisions use.
type trustState struct {
	brabo.TrustState
	trusted *policy.Rules
	disk    *diskFile
	use     *policy.Rules
	earlier bool // the file on disk is an older accepted version
}

// Trust statuses.
const (
	StatusTrusted = brabo.TrustStatusTrusted
	StatusApplied = brabo.TrustStatusApplied
	StatusHeld    = brabo.TrustStatusHeld
)

// judge compares the project's file on disk with its trusted version and
// says which to decide with. trust is the project's trust row, nil when it
// has none (a project older than trust: the file is trusted now, at its
// first use). With record, what judging implies is written: the first use,
// a switch back to another trusted version, and permissions.changed_on_disk
// the first time a content that is not trusted is seen.
func (s *Service) judge(ctx context.Context, p *brabo.Project, root string, trust *brabo.PermissionsTrust, record bool) (*trustState, error) {
	disk, derr := s.readDisk(permissionsPath(root))
	if trust == nil {
		if derr != nil {
			// Nothing can be trusted from a file that cannot be read: ask
			// for everything, and trust the file when it can be read.
			return &trustState{TrustState: TrustState{Status: StatusHeld, Unreadable: unreadableWhy(derr)},
				use: policy.Unreadable("permissions.json", unreadableWhy(derr))}, nil
		}
		var err error
		if trust, err = s.firstUse(ctx, p, disk); err != nil {
			return nil, err
		}
	}
	st := &trustState{TrustState: TrustState{TrustedHash: trust.Hash}, disk: disk}
	if derr == nil {
		st.DiskHash = disk.hash
		if disk.hash == trust.Hash {
			st.Status, st.Change, st.use, st.DecidedWith = StatusTrusted, policy.Change{Kind: policy.ChangeSame}, disk.rules, disk.hash
			st.trusted = disk.rules
			return st, nil
		}
	}
	var seen *brabo.PermissionsVersion // the file on disk's version row, if any
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if st.trusted, err = s.compiledTrusted(ctx, tx, p.ID, trust.Hash); err != nil {
			return err
		}
		if derr == nil {
			seen, err = tx.PermissionsVersion(ctx, p.ID, disk.hash)
			if errors.Is(err, brabo.ErrNotFound) {
				seen, err = nil, nil
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if derr != nil {
		st.Unreadable = unreadableWhy(derr)
		st.Status, st.use, st.DecidedWith = StatusHeld, st.trusted, trust.Hash
		st.Change = policy.Change{Kind: policy.ChangeInvalid, Invalid: "permissions.json cannot be read: " + st.Unreadable}
		return st, nil
	}
	// An older accepted version is judged like any other content: trust is
	// the latest accepted version, so a file written back
	// to one a later version tightened is a loosening, and waits.
	st.earlier = seen != nil && seen.Trusted
	st.Change = policy.Compare(st.trusted, disk.rules)
	if st.Change.Applies() {
		st.Status, st.use, st.DecidedWith = StatusApplied, disk.rules, disk.hash
	} else {
		st.Status, st.use, st.DecidedWith = StatusHeld, st.trusted, trust.Hash
	}
	if record && (seen == nil || seen.ReportedSeq < trust.Seq) && st.Change.Kind != policy.ChangeSame {
		if err := s.reportChange(ctx, p, st, trust.Seq); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// compiledTrusted returns the compiled content of a trusted version.
func (s *Service) compiledTrusted(ctx context.Context, tx brabo.Tx, projectID, hash string) (*policy.Rules, error) {
	if r := s.trustCache.get(hash); r != nil {
		return r, nil
	}
	v, err := tx.PermissionsVersion(ctx, projectID, hash)
	if err != nil {
		return nil, fmt.Errorf("the trusted permissions.json: %w", err)
	}
	if !v.Trusted {
		return nil, fmt.Errorf("the current permissions.json version %s is not trusted", hash)
	}
	r, _ := policy.Parse("permissions.json", v.Content)
	s.trustCache.put(hash, r)
	return r, nil
}

// firstUse trusts the file on disk of a project made before trust was
// recorded, with an event saying so, and returns the project's trust row
// (another instance's, when it recorded first).
func (s *Service) firstUse(ctx context.Context, p *brabo.Project, disk *diskFile) (*brabo.PermissionsTrust, error) {
	var trust *brabo.PermissionsTrust
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		now := s.now()
		won, err := tx.InitPermissionsTrust(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: disk.hash,
			Content: disk.data, Source: brabo.TrustFirstUse, TrustedAt: now})
		if err != nil {
			return err
		}
		if won {
			if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventPermissionsTrusted,
				ActorID: brabo.SystemActor, CreatedAt: now, Payload: mustJSON(map[string]any{
					"source": brabo.TrustFirstUse, "hash": disk.hash, "valid": disk.err == nil,
					"note": "the project was made before brabo recorded trusted versions: the file on disk at its first use is trusted"})}); err != nil {
				return err
			}
		}
		trust, err = tx.PermissionsTrust(ctx, p.ID)
		return err
	})
	return trust, err
}

// reportChange records permissions.changed_on_disk for a content seen for
// the first time against the current trusted version (seq, its history
// entry), once whichever instance sees it first.
func (s *Service) reportChange(ctx context.Context, p *brabo.Project, st *trustState, seq int64) error {
	return s.Store.Update(ctx, func(tx brabo.Tx) error {
		now := s.now()
		first, err := tx.ReportPermissions(ctx, p.ID, st.DiskHash, seq, now)
		if err != nil || !first {
			return err
		}
		s.log().Warn("permissions.json changed on disk", "project", p.ID, "change", st.Change.Summary(), "status", st.Status)
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventPermissionsChanged,
			ActorID: brabo.SystemActor, CreatedAt: now, Payload: mustJSON(map[string]any{
				"hash": st.DiskHash, "trustedHash": st.TrustedHash, "change": st.Change,
				"applied": st.Status == StatusApplied, "summary": st.Change.Summary(),
				// an older accepted version, not the latest: no longer trusted
				"earlierVersion": st.earlier})})
	})
}

// heldReason is what a decision made with the trusted version, while the
// file on disk waits for a maintainer, adds to its reason.
func heldReason(st *TrustState) string {
	if st.TrustedHash == "" {
		return "" // nothing trusted yet: the reason already says the file cannot be read
	}
	why := "loosens it"
	switch {
	case st.Unreadable != "":
		why = "cannot be read"
	case st.Change.Kind == policy.ChangeInvalid:
		why = "is invalid"
	}
	return fmt.Sprintf(" (decided with the trusted permissions.json: the file on disk %s and waits for a maintainer to accept or restore it)", why)
}

// unreadableWhy is why a file cannot be read, without its absolute path:
// reasons are stored in events every member reads.
func unreadableWhy(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// trustAtCreation records the project's permissions.json as it is now (a
// missing file is the empty file) as its first trusted version, inside the
// transaction that creates the project: a project never has no trusted
// version.
func (s *Service) trustAtCreation(ctx context.Context, tx brabo.Tx, p *brabo.Project, creator string) error {
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return err
	}
	data, err := readPermissions(permissionsPath(scope.Root))
	if err != nil {
		return invalid("permissions.json of the project folder cannot be read: %s", unreadableWhy(err))
	}
	_, err = tx.InitPermissionsTrust(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: policy.ContentHash(data),
		Content: data, Source: brabo.TrustCreated, ActorID: creator, TrustedAt: s.now()})
	return err
}
