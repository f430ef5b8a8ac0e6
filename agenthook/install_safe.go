package agenthook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo/internal/progfind"
)

// lockInstalls takes the installs' lock, ConfigDir()/.install.lock, so
// that installs run one at a time (they share the hook configurations, a
// --user configuration's projects, Codex's user config.toml); it waits
// for another install until ctx ends.
func lockInstalls(ctx context.Context) (unlock func(), err error) {
	dir, err := ConfigDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the hooks' folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the installs' lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("the installs' lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("another brabo install holds %s: %w", f.Name(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// snapshot is the files an install may write, as they were before it.
type snapshot []savedFile

type savedFile struct {
	path   string
	data   []byte
	mode   os.FileMode
	exists bool
}

func takeSnapshot(paths []string) (snapshot, error) {
	var s snapshot
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		f := savedFile{path: p}
		fi, err := os.Stat(p)
		switch {
		case err == nil:
			if f.data, err = os.ReadFile(p); err != nil {
				return nil, err
			}
			f.mode, f.exists = fi.Mode().Perm(), true
		case !os.IsNotExist(err):
			return nil, err
		}
		s = append(s, f)
	}
	return s, nil
}

// restore puts every file back as it was.
func (s snapshot) restore() error {
	var errs []error
	for _, f := range s {
		var err error
		if f.exists {
			err = writeAtomic(f.path, f.data, f.mode)
		} else if rerr := os.Remove(f.path); rerr != nil && !os.IsNotExist(rerr) {
			err = rerr
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.path, err))
		}
	}
	return errors.Join(errs...)
}

// checkBlock refuses a file whose brabo block setBlock could not replace.
func checkBlock(path string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	text := string(b)
	if i := strings.Index(text, codexBegin); i >= 0 && !strings.Contains(text[i:], codexEnd) {
		return fmt.Errorf("%s: brabo's block has no end line %q; fix the file and run brabo install again", path, codexEnd)
	}
	return nil
}

// codexBinary is the codex that reports the hooks' trust hashes.
func codexBinary(o InstallOptions) (string, error) { return CodexBinary(o.Codex, o.Root) }

// ErrNoCodex is CodexBinary's answer when no codex is on PATH outside the
// folders an agent can write.
var ErrNoCodex = errors.New("codex is not on PATH (outside the project and the temp folders); name it with --codex")

// CodexBinary returns the codex binary brabo starts on the user's behalf
// (install's listing of the hooks, import's check of each rule): explicit
// when given (--codex), else "codex" looked up in this process's PATH as
// the executor hands it to a command (progfind.SafePATH): without the
// entries an agent could fill, the project folder root, the temp folders
// and relative entries. A codex that an agent wrote, or that an entry it
// writes could shadow, is refused, so brabo never starts one outside the
// sandbox.
func CodexBinary(explicit, root string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("--codex: %w", err)
		}
		return explicit, nil
	}
	w := progfind.AgentWritable(root)
	p := progfind.Resolve([]string{"codex"}, progfind.Env{PATH: progfind.SafePATH(os.Getenv("PATH"), w), Cwd: root, Writable: w})["codex"]
	switch {
	case p.Path == "":
		return "", ErrNoCodex
	case p.Writable:
		return "", fmt.Errorf("codex on PATH is %s, in a folder an agent can write: brabo does not start it; name the codex to use with --codex", p.Path)
	}
	return p.Path, nil
}
