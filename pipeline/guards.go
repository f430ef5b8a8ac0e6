package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Limits and guards of the pipeline: one agent cannot flood the
// queue, one project cannot run unbounded commands at once, a project
// folder that resolves into a system folder never runs anything, and a
// write of permissions.json is checked like PUT …/permissions.

const (
	// DefaultMaxPending is how many pending actions one agent may have
	// when Service.MaxPending is 0.
	DefaultMaxPending = 100
	// DefaultMaxRunning is how many commands one project runs at once
	// when Service.MaxRunning is 0; the next ones wait their turn.
	DefaultMaxRunning = 4
)

func limit(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// checkPending refuses, inside the proposal's transaction, a pending
// action of an agent that already has MaxPending: 429 too_many_pending,
// naming the limit, and nothing is written. Humans proposing are not
// counted: the limit is against an agent flooding the queue.
func (s *Service) checkPending(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, agent *brabo.Agent) error {
	if agent == nil || a.Status != brabo.StatusPending {
		return nil
	}
	max := limit(s.MaxPending, DefaultMaxPending)
	n, err := tx.PendingOfAgent(ctx, agent.ID)
	if err != nil {
		return err
	}
	if n >= max {
		return brabo.Errorf(brabo.CodeTooManyPending, "agent %s has %d pending actions, the limit per agent (%d, brabo serve --max-pending): a human must decide some before it proposes more",
			agent.Name, n, max)
	}
	return nil
}

// runsCommands says which types start processes, and so take one of their
// project's running slots: a terminal command and brabo's git steps. A
// file write does not wait behind four long commands.
func runsCommands(t brabo.ActionType) bool {
	switch t {
	case brabo.Terminal, brabo.GitCommit, brabo.GitPush, brabo.GitBranchCreate, brabo.GitMerge, brabo.PrOpen:
		return true
	}
	return false
}

// slots are the running slots of each project: a buffered channel per
// project, MaxRunning deep.
type slots struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// acquire waits for one of the project's running slots: past MaxRunning
// commands the next ones are queued, not refused. A caller that goes away
// while queued gets an error saying so (its action then fails).
func (s *Service) acquire(ctx context.Context, a *brabo.ProposedAction) (release func(), err error) {
	if !runsCommands(a.Type) {
		return func() {}, nil
	}
	max := limit(s.MaxRunning, DefaultMaxRunning)
	s.cmdSlots.mu.Lock()
	if s.cmdSlots.m == nil {
		s.cmdSlots.m = map[string]chan struct{}{}
	}
	sem, ok := s.cmdSlots.m[a.ProjectID]
	if !ok {
		sem = make(chan struct{}, max)
		s.cmdSlots.m[a.ProjectID] = sem
	}
	s.cmdSlots.mu.Unlock()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
	}
	s.log().Info("action queued: its project runs as many commands as it may", "action", a.ID, "project", a.ProjectID, "limit", cap(sem))
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("not run: its caller went away while it waited for one of the %d commands its project may run at once (brabo serve --max-running): %w", cap(sem), ctx.Err())
	}
}

// checkResolvedRoot refuses to run anything in a project folder that,
// with its symlinks resolved now, is or lies in a system folder: the
// folder was checked when the project was created, but a symlink in its
// path may have been pointed elsewhere since. A folder that does not
// resolve is left to the executor, which names what is missing.
func checkResolvedRoot(root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil || real == root {
		return nil
	}
	if err := policy.CheckRoot(real); err != nil {
		return fmt.Errorf("scope: the project folder resolves through a symlink to %s: %w", real, err)
	}
	return nil
}

// checkPermissionsWrite validates, when a write_file would replace the
// permissions.json brabo decides with (at the scope root, also through a
// symlinked folder), its content as PUT …/permissions does: an invalid
// file is refused with invalid_permissions before anything is written, so
// no approval can install a file brabo would then refuse to decide with.
func checkPermissionsWrite(root string, p brabo.Payload) error {
	if !writesPermissions(root, p.Path) {
		return nil
	}
	if len(bytes.TrimSpace([]byte(p.Content))) == 0 {
		return brabo.Errorf(brabo.CodeInvalidPermissions, "permissions.json: the content is empty; write {} to empty the file")
	}
	if len(p.Content) > MaxPermissionsBytes {
		return brabo.Errorf(brabo.CodeInvalidPermissions, "permissions.json: the content is over %d bytes", MaxPermissionsBytes)
	}
	if _, err := policy.Parse("permissions.json", []byte(p.Content)); err != nil {
		var fe *policy.FileError
		if errors.As(err, &fe) {
			return fe
		}
		return brabo.Errorf(brabo.CodeInvalidPermissions, "permissions.json: %s", err.Error())
	}
	return nil
}

// writesPermissions reports whether path (relative to root, or absolute)
// names root's permissions.json: its folder is the root lexically or once
// both are resolved. The name is compared without case, as a
// case-insensitive disk would.
func writesPermissions(root, path string) bool {
	if path == "" || !strings.EqualFold(filepath.Base(path), "permissions.json") {
		return false
	}
	abs := filepath.Join(root, path)
	if filepath.IsAbs(path) {
		abs = filepath.Clean(path)
	}
	dir := filepath.Dir(abs)
	if dir == filepath.Clean(root) {
		return true
	}
	rd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	rr, err := filepath.EvalSymlinks(root)
	return err == nil && rd == rr
}
