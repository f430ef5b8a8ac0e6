package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/brabo-dev/brabo"
)

// runWriteFile writes payload Content to payload Path, relative to the
// root and confined to it (see scope.file), creating missing parent
// directories. The write is atomic: a temporary file in the same directory,
// synced, then renamed over the target, so a reader sees the old content or
// the new one, never a part. An existing file keeps its permission bits; a
// new one gets 0644. A symlink at the target is replaced by the file, never
// written through. Detail: "path" (relative, slash form) and "bytes".
func (e *Executor) runWriteFile(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := req.Action.Payload
	sc, err := newScope(brabo.WriteFile, req.Root)
	if err != nil {
		return nil, err
	}
	tg, err := sc.file("path", p.Path)
	if err != nil {
		return nil, err
	}
	target := filepath.Join(tg.dir, tg.name)
	mode := fs.FileMode(0o644)
	if fi, err := os.Lstat(target); err == nil {
		switch {
		case fi.IsDir():
			return nil, &PayloadError{Type: brabo.WriteFile, Field: "path", Value: p.Path, Reason: "is a directory"}
		case fi.Mode().IsRegular():
			mode = fi.Mode().Perm()
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("write_file: %w", err)
	}
	if moved := checkWrite(req, target); moved != nil {
		return moved, nil // the file moved since the approval (bound.go)
	}
	if err := atomicWrite(tg.dir, tg.name, []byte(p.Content), mode); err != nil {
		return nil, fmt.Errorf("write_file: %s: %w", tg.rel, err)
	}
	n := len(p.Content)
	return &brabo.Result{
		Output: fmt.Sprintf("wrote %d bytes to %s\n", n, tg.rel),
		Detail: map[string]string{"path": tg.rel, "bytes": strconv.Itoa(n)},
	}, nil
}

// atomicWrite writes data to dir/name through a temporary file in dir and a
// rename; on any failure the temporary file is removed and the target is
// untouched.
func atomicWrite(dir, name string, data []byte, mode fs.FileMode) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".brabo-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	// Make the rename itself durable; a failure here does not undo the write.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
