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

// ChangeKind says what a change of the permissions file does to what brabo
// approves.
type ChangeKind string

// Kinds of change, from the trusted version to the file on disk.
const (
	// ChangeSame: the two files hold the same rules.
	ChangeSame ChangeKind = "same"
	// ChangeTighten: the file on disk only adds deny or ask entries or
	// removes allow entries; it applies at once.
	ChangeTighten ChangeKind = "tighten"
	// ChangeLoosen: the file on disk adds an allow entry or removes a deny
	// or ask entry (or the trusted version is invalid, and approved
	// nothing); it waits for a maintainer.
	ChangeLoosen ChangeKind = "loosen"
	// ChangeInvalid: the file on disk is invalid; it waits too, and brabo
	// keeps deciding with the trusted version, its denies included.
	ChangeInvalid ChangeKind = "invalid"
)

// ListDiff is what changed in one list: the entries as written in the file
// that has them (added: the file on disk; removed: the trusted version).
type ListDiff struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Change is the difference between the trusted version of a permissions
// file and the file on disk.
type Change struct {
	Kind  ChangeKind `json:"kind"`
	Allow ListDiff   `json:"allow"`
	Deny  ListDiff   `json:"deny"`
	Ask   ListDiff   `json:"ask"`
	// Invalid says why the file on disk is invalid (ChangeInvalid), or why
	// the trusted version is (a loosening, since it approved nothing).
	Invalid string `json:"invalid,omitempty"`
}

// Applies reports whether brabo decides with the file on disk: it holds the
// same rules as the trusted version, or stricter ones.
func (c Change) Applies() bool { return c.Kind == ChangeSame || c.Kind == ChangeTighten }

// Summary is the change in one line, such as
// `loosen: allow +Terminal(bash); deny -Terminal(curl)`.
func (c Change) Summary() string {
	var parts []string
	for _, l := range []struct {
		name string
		d    ListDiff
	}{{"allow", c.Allow}, {"deny", c.Deny}, {"ask", c.Ask}} {
		var items []string
		for _, p := range l.d.Added {
			items = append(items, "+"+p)
		}
		for _, p := range l.d.Removed {
			items = append(items, "-"+p)
		}
		if len(items) > 0 {
			parts = append(parts, l.name+" "+strings.Join(items, " "))
		}
	}
	s := string(c.Kind)
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	if c.Invalid != "" {
		s += " (" + c.Invalid + ")"
	}
	return s
}

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
	content := ""
	if open := strings.IndexByte(p.source, '('); open >= 0 {
		content = strings.TrimSuffix(p.source[open+1:], ")")
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
