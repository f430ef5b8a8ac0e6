package policy

import (
	"errors"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"
)

// Path patterns are the content of WriteFile(…) (and of the other typed
// labels whose content is a path): a cleaned path relative to the project
// folder, with '*' matching within one element and '**' any number of
// elements (DESIGN §9, "Typed content"). WriteFile() with no content
// matches every path. The meaning is the same in allow, deny and ask.

// pathPattern is one compiled path pattern; nil elements match every path.
type pathPattern struct {
	els []string
	// The readings of Claude Code's spelling (claudespell.go): where the
	// path starts (pathBase…), a name matched at any depth, a match that
	// covers everything under the path matched.
	base     string
	anyDepth bool
	under    bool
}

// errPathPattern explains the shape of a path pattern.
var errPathPattern = errors.New(`a path pattern is a clean path relative to the project folder, such as "src/**" or "docs/*.md"`)

// parsePathPattern compiles the content of a typed pattern whose content is
// a path. "" is every path.
func parsePathPattern(content string) (pathPattern, error) {
	if content == "" {
		return pathPattern{}, nil
	}
	switch {
	case strings.HasPrefix(content, "/"):
		return pathPattern{}, errors.New("a path pattern is relative to the project folder, not absolute")
	case path.Clean(content) != content || strings.Contains(content, "\\"):
		return pathPattern{}, errPathPattern
	case shell.HasDotDot(content):
		return pathPattern{}, errors.New(`a path pattern cannot climb out with ".."`)
	}
	els := strings.Split(content, "/")
	if els[0] == "**" {
		return pathPattern{}, errors.New(`"**" at the root would match every path; write WriteFile() for that, or name a folder ("src/**")`)
	}
	for _, el := range els {
		if el != "**" && strings.Contains(el, "**") {
			return pathPattern{}, errors.New(`"**" is a whole path element ("src/**"), not part of one`)
		}
	}
	return pathPattern{els: els}, nil
}

// match reports whether rel, a clean path relative to the project folder,
// is one the pattern names.
func (p pathPattern) match(rel string) bool {
	if p.els == nil {
		return true
	}
	if p.base != pathBaseProject {
		return false
	}
	return p.matchEls(strings.Split(rel, "/"))
}

func matchElements(pat, els []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(els); i++ {
				if matchElements(rest, els[i:]) {
					return i > 0 || len(rest) > 0 // ** is at least one element when it ends the pattern
				}
			}
			return false
		}
		if len(els) == 0 || !globElementCase(pat[0], els[0]) {
			return false
		}
		pat, els = pat[1:], els[1:]
	}
	return len(els) == 0
}

// globElementCase matches one element with '*' as any run of characters,
// in the case written.
func globElementCase(pattern, el string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == el
	}
	if !strings.HasPrefix(el, parts[0]) {
		return false
	}
	el = el[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(el, mid)
		if i < 0 {
			return false
		}
		el = el[i+len(mid):]
	}
	return strings.HasSuffix(el, parts[len(parts)-1])
}

// relativeTo returns p (relative to root, or absolute) as a clean path
// relative to root, and false when it lies outside.
func relativeTo(p, root string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		p = path.Join(root, p)
	}
	p = path.Clean(p)
	if root == "" || !shell.Within(p, root) || p == root {
		return "", false
	}
	return strings.TrimPrefix(p, root+"/"), true
}

// pathLabel reports whether a type's pattern content is a path.
func pathLabel(t string) bool { return t == "write_file" || t == "read_file" }
