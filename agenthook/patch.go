package agenthook

import (
	"errors"
	"fmt"
	"strings"
)

// patchFile is one file an apply_patch touches, with what the card shows:
// an added file's content, a change's hunks, a deletion or a move.
type patchFile struct {
	path    string
	content string
}

// patchFiles reads Codex's apply_patch envelope ("*** Begin Patch" …
// "*** End Patch") and returns every file it adds, changes, deletes or
// moves to; a move is two writes, the old path and the new. Every one must
// pass for the patch to be applied.
func patchFiles(text string) ([]patchFile, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	begin := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			begin = i
			break
		}
	}
	if begin < 0 {
		return nil, errors.New("apply_patch without a \"*** Begin Patch\" envelope")
	}
	var out []patchFile
	var cur *patchFile
	add := false
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, l := range lines[begin+1:] {
		switch {
		case strings.TrimSpace(l) == "*** End Patch":
			flush()
			if len(out) == 0 {
				return nil, errors.New("apply_patch that touches no file")
			}
			return out, nil
		case strings.HasPrefix(l, "*** Add File: "):
			flush()
			cur, add = &patchFile{path: strings.TrimSpace(strings.TrimPrefix(l, "*** Add File: "))}, true
		case strings.HasPrefix(l, "*** Update File: "):
			flush()
			cur, add = &patchFile{path: strings.TrimSpace(strings.TrimPrefix(l, "*** Update File: "))}, false
		case strings.HasPrefix(l, "*** Delete File: "):
			flush()
			out = append(out, patchFile{path: strings.TrimSpace(strings.TrimPrefix(l, "*** Delete File: ")), content: "(deleted)"})
		case strings.HasPrefix(l, "*** Move to: "):
			if cur == nil {
				return nil, errors.New("apply_patch: \"*** Move to\" outside an update")
			}
			to := strings.TrimSpace(strings.TrimPrefix(l, "*** Move to: "))
			out = append(out, patchFile{path: cur.path, content: "(moved to " + to + ")"})
			cur.path = to
		case cur != nil:
			if add {
				cur.content += strings.TrimPrefix(l, "+") + "\n"
			} else {
				cur.content += l + "\n"
			}
		}
	}
	return nil, fmt.Errorf("apply_patch without \"*** End Patch\"")
}
