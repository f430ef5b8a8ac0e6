package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
)

// An approval binds what was shown (ExecRequest.Bound): the executor runs
// exactly it, and when what it would run moved since the approval it runs
// nothing and answers a result with CodeChangedSinceApproved.

// changed is the result of an action whose bound parts moved: nothing ran.
func changed(t brabo.ActionType, format string, a ...any) *brabo.Result {
	return &brabo.Result{Code: brabo.CodeChangedSinceApproved,
		Error: fmt.Sprintf("%s: %s since it was approved; nothing ran. Look at its card again", t, fmt.Sprintf(format, a...))}
}

// fileState is the file part of a write_file's card (as the pipeline
// computes it): brabo.FileAbsent, the ContentHash of a regular file, or
// "other".
func fileState(target string) string {
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return brabo.FileAbsent
	case err != nil || !fi.Mode().IsRegular():
		return "other"
	}
	f, err := os.Open(target)
	if err != nil {
		return "other"
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "other"
	}
	return brabo.ContentHash(data)
}

// checkWrite compares the file a write replaces with the one its card
// showed; a file the card could not read ("other") binds nothing more
// than the card showed.
func checkWrite(req brabo.ExecRequest, target string) *brabo.Result {
	want := req.Bound["file"]
	if want == "" || want == "other" {
		return nil
	}
	if got := fileState(target); got != want {
		what := "changed on disk"
		switch {
		case got == brabo.FileAbsent:
			what = "was removed"
		case want == brabo.FileAbsent:
			what = "was created"
		}
		return changed(brabo.WriteFile, "the file %s %s", req.Action.Payload.Path, what)
	}
	return nil
}

// staged is the temporary index a git_commit stages into (stage), in a
// scratch folder of the git folder, and what staging produced.
type staged struct {
	dir   string // the scratch folder, removed by done
	index string
	head  string
	tree  string
	paths []string
}

func (s *staged) done() {
	if s != nil && s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// stage is the staging of a git_commit: `git add -A` into a copy of the
// index, then `git write-tree` and the paths the tree changes against
// HEAD, in the session's sandbox (or on the host with hooks off, as the
// commit itself). With scratch the objects go to the scratch folder (the
// repository's are read as alternates): the card's staging writes nothing
// of the repository. transcript says whether `git add` enters the
// result's output. The session's environment is as it was after.
func (g *gitSession) stage(scratch, transcript bool) (*staged, error) {
	if g.layout == nil {
		// No repository: git says so itself, as the commit always did.
		if transcript {
			g.step("add", "-A")
		} else {
			g.query("add", "-A")
		}
		return &staged{}, errStage("git add failed")
	}
	dir, err := os.MkdirTemp(g.layout.GitDir, "brabo-stage-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", g.t, err)
	}
	st := &staged{dir: dir, index: filepath.Join(dir, "index")}
	if err := copyFile(filepath.Join(g.layout.GitDir, "index"), st.index); err != nil && !errors.Is(err, fs.ErrNotExist) {
		st.done()
		return nil, fmt.Errorf("%s: copying the index: %w", g.t, err)
	}
	kv := []string{"GIT_INDEX_FILE=" + st.index}
	if scratch {
		objects := filepath.Join(dir, "objects")
		if err := os.Mkdir(objects, 0o755); err != nil {
			st.done()
			return nil, fmt.Errorf("%s: %w", g.t, err)
		}
		alt := filepath.Join(g.layout.CommonDir, "objects")
		kv = append(kv, "GIT_OBJECT_DIRECTORY="+objects, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+alt)
	}
	env, set := g.env, g.set
	g.with(kv...)
	defer func() { g.env, g.set = env, set }()
	code := 0
	if transcript {
		code = g.step("add", "-A")
	} else {
		_, code = g.query("add", "-A")
	}
	if code != 0 {
		return st, errStage("git add failed")
	}
	var c int
	if st.tree, c = g.query("write-tree"); c != 0 || st.tree == "" {
		return st, errStage("git write-tree failed")
	}
	st.head, _ = g.query("rev-parse", "--verify", "--quiet", "HEAD")
	out, c := g.query("diff", "--cached", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", "-z")
	if c != 0 {
		return st, errStage("git diff --cached failed")
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			st.paths = append(st.paths, p)
		}
	}
	return st, nil
}

// errStage is a staging step that failed; the session's fail says why.
type errStage string

func (e errStage) Error() string { return string(e) }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// StageTree is brabo.Stager: a git_commit's staging as its execution
// stages (stage), into a temporary index and scratch objects it removes.
func (e *Executor) StageTree(ctx context.Context, req brabo.ExecRequest) (*brabo.StagedTree, error) {
	const t = brabo.GitCommit
	g, err := e.rootGit(ctx, t, req, true)
	if err != nil {
		return nil, err
	}
	g.local()
	st, err := g.stage(true, false)
	defer st.done()
	if err != nil {
		if _, ok := err.(errStage); ok {
			res, ferr := g.fail("%s", err.Error())
			if ferr != nil {
				return nil, ferr
			}
			return nil, errors.New(res.Error)
		}
		return nil, err
	}
	return &brabo.StagedTree{Head: st.head, Tree: st.tree, Paths: st.paths}, nil
}
