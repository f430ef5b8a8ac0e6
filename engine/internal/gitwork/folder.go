package gitwork

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// Folder is a folder of the scope root (a worktree) where an agent's
// tools act, as if it were the agent's project folder.
type Folder struct {
	Root string // the scope root, absolute
	Rel  string // the folder, relative to Root, slash form
	// Where is how the tools' descriptions name the folder to the model,
	// in place of "the project folder" ("your git worktree of the
	// project (on branch brabo/tsk_1)").
	Where string
}

// Dir is the folder's absolute path.
func (f Folder) Dir() string { return filepath.Join(f.Root, filepath.FromSlash(f.Rel)) }

// Rebase turns a path the model gave, relative to the folder (or absolute
// inside it), into the path relative to the scope root the pipeline
// expects; "" and "." are the folder itself. A path that leaves the folder
// is refused, naming field: another agent's worktree or the main checkout
// is not this agent's to touch.
func (f Folder) Rebase(field, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "." {
		return f.Rel, nil
	}
	var rel string
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(f.Dir(), filepath.Clean(p))
		if err != nil {
			return "", fmt.Errorf("%s %q is outside your worktree", field, p)
		}
		rel = filepath.ToSlash(r)
	} else {
		rel = path.Clean(filepath.ToSlash(p))
	}
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", fmt.Errorf("%s %q is outside your worktree", field, p)
	}
	if rel == "." {
		return f.Rel, nil
	}
	return f.Rel + "/" + rel, nil
}

// Tool makes a tool act in the folder: its description names the folder
// (Where) where it spoke of the project folder, and for a pipeline tool
// the terminal's cwd and write_file's path, which the model gives
// relative to its folder, are rebased onto it (relative to the scope
// root, as the pipeline reads them), and git_commit commits there. A path
// that leaves the folder is refused as a bad argument. A direct tool's
// behaviour is its own: give it the folder's Dir as its root.
func (f Folder) Tool(t toolloop.Tool) toolloop.Tool {
	t.Spec.Description, t.Spec.Parameters = specs.rewrite(t.Spec.Description, t.Spec.Parameters, f.Where)
	if t.Kind != toolloop.Pipeline || t.Action == nil {
		return t
	}
	inner := t.Action
	t.Action = func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
		typ, p, err := inner(args)
		if err != nil {
			return typ, p, err
		}
		switch typ {
		case brabo.Terminal:
			p.Cwd, err = f.Rebase("cwd", p.Cwd)
		case brabo.WriteFile:
			if p.Path, err = f.Rebase("path", p.Path); err == nil && p.Path == f.Rel {
				err = errors.New("path names your folder itself, not a file in it")
			}
		case brabo.GitCommit:
			p.Cwd = f.Rel
		}
		return typ, p, err
	}
	return t
}

// specs shares the rewritten descriptions and schemas between agents: ten
// thousand waiting agents would otherwise hold ten thousand copies of the
// same few strings (docs/PERFORMANCE.md, the memory of suspended agents).
var specs = &specCache{m: map[specKey]specText{}}

// maxSpecs bounds the cache: a Where naming a branch makes a new key per
// task, and a cleared cache only costs a rewrite.
const maxSpecs = 4096

type specKey struct{ desc, params, where string }

type specText struct {
	desc   string
	params json.RawMessage
}

type specCache struct {
	mu sync.Mutex
	m  map[specKey]specText
}

func (c *specCache) rewrite(desc string, params json.RawMessage, where string) (string, json.RawMessage) {
	k := specKey{desc, string(params), where}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v.desc, v.params
	}
	v := specText{
		desc:   strings.ReplaceAll(strings.ReplaceAll(desc, "the project folder", where), "the project's git repository", where),
		params: json.RawMessage(strings.ReplaceAll(string(params), "relative to the project folder", "relative to your worktree")),
	}
	if len(c.m) >= maxSpecs {
		clear(c.m)
	}
	c.m[k] = v
	return v.desc, v.params
}
