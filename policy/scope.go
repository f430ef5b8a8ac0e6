package policy

import (
	"errors"
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"

	"github.com/brabo-dev/brabo"
)

// Scope is the project folder every terminal path is compared against
// (DESIGN §5).
type Scope struct {
	// Root is the absolute path of the folder.
	Root string
	// Mode and ID identify the root in events without exposing it: ID is
	// the workspace_dir_name in container/runner mode, the folder's name
	// under the projects base in local mode.
	Mode brabo.ExecutionMode
	ID   string
}

// nobodysFiles carry or discard output; the rest of /dev is out of scope.
var nobodysFiles = shell.Set("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr")

// systemRoots can never be a project folder, and nothing under the ones in
// systemTrees can either.
var (
	systemRoots = shell.Set("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64",
		"/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys",
		"/tmp", "/usr", "/var", "/Users", "/System", "/Library", "/Applications", "/private",
		"/usr/local", "/var/lib", "/var/tmp")
	systemTrees = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64",
		"/libx32", "/proc", "/run", "/sbin", "/sys", "/usr", "/System"}
)

// CheckRoot checks a scope root lexically, as it must be checked on every
// use: absolute, already clean (no "..", no "//", no trailing "/"), not a
// system root or inside a system tree, not a home directory itself.
func CheckRoot(root string) error {
	switch {
	case root == "":
		return errors.New("the project folder is empty")
	case !strings.HasPrefix(root, "/"):
		return fmt.Errorf("the project folder %q is not an absolute path", root)
	case shell.HasDotDot(root):
		return fmt.Errorf("the project folder %q holds \"..\"", root)
	case path.Clean(root) != root:
		return fmt.Errorf("the project folder %q is not a clean path (want %q)", root, path.Clean(root))
	case systemRoots[root]:
		return fmt.Errorf("the project folder %q is a system directory", root)
	}
	for _, t := range systemTrees {
		if shell.Within(root, t) {
			return fmt.Errorf("the project folder %q is inside the system directory %s", root, t)
		}
	}
	if d := path.Dir(root); d == "/home" || d == "/Users" {
		return fmt.Errorf("the project folder %q is a whole home directory", root)
	}
	return nil
}

// DirProbe reports whether path is an existing directory and whether the
// current process can write in it. Decide does no I/O; callers that create
// a local project supply a probe that looks at the real disk.
type DirProbe func(path string) (isDir, writable bool, err error)

// ValidateLocalRoot checks the folder typed when a local (mounted) project
// is created (DESIGN §5): CheckRoot, then that it exists, is writable, and
// does not overlap any of brabo's own paths (data directory, checkout).
func ValidateLocalRoot(root string, own []string, probe DirProbe) error {
	if err := CheckRoot(root); err != nil {
		return err
	}
	for _, o := range own {
		o = path.Clean(o)
		if shell.Within(root, o) || shell.Within(o, root) {
			return fmt.Errorf("the project folder %q overlaps %s, which brabo or another project uses", root, o)
		}
	}
	isDir, writable, err := probe(root)
	switch {
	case err != nil:
		return fmt.Errorf("the project folder %q cannot be used: %w", root, err)
	case !isDir:
		return fmt.Errorf("the project folder %q does not exist or is not a directory", root)
	case !writable:
		return fmt.Errorf("the project folder %q is not writable by brabo", root)
	}
	return nil
}

// outside returns the first path of s that reaches outside root, described
// for a human, or "".
func outside(s *shell.Segment, root string) string {
	if s.Cwds.Unknown {
		for _, p := range s.Paths {
			if strings.Contains(p.Text, "..") {
				return "relative to a directory the line does not show: " + p.Text
			}
		}
	}
	for _, d := range s.Cwds.Dirs {
		if !shell.Within(d, root) {
			return "runs in " + d
		}
	}
	if shell.Base(s.Verb()) == "cd" || shell.Base(s.Verb()) == "pushd" {
		if _, known := shell.CdTarget(s); !known {
			return "cd goes somewhere the line does not show"
		}
	}
	for _, p := range s.Paths {
		if p.Implied || p.Program && s.PathIsName {
			continue
		}
		if why := tokenOutside(p.Text, p.Kind, s.Cwds, root); why != "" {
			return why
		}
	}
	if s.Computed != "" {
		return "a path the line computes cannot be checked: " + s.Computed
	}
	return gitInternals(s)
}

// gitInternals finds a write to .git or inside it (any case): its hooks
// and config run code the next time git runs (a hook on commit, a
// configured pager or fsmonitor on a read), and a .git file of one's own
// (a gitfile) points git at a repository the line chose. Reading .git is
// harmless.
func gitInternals(s *shell.Segment) string {
	for _, p := range s.Paths {
		if p.Kind != shell.ArgWrite || p.Implied {
			continue
		}
		if !strings.Contains(strings.ToLower(p.Text), ".git") && !cwdInGit(s.Cwds) {
			continue // the common case, without a path built
		}
		for _, c := range shell.PathCandidates(p.Text, s.Cwds) {
			for _, el := range strings.Split(c, "/") {
				if strings.EqualFold(el, ".git") {
					return "writes inside .git: " + p.Text
				}
			}
		}
	}
	return ""
}

func cwdInGit(c shell.CwdSet) bool {
	for _, d := range c.Dirs {
		if strings.Contains(strings.ToLower(d), "/.git") {
			return true
		}
	}
	return false
}

// cutPWD returns what follows a leading $PWD, ${PWD}, $(pwd) or `pwd` in a
// token: the directory the segment runs in, so that $PWD/../.. is checked
// like ../.. is.
func cutPWD(c string) (string, bool) {
	for _, p := range []string{"${PWD}", "$(pwd)", "`pwd`", "$PWD"} {
		if rest, ok := strings.CutPrefix(c, p); ok {
			if p == "$PWD" && rest != "" && (rest[0] == '_' || rest[0] >= 'a' && rest[0] <= 'z' ||
				rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= '0' && rest[0] <= '9') {
				return "", false // $PWDX is another variable
			}
			return "./" + rest, true
		}
	}
	return "", false
}

// tokenOutside checks one path the way DESIGN §5 lists: absolute paths,
// tokens with "..", "~" and $HOME. For a word the operand table does not
// place (kind argUnknown) the value of --opt=/abs and a glued -I/abs are
// checked too.
func tokenOutside(t string, kind shell.ArgKind, cwds shell.CwdSet, root string) string {
	if strings.Contains(t, "$HOME") || strings.Contains(t, "${HOME") {
		return "the home directory: " + t
	}
	// The shell's own directory variables: $PWD is where the segment runs
	// (resolved below); $OLDPWD, $DIRSTACK and ${PWD%…} are places the
	// line does not spell out.
	for _, v := range []string{"$OLDPWD", "${OLDPWD", "$DIRSTACK", "${DIRSTACK", "${PWD%", "${PWD#", "${PWD/", "${PWD:", "${PWD-", "${PWD="} {
		if strings.Contains(t, v) {
			return "a directory the line does not show: " + t
		}
	}
	candidates := []string{t}
	if kind == shell.ArgUnknown {
		if _, v, ok := strings.Cut(t, "="); ok {
			candidates = append(candidates, v)
		}
		if len(t) > 2 && t[0] == '-' && t[1] != '-' && strings.ContainsRune("/~.", rune(t[2])) {
			candidates = append(candidates, t[2:]) // -I/abs, -o../x
		}
	}
	for _, c := range candidates {
		if rest, ok := cutPWD(c); ok {
			if cwds.Unknown {
				return "relative to a directory the line does not show: " + t
			}
			for _, d := range cwds.Dirs {
				if !shell.Within(path.Join(d, rest), root) {
					return "outside the project folder: " + t
				}
			}
			continue
		}
		switch {
		case strings.HasPrefix(c, "~"):
			return "the home directory: " + t
		case strings.HasPrefix(c, "/"):
			p := path.Clean(c)
			if nobodysFiles[p] {
				continue
			}
			if !shell.Within(p, root) {
				return "outside the project folder: " + t
			}
		case shell.HasDotDot(c):
			if cwds.Unknown {
				return "relative to a directory the line does not show: " + t
			}
			for _, d := range cwds.Dirs {
				if !shell.Within(path.Join(d, c), root) {
					return "outside the project folder: " + t
				}
			}
		}
	}
	return ""
}
