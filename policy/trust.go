package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/brabo-dev/brabo"
)

// Trusted policy (DESIGN §9, "Trusted policy"): brabo decides with the
// permissions file on disk only when, compared with the version it trusts,
// the file does not let more through. Compare says which way a change goes;
// it compares what the files mean (their compiled, normalised pattern
// sets), so reordering entries, white space, unknown keys and the Bash(…)
// spelling of Terminal(…) change nothing.

// The change types live in the root (permchange.go), where the service
// interfaces that answer them are; these names keep policy's own spelling.
type (
	// ChangeKind is brabo.PermissionsChangeKind.
	ChangeKind = brabo.PermissionsChangeKind
	// ListDiff is brabo.PermissionsListDiff.
	ListDiff = brabo.PermissionsListDiff
	// Change is brabo.PermissionsChange.
	Change = brabo.PermissionsChange
)

// Kinds of change, from the trusted version to the file on disk.
const (
	ChangeSame    = brabo.PermissionsSame
	ChangeTighten = brabo.PermissionsTighten
	ChangeLoosen  = brabo.PermissionsLoosen
	ChangeInvalid = brabo.PermissionsInvalid
)

// Compare compares the file on disk with the trusted version, both compiled
// by Parse. A nil *Rules is the empty file.
//
// The file on disk applies at once (ChangeSame, ChangeTighten) only when it
// lets nothing more through: every allow entry it has, the trusted version
// has too, and every deny and ask entry the trusted version has, it has too.
// An invalid file on disk never applies. An invalid trusted version
// approved nothing at all, so any valid file is a loosening of it.
func Compare(trusted, onDisk *Rules) Change {
	c := Change{Kind: ChangeSame}
	c.Allow = diffList(trusted.entries(listAllow), onDisk.entries(listAllow))
	c.Deny = diffList(trusted.entries(listDeny), onDisk.entries(listDeny))
	c.Ask = diffList(trusted.entries(listAsk), onDisk.entries(listAsk))
	switch {
	case onDisk.Err() != nil:
		c.Kind, c.Invalid = ChangeInvalid, invalidFileReason(onDisk.Err())
	case trusted.Err() != nil:
		c.Kind, c.Invalid = ChangeLoosen, "the trusted version is invalid and approved nothing: "+invalidFileReason(trusted.Err())
	case len(c.Allow.Added) > 0 || len(c.Deny.Removed) > 0 || len(c.Ask.Removed) > 0:
		c.Kind = ChangeLoosen
	case len(c.Allow.Removed) > 0 || len(c.Deny.Added) > 0 || len(c.Ask.Added) > 0:
		c.Kind = ChangeTighten
	}
	return c
}

// ContentHash names a version of a permissions file: the SHA-256 of its
// bytes, in lower-case hex. A missing file is the empty file, and has the
// hash of no bytes.
func ContentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// entry is one compiled pattern under its normalised key.
type entry struct{ key, source string }

// entries lists the compiled patterns of list k under their normalised
// keys, in file order, each key once. An invalid file's entries are the
// ones that compiled: the difference shows what it says, even though it is
// not used.
func (r *Rules) entries(k listKind) []entry {
	if r == nil {
		return nil
	}
	var out []entry
	seen := map[string]bool{}
	for _, p := range r.lists[k].patterns {
		key := p.normalKey()
		if !seen[key] {
			seen[key] = true
			out = append(out, entry{key: key, source: p.source})
		}
	}
	return out
}

// normalKey is what a pattern means, independent of how it is written: a
// Terminal pattern's tokens after quote removal (with their wildcard mark),
// whatever its label's spelling (Bash(…) is Terminal(…)); a typed pattern's
// type and its content.
func (p *pattern) normalKey() string {
	if p.typ == brabo.Terminal {
		var b strings.Builder
		b.WriteString(string(brabo.Terminal))
		for _, t := range p.tokens {
			fmt.Fprintf(&b, " %q", t.text)
			if t.wildcard {
				b.WriteByte('*')
			}
		}
		return b.String()
	}
	if pathLabel(string(p.typ)) && p.synonym != "" {
		// Claude Code's Read(./src/**) is ReadFile(src/**).
		return string(p.typ) + "(" + p.path.key() + ")"
	}
	src := p.source
	if p.synonym != "" {
		src = p.synonym // mcp__github__x is McpTool(github__x)
	}
	content := ""
	if open := strings.IndexByte(src, '('); open >= 0 {
		content = strings.TrimSuffix(src[open+1:], ")")
	}
	return string(p.typ) + "(" + content + ")"
}

// diffList returns the entries of onDisk that trusted lacks (added) and the
// entries of trusted that onDisk lacks (removed).
func diffList(trusted, onDisk []entry) ListDiff {
	var d ListDiff
	keys := func(list []entry) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, e := range list {
			m[e.key] = true
		}
		return m
	}
	inTrusted, inDisk := keys(trusted), keys(onDisk)
	for _, e := range onDisk {
		if !inTrusted[e.key] {
			d.Added = append(d.Added, e.source)
		}
	}
	for _, e := range trusted {
		if !inDisk[e.key] {
			d.Removed = append(d.Removed, e.source)
		}
	}
	return d
}
