package brabo

import "strings"

// The difference between two versions of a project's permissions.json, as
// policy.Compare computes it (policy aliases these names) and the trust
// routes answer it: a root type, so the service interfaces (service.go)
// can carry it.

// MaxPermissionsBytes bounds the permissions file brabo reads and takes.
const MaxPermissionsBytes = 4 << 20

// PermissionsChangeKind says what a change of the permissions file does to what brabo
// approves.
type PermissionsChangeKind string

// Kinds of change, from the trusted version to the file on disk.
const (
	// PermissionsSame: the two files hold the same rules.
	PermissionsSame PermissionsChangeKind = "same"
	// PermissionsTighten: the file on disk only adds deny or ask entries or
	// removes allow entries; it applies at once.
	PermissionsTighten PermissionsChangeKind = "tighten"
	// PermissionsLoosen: the file on disk adds an allow entry or removes a deny
	// or ask entry (or the trusted version is invalid, and approved
	// nothing); it waits for a maintainer.
	PermissionsLoosen PermissionsChangeKind = "loosen"
	// PermissionsInvalid: the file on disk is invalid; it waits too, and brabo
	// keeps deciding with the trusted version, its denies included.
	PermissionsInvalid PermissionsChangeKind = "invalid"
)

// PermissionsListDiff is what changed in one list: the entries as written in the file
// that has them (added: the file on disk; removed: the trusted version).
type PermissionsListDiff struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// PermissionsChange is the difference between the trusted version of a permissions
// file and the file on disk.
type PermissionsChange struct {
	Kind  PermissionsChangeKind `json:"kind"`
	Allow PermissionsListDiff   `json:"allow"`
	Deny  PermissionsListDiff   `json:"deny"`
	Ask   PermissionsListDiff   `json:"ask"`
	// Invalid says why the file on disk is invalid (PermissionsInvalid), or why
	// the trusted version is (a loosening, since it approved nothing).
	Invalid string `json:"invalid,omitempty"`
}

// Applies reports whether brabo decides with the file on disk: it holds the
// same rules as the trusted version, or stricter ones.
func (c PermissionsChange) Applies() bool {
	return c.Kind == PermissionsSame || c.Kind == PermissionsTighten
}

// Summary is the change in one line, such as
// `loosen: allow +Terminal(bash); deny -Terminal(curl)`.
func (c PermissionsChange) Summary() string {
	var parts []string
	for _, l := range []struct {
		name string
		d    PermissionsListDiff
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
