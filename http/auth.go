package http

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
)

// NewToken returns a fresh bearer token (brabo.NewToken). Only its hash is
// stored.
func NewToken() string { return brabo.NewToken() }

// HashToken is how tokens are stored and looked up (brabo.HashToken).
func HashToken(token string) string { return brabo.HashToken(token) }

// caller is who a request comes from: a member or an agent, and for the
// web page the member's session.
type caller struct {
	member  *brabo.Member
	agent   *brabo.Agent
	session *brabo.Session
}

type callerKey struct{}

func callerOf(r *http.Request) caller { return r.Context().Value(callerKey{}).(caller) }

// authenticated resolves the bearer token; every /v1 request without a
// valid one is 401, before anything else is looked at.
func (s *Server) authenticated(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110 §11.1).
		scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		ok = ok && strings.EqualFold(scheme, "Bearer")
		token = strings.TrimSpace(token)
		if !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brabo"`)
			s.writeError(w, r, errorf(http.StatusUnauthorized, brabo.CodeUnauthorized, "a bearer token is required (Authorization: Bearer <token>)"))
			return
		}
		c, err := s.lookupToken(r.Context(), token)
		if errors.Is(err, brabo.ErrNotFound) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brabo", error="invalid_token"`)
			s.writeError(w, r, errorf(http.StatusUnauthorized, brabo.CodeUnauthorized, "the bearer token is not valid"))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c))); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// lookupToken resolves an API token to its member or agent, through the
// short cache; brabo.ErrNotFound when the token is nobody's (or revoked).
// A web session's secret is not an API token: it is looked up under
// another key, and never here.
func (s *Server) lookupToken(ctx context.Context, token string) (caller, error) {
	key := "t:" + HashToken(token)
	gen := s.tokens.fresh(s.authSignal)
	if c, ok := s.tokens.get(key); ok {
		return c, nil
	}
	var c caller
	var err error
	if c.member, c.agent, err = s.Projects.ByTokenHash(ctx, key[2:]); err != nil {
		return caller{}, err
	}
	s.tokens.put(key, c, gen, time.Now().Add(tokenTTL))
	return c, nil
}

// member returns the calling member, or 403 for an agent: agents propose
// and read their own actions, they never decide or administer.
func (c caller) requireMember(what string) (*brabo.Member, error) {
	if c.member == nil {
		return nil, errorf(http.StatusForbidden, brabo.CodeForbiddenRole, "an agent token cannot %s", what)
	}
	return c.member, nil
}

func (c caller) actor() brabo.Actor { return brabo.Actor{Agent: c.agent, Member: c.member} }

// projectAccess loads the project and the caller's role in it. A project
// the caller cannot see is 404, never 403: no cross-project reads, not even
// of existence. An agent sees only its own project, with no role.
func (s *Server) projectAccess(ctx context.Context, c caller, projectID string) (*brabo.Project, brabo.Role, error) {
	p, role, err := s.Projects.ProjectAccess(ctx, c.actor(), projectID)
	if errors.Is(err, brabo.ErrNotFound) {
		return nil, "", notFound("project " + projectID)
	}
	return p, role, err
}

// requireRole refuses a member below min in the project.
func requireRole(role, min brabo.Role, what string) error {
	if !role.AtLeast(min) {
		return errorf(http.StatusForbidden, brabo.CodeForbiddenRole, "%s needs the role %s; you are %s", what, min, role)
	}
	return nil
}

// tokenCache remembers, for a short while, whom a token or a session
// belongs to: looking it up is a read transaction per request otherwise.
// A revocation anywhere (this instance or another on the database) sends
// the store's AuthSignal, and the next lookup drops every entry before it
// reads one, so a revoked credential works at most until the signal
// arrives, not until its entry runs out.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]tokenEntry
	// gen counts the drops. A lookup that read the store before a drop
	// must not put what it read after it: that could be a credential
	// revoked in between.
	gen uint64
}

type tokenEntry struct {
	c       caller
	expires time.Time
}

const (
	tokenTTL       = 10 * time.Second
	tokenCacheSize = 10000
)

// fresh drops every entry if a revocation was signalled since the last
// look, and returns the generation a lookup starting now puts under.
func (tc *tokenCache) fresh(signal <-chan struct{}) uint64 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	select {
	case <-signal:
		tc.m = nil
		tc.gen++
	default:
	}
	return tc.gen
}

func (tc *tokenCache) get(key string) (caller, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.m[key]
	if !ok || time.Now().After(e.expires) {
		return caller{}, false
	}
	return e.c, true
}

// put remembers c until expires, unless the cache was dropped since the
// lookup began (gen).
func (tc *tokenCache) put(key string, c caller, gen uint64, expires time.Time) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if gen != tc.gen {
		return
	}
	if tc.m == nil || len(tc.m) >= tokenCacheSize {
		tc.m = make(map[string]tokenEntry)
	}
	tc.m[key] = tokenEntry{c: c, expires: expires}
}
