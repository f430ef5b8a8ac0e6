package brabo

import (
	"strconv"
	"strings"
)

// Preview is what an action's card shows of the change it would make, so
// that a human approves the change and not only its name (DESIGN §6.4):
// the diff of a write, the commits of a push, what each command segment
// touches. The pipeline computes it when the action is proposed
// (pipeline.Service.Preview), again when a pending action is shown or
// approved (Revision), and stores it with the action: the card of an
// action decided long ago is the card as it was decided. The API, the web
// page, the hook's answers and the notifications all read this one value.
type Preview struct {
	// RunBy says who runs the action once it is approved: "brabo", or
	// the program of an agent that runs it itself (claude-code, codex…).
	RunBy string `json:"runBy"`
	// NeedRole is the least role approving it needs (EffectiveRole);
	// DenyRole the least role denying it needs (the type's minimum).
	NeedRole Role `json:"needRole"`
	DenyRole Role `json:"denyRole"`
	// Flags are what the action touches that a reader should not miss:
	// the home folder, the network, a deletion… For a terminal action,
	// every segment's flags (Segment.Flags), once each.
	Flags []Flag `json:"flags,omitempty"`
	// Diff is a write_file's change of the file on disk.
	Diff *FileDiff `json:"diff,omitempty"`
	// Stat is the diff stat: of what a git_commit would commit, of a
	// pr_open's or a git_merge's branch against its base.
	Stat *DiffStat `json:"stat,omitempty"`
	// Commits are the commits a git_push would push, or a pr_open's or
	// git_merge's branch has that its base has not, newest first;
	// MoreCommits counts the ones left out. Range names what was listed
	// ("origin/main..feature", as of the last fetch).
	Commits     []Commit `json:"commits,omitempty"`
	MoreCommits int      `json:"moreCommits,omitempty"`
	Range       string   `json:"range,omitempty"`
	// Push says what a git_push does to the remote's branch.
	Push *PushFacts `json:"push,omitempty"`
	// Notes say what could not be shown, and why ("the repository could
	// not be read: …").
	Notes []string `json:"notes,omitempty"`
	// Bound are what an approval of this card binds (revision.go): the
	// commit range and ref of a push, the tree and paths of a commit, the
	// hashes of a write, the head and base of a pull request, the
	// command, folder and trusted permissions.json of a terminal command.
	// Revision names them all in one string: an approve carries the
	// revision of the card the human saw, and the action runs exactly it.
	Bound    []RevisionPart `json:"bound,omitempty"`
	Revision string         `json:"revision,omitempty"`
}

// FlagKind is one of the things a card flags.
type FlagKind string

// The flags of a card (DESIGN §6.4).
const (
	// FlagOutside: a path outside the project folder.
	FlagOutside FlagKind = "outside"
	// FlagHome: the home folder (~, $HOME, or a path under it).
	FlagHome FlagKind = "home"
	// FlagProtected: a protected file (policy.ProtectedTable).
	FlagProtected FlagKind = "protected"
	// FlagNetwork: the network (curl, wget, ssh, git push…).
	FlagNetwork FlagKind = "network"
	// FlagPrivilege: a privilege gain (sudo, doas…).
	FlagPrivilege FlagKind = "privilege"
	// FlagDelete: a deletion (rm -r, find -delete, git clean…).
	FlagDelete FlagKind = "delete"
	// FlagForce: a forced push, or a push that rewrites the remote's
	// history.
	FlagForce FlagKind = "force"
	// FlagPipeShell: a write whose content hands a download to a shell
	// (curl … | sh, wget, fetch; bash <(curl …)), wherever it is in it.
	FlagPipeShell FlagKind = "pipe-shell"
	// FlagExecutable: a write of a script or a program, or over a file
	// with execute permission (it keeps its mode).
	FlagExecutable FlagKind = "executable"
	// FlagRunsFile: a write to a file the project runs: a Makefile, CI
	// files (.github/workflows/*), shell scripts, package.json's scripts.
	FlagRunsFile FlagKind = "runs"
)

var flagLabels = map[FlagKind]string{
	FlagOutside:    "outside the project",
	FlagHome:       "the home folder",
	FlagProtected:  "a protected file",
	FlagNetwork:    "the network",
	FlagPrivilege:  "privilege",
	FlagDelete:     "deletion",
	FlagForce:      "force push",
	FlagPipeShell:  "a download piped into a shell",
	FlagExecutable: "an executable file",
	FlagRunsFile:   "a file the project runs",
}

// Label is the flag in plain words ("the home folder").
func (k FlagKind) Label() string {
	if l, ok := flagLabels[k]; ok {
		return l
	}
	return string(k)
}

// Flag is one thing an action (or one segment of a command) touches.
type Flag struct {
	Kind FlagKind `json:"kind"`
	// What names the path, program or branch that raised it
	// ("~/.ssh/id_ed25519", "curl").
	What string `json:"what,omitempty"`
}

// String is the flag as a card says it: "the home folder: ~/.ssh/id_ed25519".
func (f Flag) String() string {
	if f.What == "" {
		return f.Kind.Label()
	}
	return f.Kind.Label() + ": " + f.What
}

// AddFlag appends f to flags unless a flag of its kind and what is there.
func AddFlag(flags []Flag, f Flag) []Flag {
	for _, g := range flags {
		if g == f {
			return flags
		}
	}
	return append(flags, f)
}

// FlagKinds lists the kinds of flags once each, in their order of first
// appearance: the summary a notification or a hook's answer gives.
func FlagKinds(flags []Flag) []string {
	var out []string
	seen := map[FlagKind]bool{}
	for _, f := range flags {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			out = append(out, f.Kind.Label())
		}
	}
	return out
}

// FileDiff is the change a write_file makes to the file on disk.
type FileDiff struct {
	// Path is the file, relative to the scope root.
	Path string `json:"path"`
	// New is true when no file is at the path: the diff is the new
	// content, every line added.
	New bool `json:"new,omitempty"`
	// Unified is the whole change in unified diff format: "@@" hunk
	// headers, then lines starting with ' ', '-' or '+'. A write's content
	// is at most MaxWriteBytes, so every line is kept: a card shows the
	// first ones, the action's page all of them. More counts the lines a
	// card recorded before whole diffs were kept left out (0 since).
	Unified string `json:"unified,omitempty"`
	More    int    `json:"more,omitempty"`
	// Added and Removed count the lines of the whole change.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Hidden says why no content is shown: a symlink on the path, a path
	// outside the scope, a read-protected path, a binary or too large a
	// file. Unified is empty then.
	Hidden string `json:"hidden,omitempty"`
	// Identical is true when the new content is what the file holds.
	Identical bool `json:"identical,omitempty"`
}

// DiffLines splits a unified diff into its lines, without the final
// newline's empty one.
func DiffLines(unified string) []string {
	if unified == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(unified, "\n"), "\n")
}

// DiffStat is a diff stat: what changes, file by file.
type DiffStat struct {
	Files []FileStat `json:"files"`
	// More counts the files left out of Files.
	More int `json:"more,omitempty"`
	// Added and Removed count the lines of every file, binary ones aside.
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// FileStat is one file of a diff stat.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Binary files have no line counts; New ones (untracked, that a
	// git_commit would add) none yet.
	Binary bool `json:"binary,omitempty"`
	New    bool `json:"new,omitempty"`
}

// String is the stat's one-line total: "3 files, +12 −4".
func (s *DiffStat) String() string {
	if s == nil {
		return ""
	}
	n := len(s.Files) + s.More
	files := "1 file"
	if n != 1 {
		files = strconv.Itoa(n) + " files"
	}
	if s.Added == 0 && s.Removed == 0 {
		return files
	}
	return files + ", +" + strconv.Itoa(s.Added) + " −" + strconv.Itoa(s.Removed)
}

// Commit is one commit of a preview.
type Commit struct {
	// Hash is the abbreviated hash.
	Hash    string `json:"hash"`
	Author  string `json:"author,omitempty"`
	Subject string `json:"subject"`
}

// PushFacts is what a git_push does to the remote's branch, as the local
// repository knows it since its last fetch.
type PushFacts struct {
	Remote string `json:"remote"`
	Branch string `json:"branch"`
	// NewBranch is true when the remote has no such branch (as last
	// fetched): the push creates it.
	NewBranch bool `json:"newBranch,omitempty"`
	// Force is true when the push would rewrite the remote's history (the
	// remote's branch is not an ancestor of the local one). brabo never
	// forces a push: the remote refuses such a push.
	Force bool `json:"force,omitempty"`
}

// Summary is the one line a notification and a hook's answer give of an
// action: its type, the first line of what it does, and its flags.
func Summary(a *ProposedAction) string {
	s := string(a.Type)
	if first := FirstLine(Subject(a)); first != "" {
		s += ": " + first
	}
	if a.Preview != nil && len(a.Preview.Flags) > 0 {
		s += " (touches " + strings.Join(FlagKinds(a.Preview.Flags), ", ") + ")"
	}
	return s
}

// FirstLine is the first line of s, trimmed, with "…" when more follows.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// Subject is what an action would touch, in one string: the command, the
// path, the commit message, the branch, the pull request.
func Subject(a *ProposedAction) string {
	p := a.Payload
	switch a.Type {
	case Terminal:
		return p.Command
	case WriteFile, ReadFile:
		return p.Path
	case McpTool:
		if len(p.Extra) > 0 {
			return p.Tool + " " + string(p.Extra)
		}
		return p.Tool
	case GitCommit:
		return p.Message
	case GitBranchCreate:
		if p.From != "" {
			return p.Branch + " from " + p.From
		}
		return p.Branch
	case GitPush:
		remote := p.Remote
		if remote == "" {
			remote = "origin"
		}
		return p.Branch + " → " + remote
	case PrOpen:
		return p.Branch + " → " + p.Base + ": " + p.Title
	case GitMerge:
		if p.TargetBranch != "" {
			return "PR #" + strconv.FormatInt(p.PR, 10) + " into " + p.TargetBranch
		}
		return "PR #" + strconv.FormatInt(p.PR, 10)
	}
	if len(p.Extra) > 0 {
		return string(p.Extra)
	}
	return ""
}
