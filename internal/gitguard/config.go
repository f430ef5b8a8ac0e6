package gitguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConfigError refuses a repository whose configuration holds a key brabo's
// git must not obey (one that names a program, a file to read, another
// repository or another configuration), or a file brabo cannot read as
// plain data.
type ConfigError struct {
	File string // the configuration file
	Line int
	// Key is the refused key, section.subsection.key with the section and
	// key lowercased as git compares them; "" when the file could not be
	// parsed.
	Key string
	// Reason completes the sentence.
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s:%d: the key %s %s", e.File, e.Line, e.Key, e.Reason)
}

// dataKeys are the keys, by section, that name no program, no file and no
// other configuration: all brabo's git obeys in a repository's config.
// "*" allows every key of a section. A section not listed is refused
// whole (include, includeIf, filter, diff, merge, credential, url, http,
// gpg, alias, submodule updates, hooks, …).
var dataKeys = map[string]map[string]bool{
	"core": set("repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase",
		"precomposeunicode", "protecthfs", "protectntfs", "symlinks", "autocrlf", "safecrlf", "eol",
		"quotepath", "abbrev", "checkstat", "trustctime", "untrackedcache", "commentchar",
		"compression", "sharedrepository", "warnambiguousrefs"),
	"remote":     set("url", "pushurl", "fetch", "push", "tagopt", "prune", "prunetags", "skipdefaultupdate", "skipfetchall"),
	"branch":     set("remote", "merge", "rebase", "pushremote", "description"),
	"user":       set("name", "email"),
	"extensions": set("*"),
	"submodule":  set("url", "active"),
	"pull":       set("rebase", "ff"),
	"push":       set("default", "autosetupremote"),
	"fetch":      set("prune"),
	"init":       set("defaultbranch"),
	"receive":    set("*"), // a local remote's; its hooks are off for brabo's push
	"gc":         set("*"),
}

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// CheckConfig reads, as data, every configuration file git would read in
// the repository (config of the common folder, config.worktree of the
// common and the git folder, and the git folder's config when it is
// another) and returns a *ConfigError for the first key outside the
// allow-list, the first include, or the first line it cannot parse
// exactly (brabo never guesses what git would make of a line).
func (l *Layout) CheckConfig() error {
	files := []string{filepath.Join(l.CommonDir, "config"), filepath.Join(l.CommonDir, "config.worktree")}
	if l.GitDir != l.CommonDir {
		files = append(files, filepath.Join(l.GitDir, "config"), filepath.Join(l.GitDir, "config.worktree"))
	}
	for _, f := range files {
		data, err := readSmall(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return &ConfigError{File: f, Reason: "cannot be read: " + err.Error()}
		}
		if err := CheckConfigData(f, data); err != nil {
			return err
		}
	}
	return nil
}

// CheckConfigData checks one configuration file's content (see
// CheckConfig); file names it in the error.
func CheckConfigData(file string, data []byte) error {
	entries, err := parseConfig(file, data)
	if err != nil {
		return err
	}
	for _, e := range entries {
		keys, ok := dataKeys[e.section]
		if !ok || !(keys["*"] || keys[e.key]) {
			return &ConfigError{File: file, Line: e.line, Key: e.name(), Reason: "is not one brabo's git obeys (it may name a program, a file or another configuration)"}
		}
		if e.section == "remote" && (e.key == "url" || e.key == "pushurl") || e.section == "submodule" && e.key == "url" {
			if why := urlProblem(e.value); why != "" {
				return &ConfigError{File: file, Line: e.line, Key: e.name(), Reason: why}
			}
		}
	}
	return nil
}

// urlProblem refuses a remote URL that makes git run a program: a
// transport helper (ext::…, fd::…, <helper>::…) or an option-like value.
func urlProblem(u string) string {
	if strings.Contains(u, "::") {
		return "names a remote helper (…::): git would run a program for it"
	}
	if strings.HasPrefix(u, "-") {
		return "starts with a dash"
	}
	return ""
}

// entry is one key of a configuration file.
type entry struct {
	section, subsection, key, value string
	line                            int
}

func (e entry) name() string {
	if e.subsection != "" {
		return e.section + "." + e.subsection + "." + e.key
	}
	return e.section + "." + e.key
}

// parseConfig parses git's configuration syntax strictly: a line brabo
// cannot read exactly as git does (a key on a section's line, a value
// continued on the next line, an unknown escape, a NUL) is refused, so
// that git can never see a key the check did not.
func parseConfig(file string, data []byte) ([]entry, error) {
	s := string(data)
	s = strings.TrimPrefix(s, "\ufeff")
	var out []entry
	section, sub := "", ""
	for n, line := range strings.Split(s, "\n") {
		ln := n + 1
		bad := func(why string) error { return &ConfigError{File: file, Line: ln, Reason: why} }
		if strings.ContainsRune(line, 0) {
			return nil, bad("holds a NUL byte")
		}
		line = strings.TrimSuffix(line, "\r")
		t := strings.TrimLeft(line, " \t")
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			var rest string
			var err error
			section, sub, rest, err = parseHeader(t)
			if err != nil {
				return nil, bad(err.Error())
			}
			if r := strings.TrimLeft(rest, " \t"); r != "" && r[0] != '#' && r[0] != ';' {
				return nil, bad("has something after the section header: brabo reads one thing per line")
			}
			continue
		}
		if section == "" {
			return nil, bad("has a key outside any section")
		}
		i := 0
		for i < len(t) && (isAlnum(t[i]) || t[i] == '-') {
			i++
		}
		if i == 0 || !isAlpha(t[0]) {
			return nil, bad("is not a key")
		}
		key := strings.ToLower(t[:i])
		rest := strings.TrimLeft(t[i:], " \t")
		value := ""
		switch {
		case rest == "" || rest[0] == '#' || rest[0] == ';':
			// a boolean key without a value
		case rest[0] == '=':
			v, err := parseValue(rest[1:])
			if err != nil {
				return nil, bad(err.Error())
			}
			value = v
		default:
			return nil, bad("has a key followed by something other than =")
		}
		out = append(out, entry{section: section, subsection: sub, key: key, value: value, line: ln})
	}
	return out, nil
}

// parseHeader reads [section], [section "subsection"] or the old
// [section.subsection], and returns what follows the closing bracket.
func parseHeader(t string) (section, sub, rest string, err error) {
	i := 1
	for i < len(t) && (isAlnum(t[i]) || t[i] == '-' || t[i] == '.') {
		i++
	}
	name := t[1:i]
	if name == "" {
		return "", "", "", errors.New("is a section header without a name")
	}
	if i < len(t) && t[i] == ']' {
		section, sub, _ = strings.Cut(name, ".")
		return strings.ToLower(section), strings.ToLower(sub), t[i+1:], nil
	}
	if strings.Contains(name, ".") {
		return "", "", "", errors.New("is a section header brabo cannot read")
	}
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	if i >= len(t) || t[i] != '"' {
		return "", "", "", errors.New("is a section header brabo cannot read")
	}
	i++
	var b strings.Builder
	for ; i < len(t) && t[i] != '"'; i++ {
		if t[i] == '\\' {
			i++
			if i >= len(t) {
				return "", "", "", errors.New("is a section header cut short")
			}
		}
		b.WriteByte(t[i])
	}
	if i+1 >= len(t) || t[i] != '"' || t[i+1] != ']' {
		return "", "", "", errors.New("is a section header brabo cannot read")
	}
	return strings.ToLower(name), b.String(), t[i+2:], nil
}

// parseValue reads a value as git does: quotes, the escapes \\ \" \n \t
// \b, a comment outside quotes, surrounding blanks dropped. A value
// continued on the next line (a final backslash) is refused.
func parseValue(v string) (string, error) {
	var b strings.Builder
	quoted := false
	pending := 0 // blanks seen outside quotes, kept only if more follows
	v = strings.TrimLeft(v, " \t")
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
			flush(&b, &pending)
		case c == '\\':
			if i+1 >= len(v) {
				return "", errors.New("continues on the next line: brabo reads one value per line")
			}
			i++
			flush(&b, &pending)
			switch v[i] {
			case '\\', '"':
				b.WriteByte(v[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				return "", fmt.Errorf("has an unknown escape \\%c", v[i])
			}
		case !quoted && (c == '#' || c == ';'):
			return b.String(), nil
		case !quoted && (c == ' ' || c == '\t'):
			pending++
		default:
			flush(&b, &pending)
			b.WriteByte(c)
		}
	}
	if quoted {
		return "", errors.New("has an unclosed quote")
	}
	return b.String(), nil
}

func flush(b *strings.Builder, pending *int) {
	if b.Len() > 0 {
		for ; *pending > 0; *pending-- {
			b.WriteByte(' ')
		}
	}
	*pending = 0
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// Check finds the repository holding dir inside bound (Locate) and checks
// its configuration (CheckConfig). A folder that is in no repository is
// ErrNoRepository, for the caller to judge.
func Check(bound, dir string) (*Layout, error) {
	l, err := Locate(bound, dir)
	if err != nil {
		return nil, err
	}
	return l, l.CheckConfig()
}

// CheckBare checks a repository named by its git folder, a local
// remote's: a bare repository, or a folder with a .git. Its gitfile,
// commondir and alternates are followed wherever they lead (a remote is
// not the project's), and every configuration file they reach is checked.
func CheckBare(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		_, err := Check("", dir)
		return err
	}
	gitdir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("the remote %s: %w", dir, err)
	}
	l := &Layout{GitDir: gitdir, CommonDir: gitdir}
	if data, err := readSmall(filepath.Join(gitdir, "commondir")); err == nil {
		target := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(target) {
			target = filepath.Join(gitdir, target)
		}
		l.CommonDir = filepath.Clean(target)
	}
	return l.CheckConfig()
}

// LocalValue is what `git config --local --get <section>.<key>` prints in
// the repository: the last value of the key (no subsection) in the common
// folder's config, "" when it is not set or has no value. It reads the
// file as data, the way CheckConfig does, so that brabo need not start a
// git to learn it; a file CheckConfig would refuse is refused here too.
func (l *Layout) LocalValue(section, key string) (string, error) {
	f := filepath.Join(l.CommonDir, "config")
	data, err := readSmall(f)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", &ConfigError{File: f, Reason: "cannot be read: " + err.Error()}
	}
	entries, err := parseConfig(f, data)
	if err != nil {
		return "", err
	}
	v := ""
	for _, e := range entries {
		if e.section == strings.ToLower(section) && e.subsection == "" && e.key == strings.ToLower(key) {
			v = e.value
		}
	}
	return v, nil
}
