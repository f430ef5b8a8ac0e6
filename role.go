package brabo

import "fmt"

// Role is a member's role in a project. Roles are ordered:
// Developer < Maintainer < Owner. The zero value is no role at all and is
// below every minimum.
type Role string

// The three roles of DESIGN §3.2.
const (
	Developer  Role = "developer"
	Maintainer Role = "maintainer"
	Owner      Role = "owner"
)

func (r Role) rank() int {
	switch r {
	case Developer:
		return 1
	case Maintainer:
		return 2
	case Owner:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r is min or above it. An invalid role is below
// everything, an invalid min is above everything.
func (r Role) AtLeast(min Role) bool {
	return r.Valid() && min.Valid() && r.rank() >= min.rank()
}

// ParseRole returns the role for its name, or an error that names the value.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !r.Valid() {
		return "", fmt.Errorf("unknown role %q (want developer, maintainer or owner)", s)
	}
	return r, nil
}

// Policy is what the policy engine decides for an action.
type Policy string

// The three decisions. The zero value is "no opinion".
const (
	AutoApprove     Policy = "auto_approve"
	RequireApproval Policy = "require_approval"
	Deny            Policy = "deny"
)

// Valid reports whether p is one of the three decisions.
func (p Policy) Valid() bool {
	return p == AutoApprove || p == RequireApproval || p == Deny
}

// ParsePolicy returns the decision for its name, or an error that names it.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(s)
	if !p.Valid() {
		return "", fmt.Errorf("unknown policy %q (want auto_approve, require_approval or deny)", s)
	}
	return p, nil
}
