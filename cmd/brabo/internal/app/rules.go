package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
)

// dataHint ends the refusal of a project folder that overlaps the data
// folder: the flag that moves it.
const dataHint = "brabo's database must never be inside an agent's scope: serve with --data set to a folder outside the project folder (the default is $XDG_STATE_HOME/brabo or ~/.local/state/brabo)"

// dataOutsideProjects refuses a data folder inside (or holding) a local
// project's folder: the database would be in the agents' scope. Creating
// a project refuses the same overlap; this catches a --data that moved.
func dataOutsideProjects(ctx context.Context, store brabo.Store, data string) error {
	return store.View(ctx, func(tx brabo.Tx) error {
		ps, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Mode != brabo.ModeLocal || p.Root == "" {
				continue
			}
			root := filepath.Clean(p.Root)
			if within(data, root) || within(root, data) {
				return fmt.Errorf("the data folder %s overlaps the folder of the project %s (%s): %s", data, p.Slug, root, dataHint)
			}
		}
		return nil
	})
}

// within reports whether p is dir or inside it; both clean and absolute.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// migrateClickAutonomy runs before anything is decided: a blanket
// terminal rule an old always-allow click wrote frees every command of its
// agent (pipeline.MigrateClickAutonomy).
func migrateClickAutonomy(ctx context.Context, svc *pipeline.Service, log *slog.Logger) error {
	n, err := svc.MigrateClickAutonomy(ctx)
	if err != nil {
		return fmt.Errorf("migrating click-written autonomy rules: %w", err)
	}
	if n > 0 {
		log.Warn("blanket terminal: auto_approve rules written by always-allow clicks became the agents' own patterns", "count", n)
	}
	return nil
}

// probeDir reports whether path is a directory brabo can write in, by
// creating and removing a file there.
func probeDir(path string) (isDir, writable bool, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !info.IsDir() {
		return false, false, nil
	}
	f, err := os.CreateTemp(path, ".brabo-probe-*")
	if err != nil {
		return true, false, nil
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true, true, nil
}

// sweepAbandoned makes abandoned, every pipeline.SweepEvery until ctx
// ends, the external actions whose hook's deadline passed.
func sweepAbandoned(ctx context.Context, svc *pipeline.Service, log *slog.Logger) {
	t := time.NewTicker(pipeline.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := svc.SweepAbandoned(ctx); err != nil && ctx.Err() == nil {
			log.Warn("sweeping the abandoned waits", "err", err)
		}
	}
}
