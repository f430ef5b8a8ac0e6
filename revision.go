package brabo

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// RevisionPart is one thing a card binds its approval to: the commit a
// push sends ("commit"), the tree a commit records ("tree"), the hash of
// the file a write replaces ("file")… Value is the thing itself (a SHA, a
// hash, a command); the revision carries a digest of it.
type RevisionPart struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// The revision of a card (docs/api.md, "Approving what was shown") is
// "r1." then, for each part in order, "<name>-<12 hex of its value's
// SHA-256>", joined by ".": two cards have the same revision when
// every part is the same, and a stale revision says by itself which part
// moved (RevisionMoved), without the server keeping the cards it showed.
const revisionPrefix = "r1"

// MakeRevision is the revision of a card binding parts.
func MakeRevision(parts []RevisionPart) string {
	out := []string{revisionPrefix}
	for _, p := range parts {
		out = append(out, p.Name+"-"+partDigest(p.Value))
	}
	return strings.Join(out, ".")
}

func partDigest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:6])
}

// RevisionMoved names the parts of parts that differ from the revision
// sent ("commit", "tree"…), in their order; every part when sent is not a
// revision brabo made. nil when sent is the revision of parts.
func RevisionMoved(sent string, parts []RevisionPart) []string {
	fields := strings.Split(sent, ".")
	had := map[string]string{}
	if len(fields) > 0 && fields[0] == revisionPrefix {
		for _, f := range fields[1:] {
			if name, digest, ok := strings.Cut(f, "-"); ok {
				had[name] = digest
			}
		}
	}
	var moved []string
	for _, p := range parts {
		if had[p.Name] != partDigest(p.Value) {
			moved = append(moved, p.Name)
		}
		delete(had, p.Name)
	}
	for name := range had {
		moved = append(moved, name) // a part the card no longer binds
	}
	return moved
}

// BoundParts is the parts as a map, name to value: what an approval hands
// the executor (ExecRequest.Bound). nil for no parts.
func BoundParts(parts []RevisionPart) map[string]string {
	if len(parts) == 0 {
		return nil
	}
	m := make(map[string]string, len(parts))
	for _, p := range parts {
		m[p.Name] = p.Value
	}
	return m
}

// FileAbsent is the file part of a write_file whose target does not exist.
const FileAbsent = "absent"

// ContentHash is how a revision names content: "sha256:" and the hex of
// its SHA-256 (a write_file's new content, the file it replaces).
func ContentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
