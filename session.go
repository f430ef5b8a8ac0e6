package brabo

import "time"

// Session is a web login: a random secret the browser's cookie carries,
// stored hashed, that expires and can be revoked. It is not an API token:
// a session opens the web page only, and a member token never opens the
// page without logging in first.
type Session struct {
	ID       string `json:"id"`
	MemberID string `json:"memberId"`
	// TokenHash is the hash of the cookie's secret; the secret itself is
	// never stored.
	TokenHash string `json:"-"`
	// UserAgent is the browser that logged in (clipped), so a person
	// listing their sessions can tell them apart.
	UserAgent string    `json:"userAgent,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

// Live reports whether the session still opens the page at now: not
// revoked, not expired.
func (s *Session) Live(now time.Time) bool {
	return s.RevokedAt.IsZero() && now.Before(s.ExpiresAt)
}

// AuthSignal is the name Store.Subscribe takes for the signal a commit
// sends when it revoked or replaced a token or a session: every instance
// drops the credentials it cached, so a revoked one stops working there
// at once instead of when its cache entry runs out. It never collides
// with a project id.
const AuthSignal = "brabo:auth"
