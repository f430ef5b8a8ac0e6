package brabo

import "time"

// PermissionsTrust is which version of a project's permissions.json brabo
// trusts now (DESIGN §9, "Trusted policy").
type PermissionsTrust struct {
	ProjectID string
	// Hash is policy.ContentHash of the current trusted content.
	Hash string
	// Seq is the current version's entry in the project's history
	// (PermissionsHistory): it grows by one each time another version
	// becomes current.
	Seq       int64
	UpdatedAt time.Time
}

// PermissionsHistoryEntry is one version of a project's permissions.json
// becoming its current trusted one.
type PermissionsHistoryEntry struct {
	// Seq numbers the entries of one project from 1, in order.
	Seq  int64
	Hash string
	// Source is one of the Trust* constants (not TrustReported).
	Source string
	// ActorID is who made it current, "" for the system; ActionID the
	// write_file that wrote it.
	ActorID  string
	ActionID string
	At       time.Time
}

// Where a trusted version of permissions.json came from.
const (
	TrustCreated     = "created"      // the file when the project was created
	TrustFirstUse    = "first_use"    // a project older than trust: the file at its first use
	TrustPut         = "put"          // written by PUT …/permissions
	TrustAlwaysAllow = "always_allow" // written by an always-allow click
	TrustWriteFile   = "write_file"   // written by a write_file a maintainer approved
	TrustAccepted    = "accepted"     // found on disk and accepted by a maintainer
	TrustActivated   = "activated"    // the seeded allow list written by activating execution
	// TrustReported marks a version that is not trusted: brabo saw it on
	// disk and recorded the change once.
	TrustReported = "reported"
)

// PermissionsVersion is one content of a project's permissions.json that
// brabo trusts, or saw on disk and reported.
type PermissionsVersion struct {
	ProjectID string
	Hash      string
	// Trusted says a maintainer or brabo accepted this content once (its
	// bytes are kept); only the one PermissionsTrust names is trusted now.
	Trusted bool
	// Content is the file's bytes, kept for a trusted version (Restore
	// writes it back); nil for a reported one, and in listings.
	Content []byte
	// Source is one of the Trust* constants.
	Source string
	// ActorID is who made it trusted (the member who wrote or accepted
	// it), "" for the system; ActionID the write_file that wrote it.
	ActorID  string
	ActionID string
	// CreatedAt is when brabo first saw it; TrustedAt when it became
	// trusted (zero for a reported one).
	CreatedAt time.Time
	TrustedAt time.Time
	// ReportedSeq is the history entry this content was last reported
	// against on disk (ReportPermissions), 0 for never.
	ReportedSeq int64
}
