package brabo

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// RemoteNameProblem returns why name cannot be the name of a configured
// git remote, or "" when it can: letters, digits, '.', '_' and '-', not
// starting with '.' or '-', at most 100 bytes, not ending in ".lock". A
// URL or a path is refused: pushing to wherever a payload points is not
// what approving a push means.
func RemoteNameProblem(name string) string {
	if !remoteNameRE().MatchString(name) || strings.HasSuffix(name, ".lock") {
		return "is not the name of a configured remote (letters, digits, '.', '_', '-')"
	}
	return ""
}

var remoteNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`) })

// RevisionProblem returns why rev cannot be read as a revision (a start
// point), or "" when it can: git would read a leading '-' as an option,
// and spaces or control characters are never part of one.
func RevisionProblem(rev string) string {
	if strings.HasPrefix(rev, "-") || strings.ContainsFunc(rev, func(r rune) bool {
		return r <= ' ' || r == 0x7f
	}) || len(rev) > 255 {
		return "is not a revision (no leading '-', spaces or control characters)"
	}
	return ""
}

// BranchNameProblem returns why name cannot be a branch name, or "" when it
// can.
// It is the rule of `git check-ref-format --branch`, stricter where git
// would read the name as something else: no leading '-' (an option), no
// "@{" (reflog syntax), not "HEAD" or "@".
func BranchNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.HasPrefix(name, "-"):
		return "starts with '-' and would be read as an option"
	case name == "HEAD" || name == "@":
		return "is reserved by git"
	case len(name) > 255:
		return "is longer than 255 bytes"
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return "has an empty path component"
	case strings.HasSuffix(name, "."):
		return "ends with '.'"
	case strings.Contains(name, ".."):
		return `holds ".."`
	case strings.Contains(name, "@{"):
		return `holds "@{"`
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return fmt.Sprintf("holds the character %q, which a ref name cannot", c)
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") {
			return "has a component starting with '.'"
		}
		if strings.HasSuffix(comp, ".lock") {
			return `has a component ending with ".lock"`
		}
	}
	return ""
}
