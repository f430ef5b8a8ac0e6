package devagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// MaxReadBytes bounds what read_file returns of one file.
const MaxReadBytes = 256 << 10

// ReadFileTool is the direct read_file tool {path}: it reads a file under
// root, the project's scope root. A path outside root (compared lexically:
// "..", an absolute path elsewhere) is refused; rootErr, when the scope
// root could not be found, is what every call answers.
func ReadFileTool(root string, rootErr error) toolloop.Tool {
	return toolloop.Tool{
		Spec: model.Tool{
			Name:        "read_file",
			Description: "Read a file of the project folder.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"file path, relative to the project folder"}},` +
				`"required":["path"],"additionalProperties":false}`),
		},
		Kind: toolloop.Direct,
		Direct: func(ctx context.Context, args json.RawMessage) (string, error) {
			if rootErr != nil {
				return "", fmt.Errorf("the project folder is not available: %v", rootErr)
			}
			var a struct {
				Path string `json:"path"`
			}
			dec := json.NewDecoder(bytes.NewReader(args))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil {
				return "", fmt.Errorf("the arguments do not fit the schema: %v", err)
			}
			full, err := inScope(root, a.Path)
			if err != nil {
				return "", err
			}
			f, err := os.Open(full)
			if err != nil {
				return "", fmt.Errorf("%s: %v", a.Path, errors.Unwrap(err))
			}
			defer f.Close()
			data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
			if err != nil {
				return "", fmt.Errorf("%s: %v", a.Path, err)
			}
			if len(data) > MaxReadBytes {
				return string(data[:MaxReadBytes]) + fmt.Sprintf("\n[truncated at %d bytes]", MaxReadBytes), nil
			}
			return string(data), nil
		},
	}
}

// inScope resolves path under root lexically and refuses what leaves it.
// Symbolic links are not followed here.
func inScope(root, path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", errors.New("path is required")
	}
	if root == "" || !filepath.IsAbs(root) {
		return "", fmt.Errorf("the project folder %q is not an absolute path", root)
	}
	root = filepath.Clean(root)
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, full)
	}
	full = filepath.Clean(full)
	rel, err := filepath.Rel(root, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the project folder", path)
	}
	return full, nil
}

// GitPush is the name of the dev agent's push tool.
const GitPush = "git_push"

// GitPushTool is the git_push pipeline tool {remote?}: it proposes a
// git_push of branch (the agent's task branch; the model cannot name
// another) to remote, origin when not given. A push leaves the machine,
// so the pipeline's cap makes it wait for a human whatever the
// permissions say: the loop suspends on it like on any pending action.
func GitPushTool(branch string) toolloop.Tool {
	return toolloop.Tool{
		Spec: model.Tool{
			Name: GitPush,
			Description: "Push your branch " + branch + " to the remote (never forced), so a pull request can be opened from it. " +
				"A push always waits for a human's approval. Commit first: only committed work is pushed.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"remote":{"type":"string","description":"the remote's name (default origin)"}},` +
				`"additionalProperties":false}`),
		},
		Kind: toolloop.Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a struct {
				Remote string `json:"remote"`
			}
			if len(bytes.TrimSpace(args)) > 0 {
				if err := decodeStrict(args, &a); err != nil {
					return "", brabo.Payload{}, err
				}
			}
			return brabo.GitPush, brabo.Payload{Branch: branch, Remote: strings.TrimSpace(a.Remote)}, nil
		},
	}
}

// inWorktree makes a tool act in the agent's worktree
// (gitwork.Folder.Tool): its description names the worktree and its
// branch, and the paths the model gives are rebased onto it.
func inWorktree(t toolloop.Tool, wt worktree) toolloop.Tool { return wt.folder().Tool(t) }

// buildLoop is the agent's tool loop for the task, working in the agent's
// worktree (see WorktreeRel): the standard pipeline tools and git_push,
// their paths rebased into the worktree, a read_file confined to it and
// report_done for the task's branch. Its model and proposer feed the
// history report_done's gate reads. It touches no file: the worktree is
// made by hold, when the task is claimed.
func (m *Manager) buildLoop(agent *brabo.Agent, p *brabo.Project, task *brabo.Task) (*toolloop.Loop, *history, worktree, error) {
	var root string
	var rootErr error
	if m.Scoper == nil {
		rootErr = errors.New("no scope is configured")
	} else {
		sc, err := m.Scoper.ScopeRoot(p)
		root, rootErr = sc.Root, err
	}
	wt := newWorktree(root, agent.ID, task.ID)
	hist := &history{}
	var tools []toolloop.Tool
	for _, t := range append(toolloop.StandardTools(), GitPushTool(wt.branch)) {
		tools = append(tools, inWorktree(t, wt))
	}
	tools = append(tools, inWorktree(ReadFileTool(wt.dir(), rootErr), wt), ReportDoneTool(task.ID))
	var prop toolloop.Proposer
	if m.Proposer != nil {
		prop = reportGate{inner: m.Proposer, hist: hist, taskID: task.ID}
	}
	return &toolloop.Loop{Model: historyModel{inner: m.Model, hist: hist}, Proposer: prop, ProjectID: p.ID,
		Actor: pipeline.Actor{Agent: agent}, System: m.System, Tools: tools, MaxIterations: m.MaxIterations}, hist, wt, rootErr
}
