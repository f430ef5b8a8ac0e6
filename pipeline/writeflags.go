package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/brabo-dev/brabo"
)

// The flags of a write_file's card, read from the whole content it
// writes (never from a part of it): a download piped into a shell, an
// executable file, a file the project runs. A card shows the first lines
// of a long write; its flags say what is anywhere in it.

// maxPipeFlags is how many lines a card names for a download piped into a
// shell; the last flag counts the rest.
const maxPipeFlags = 3

// fetchWord is a program that downloads; shellWord a shell a download may
// be handed to. A pipe into the shell, a process substitution it reads,
// or a command substitution it evaluates all run what was downloaded.
var (
	fetchWord = `(?:curl|wget|fetch|aria2c|http|xh)`
	shellWord = `(?:(?:/usr)?(?:/local)?/bin/)?(?:ba|z|da|k|a|fi|mk|tc|c)?sh`
	// Compiled on first use: brabo's start pays for nothing a command
	// does not use (TestCheckStartInitCost).
	pipeShell = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b` + fetchWord + `\b.*\|\s*(?:sudo\b(?:\s+-\S+)*\s+|env\b(?:\s+\S+=\S*)*\s+|exec\s+)*` + shellWord + `\b`)
	})
	subShell = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:\b` + shellWord + `\b(?:\s+-\S+)*\s+(?:-c\s+)?["']?|\b(?:source|eval)\s+["']?|(?:^|[;&|(]\s*)\.\s+)(?:<\(|\$\()\s*` + fetchWord + `\b`)
	})
)

// writeFlags adds what the content of a write to p (relative to root, or
// absolute) is: read whole, line by line.
func writeFlags(pv *brabo.Preview, root, p, content string) {
	add := func(k brabo.FlagKind, what string) {
		pv.Flags = brabo.AddFlag(pv.Flags, brabo.Flag{Kind: k, What: what})
	}
	hits, more := pipedDownloads(content)
	for _, h := range hits {
		add(brabo.FlagPipeShell, h)
	}
	if more > 0 {
		add(brabo.FlagPipeShell, fmt.Sprintf("and %d more lines", more))
	}
	rel, inside := scopeRel(root, p)
	mode, exists := uint32(0), false
	if inside {
		mode, exists = scopedMode(root, rel)
	}
	switch {
	case exists && mode&0o111 != 0:
		add(brabo.FlagExecutable, p+" is executable: it keeps its mode, and its new content is what runs")
	case strings.HasPrefix(content, "#!"):
		add(brabo.FlagExecutable, "a script: "+clipLine(brabo.FirstLine(content)))
	case strings.HasPrefix(content, "\x7fELF"):
		add(brabo.FlagExecutable, "a program (ELF)")
	}
	if why := runsFile(root, rel, inside, content); why != "" {
		add(brabo.FlagRunsFile, why)
	}
}

// pipedDownloads lists the lines of content (a backslash-continued line is
// one) that hand a download to a shell, "line N: …", the first
// maxPipeFlags of them, and how many more there are.
func pipedDownloads(content string) (hits []string, more int) {
	if !strings.Contains(content, "|") && !strings.Contains(content, "(") {
		return nil, 0
	}
	lines := strings.Split(content, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		if !pipeShell().MatchString(line) && !subShell().MatchString(line) {
			continue
		}
		if len(hits) == maxPipeFlags {
			more++
			continue
		}
		hits = append(hits, fmt.Sprintf("line %d: %s", start+1, clipLine(strings.TrimSpace(line))))
	}
	return hits, more
}

// clipLine keeps a flag's quote of a line short, at a rune boundary.
func clipLine(s string) string {
	const max = 160
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// scopeRel is p relative to root, and whether it is inside it.
func scopeRel(root, p string) (string, bool) {
	if path.IsAbs(p) {
		c := path.Clean(p)
		if !within(c, root) || c == path.Clean(root) {
			return "", false
		}
		return strings.TrimPrefix(c, strings.TrimSuffix(root, "/")+"/"), true
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// scopedMode is the permission bits of the regular file at rel under root,
// opened as readScoped opens it (no symlink on the way); false when there
// is none.
func scopedMode(root, rel string) (uint32, bool) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(dir)
	fd, err := openBeneath(dir, rel)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, false
	}
	return st.Mode & 0o7777, true
}

// runsFiles are the files, by name, that a build, a test run or CI runs:
// writing one changes what runs next, wherever the change is in it.
var runsFiles = map[string]string{
	"makefile": "make runs it", "gnumakefile": "make runs it", "justfile": "just runs it",
	"taskfile.yml": "task runs it", "taskfile.yaml": "task runs it", "rakefile": "rake runs it",
	"jenkinsfile": "CI runs it", ".gitlab-ci.yml": "CI runs it", ".travis.yml": "CI runs it",
	"azure-pipelines.yml": "CI runs it", "bitbucket-pipelines.yml": "CI runs it", ".drone.yml": "CI runs it",
	"dockerfile": "a container build runs it", "containerfile": "a container build runs it",
}

// runsFile says why the file at rel is one the project runs, "" when it
// is not: by its name, its folder (CI), its extension (shell scripts), or
// for package.json a change of its scripts.
func runsFile(root, rel string, inside bool, content string) string {
	if !inside {
		return ""
	}
	base := path.Base(rel)
	lower := strings.ToLower(base)
	dir := path.Dir(rel)
	switch {
	case runsFiles[lower] != "":
		return rel + " (" + runsFiles[lower] + ")"
	case strings.HasSuffix(lower, ".mk"):
		return rel + " (make runs it)"
	case (dir == ".github/workflows" || strings.HasPrefix(dir, ".github/workflows/")) && (strings.HasSuffix(lower, ".yml") || strings.HasSuffix(lower, ".yaml")):
		return rel + " (a GitHub Actions workflow: CI runs it)"
	case strings.HasPrefix(rel, ".github/actions/") && (lower == "action.yml" || lower == "action.yaml"):
		return rel + " (a GitHub action: CI runs it)"
	case rel == ".circleci/config.yml" || strings.HasPrefix(rel, ".buildkite/"):
		return rel + " (CI runs it)"
	case strings.HasSuffix(lower, ".sh") || strings.HasSuffix(lower, ".bash") || strings.HasSuffix(lower, ".zsh"):
		return rel + " (a shell script)"
	case lower == "package.json":
		return packageScripts(root, rel, content)
	}
	return ""
}

// packageScripts says which of package.json's scripts (npm runs them: a
// postinstall on every install) the write adds, changes or removes; ""
// when it leaves them as they are.
func packageScripts(root, rel, content string) string {
	scripts := func(b []byte) (map[string]string, bool) {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, true
		}
		err := json.Unmarshal(b, &pkg)
		return pkg.Scripts, err == nil
	}
	now, ok := scripts([]byte(content))
	if !ok {
		return rel + " (npm runs its scripts, and the new content is not JSON brabo can read)"
	}
	old, _, err := readScoped(root, rel, maxPreviewFile)
	was, wasOK := scripts(old)
	if err != nil || !wasOK {
		was = nil
	}
	var changed []string
	for k, v := range now {
		if w, ok := was[k]; !ok || w != v {
			changed = append(changed, k)
		}
	}
	for k := range was {
		if _, ok := now[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	slices.Sort(changed)
	if len(changed) > 5 {
		changed = append(changed[:5], fmt.Sprintf("%d more", len(changed)-5))
	}
	return rel + " scripts " + strings.Join(changed, ", ") + " (npm runs them)"
}
