package http

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
)

// The web approval queue: server-rendered pages and fragments, embedded,
// with a vendored htmx (web/static/htmx.min.js, 2.0.11, see
// web/static/VERSIONS). A person logs in with a member token; an HttpOnly
// cookie then carries a session of its own (sessions.go), never the
// token; every state-changing request carries a CSRF token derived
// from that cookie, on top of the cross-origin protection the whole
// handler has.

//go:embed web/templates/*.html
var webTemplates embed.FS

//go:embed web/static
var webStatic embed.FS

const (
	sessionCookie = "brabo_session"
	loginCookie   = "brabo_login"
	csrfHeader    = "X-CSRF-Token"
	csrfField     = "csrf"
	// maxFormBytes bounds the web's form bodies: a deny reason, a token.
	maxFormBytes = 64 << 10
)

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"sentence":    brabo.DecisionSentence,
	"shortID":     shortID,
	"visible":     brabo.Printable,
	"multiline":   multiline,
	"short":       shortHash,
	"stamp":       stamp,
	"iso":         iso,
	"since":       since,
	"micros":      func(t time.Time) int64 { return t.UnixMicro() },
	"flagKinds":   brabo.FlagKinds,
	"statusClass": statusClass,
	"actionClass": actionClass,
	"statusText":  statusText,
	"add":         func(a, b int) int { return a + b },
}).ParseFS(webTemplates, "web/templates/*.html"))

// viewer is the member looking at the web page.
type viewer struct {
	Member *brabo.Member
	CSRF   string
}

// page is what every full page's layout reads.
type page struct {
	Title  string
	Viewer *viewer
	// Nav lists the projects the viewer has a role in.
	Nav  []navProject
	Body any
}

type navProject struct {
	ID, Slug string
	Role     brabo.Role
}

// webRoute is one route of the web page. Page routes redirect a visitor
// without a session to the login page; fragment routes answer 401.
type webRoute struct {
	method, pattern string
	page            bool
	handle          func(*Server, http.ResponseWriter, *http.Request, *viewer) error
}

var webRoutes = []webRoute{
	{"GET", "/{$}", true, (*Server).queuePage},
	{"GET", "/ui/queue", false, (*Server).queueFragment},
	{"GET", "/ui/stream", false, (*Server).webStream},
	{"GET", "/ui/cards/{action}", false, (*Server).cardFragment},
	{"POST", "/ui/actions/{action}/approve", false, (*Server).webApprove},
	{"GET", "/ui/actions/{action}/deny", false, (*Server).denyForm},
	{"POST", "/ui/actions/{action}/deny", false, (*Server).webDeny},
	{"GET", "/ui/actions/{action}/always", false, (*Server).alwaysPreview},
	{"POST", "/ui/actions/{action}/always", false, (*Server).webAlways},
	{"POST", "/ui/actions/{action}/allow-network", false, (*Server).webAllowNetwork},
	{"GET", "/ui/projects/{project}/agents", true, (*Server).agentsPage},
	{"POST", "/ui/projects/{project}/agents/{agent}/mode", false, (*Server).webSetMode},
	{"POST", "/ui/projects/{project}/agents/{agent}/revoke", false, (*Server).webRevokeAgent},
	{"POST", "/ui/projects/{project}/agents/{agent}/patterns/remove", false, (*Server).webRemovePattern},
	{"POST", "/ui/projects/{project}/settings", false, (*Server).webAgentSettings},
	{"POST", "/ui/projects/{project}/raise", false, (*Server).webRaiseParallel},
	{"GET", "/ui/tasks/{task}", true, (*Server).sessionLogPage},
	{"GET", "/ui/actions/{action}", true, (*Server).actionPage},
	{"POST", "/ui/bulk", false, (*Server).webBulk},
	{"GET", "/ui/projects/{project}/history", true, (*Server).historyPage},
	{"GET", "/ui/projects/{project}/permissions", true, (*Server).permissionsPage},
	{"GET", "/ui/projects/{project}/check", false, (*Server).webCheck},
	{"POST", "/ui/projects/{project}/permissions/accept", false, (*Server).webAcceptPermissions},
	{"POST", "/ui/projects/{project}/permissions/restore", false, (*Server).webRestorePermissions},
	{"POST", "/ui/projects/{project}/activate", false, (*Server).webActivate},
	{"POST", "/ui/projects/{project}/budget", false, (*Server).webSetBudget},
	{"GET", "/containers", true, (*Server).containersPage},
	{"POST", "/ui/containers/{project}/stop", false, (*Server).webContainerStop},
	{"POST", "/ui/containers/{project}/remove", false, (*Server).webContainerRemove},
	{"POST", "/logout", false, (*Server).logout},
}

func (s *Server) mountWeb(mux *http.ServeMux) {
	for _, r := range webRoutes {
		mux.Handle(r.method+" "+r.pattern, s.webHandler(r))
	}
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	static, _ := fs.Sub(webStatic, "web/static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
}

// secureHeaders keeps the page from being framed (a click on Approve must
// be a click on brabo) and from running any script it did not ship.
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

func (s *Server) webHandler(rt webRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w)
		v, c, err := s.session(r)
		if err != nil {
			if rt.page {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			w.Header().Set("HX-Redirect", "/login")
			s.webError(w, r, errorf(http.StatusUnauthorized, brabo.CodeUnauthorized, "your session has ended: log in again"))
			return
		}
		if r.Method != http.MethodGet {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		}
		if r.Method != http.MethodGet && !validCSRF(r, v.CSRF) {
			s.webError(w, r, errorf(http.StatusForbidden, brabo.CodeCSRF, "the request carries no valid CSRF token; reload the page and try again"))
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		if err := rt.handle(s, w, r, v); err != nil {
			if rt.page {
				ae := s.classify(r, err)
				s.render(w, ae.status, "error-page", map[string]any{"Code": ae.code, "Message": ae.msg})
				return
			}
			s.webError(w, r, err)
		}
	})
}

// session resolves the session cookie to its member; agents never hold
// one, and a member token in the cookie opens nothing.
func (s *Server) session(r *http.Request) (*viewer, caller, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, caller{}, errors.New("no session")
	}
	c, err := s.lookupSession(r.Context(), ck.Value)
	if err != nil {
		return nil, caller{}, err
	}
	return &viewer{Member: c.member, CSRF: csrfFor(ck.Value)}, c, nil
}

// csrfFor derives the CSRF token from the session's secret: only a page that
// could read the session (brabo's own, served to its holder) knows it, it
// needs no server-side state, and it is the same on every instance.
func csrfFor(sessionToken string) string {
	mac := hmac.New(sha256.New, []byte(sessionToken))
	mac.Write([]byte("brabo csrf v1"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// validCSRF accepts the token in the X-CSRF-Token header (htmx sends it on
// every request) or in a form field named csrf (plain forms).
func validCSRF(r *http.Request, want string) bool {
	got := r.Header.Get(csrfHeader)
	if got == "" {
		if err := r.ParseForm(); err == nil {
			got = r.PostForm.Get(csrfField)
		}
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// webError answers an error as a small HTML fragment with the API's status;
// an unexpected error's detail goes to the log only.
func (s *Server) webError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.classify(r, err)
	s.render(w, ae.status, "error", map[string]any{"Code": ae.code, "Message": ae.msg})
}

func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.log().Error("rendering a page failed", "template", name, "err", err)
		http.Error(w, "internal error; see the server log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderPage renders a full page in the layout, with the viewer's projects
// in the navigation.
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, v *viewer, title, body string, data any) error {
	nav, err := s.navFor(r.Context(), v.Member)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, body, data); err != nil {
		return err
	}
	s.render(w, http.StatusOK, "layout", page{Title: title, Viewer: v, Nav: nav, Body: template.HTML(buf.String())})
	return nil
}

func (s *Server) navFor(ctx context.Context, m *brabo.Member) ([]navProject, error) {
	var out []navProject
	ms, err := s.Projects.Memberships(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, x := range ms {
		p, err := s.Projects.Project(ctx, x.ProjectID)
		if err != nil {
			return nil, err
		}
		out = append(out, navProject{ID: p.ID, Slug: p.Slug, Role: x.Role})
	}
	return out, nil
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w)
	nonce := make([]byte, 24)
	rand.Read(nonce)
	value := base64.RawURLEncoding.EncodeToString(nonce)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: value, Path: "/login", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600})
	s.render(w, http.StatusOK, "login", map[string]any{"CSRF": value, "Error": loginErrors[r.URL.Query().Get("error")]})
}

// loginErrors are the login page's messages, by the code its redirect
// carries: a link cannot make the page say anything else.
var loginErrors = map[string]string{
	"empty":   "Paste a member token to log in.",
	"invalid": "That token is not valid.",
	"agent":   "That is an agent's token: agents never decide. Log in with a member's token.",
}

// login checks the login form's double-submitted nonce (login CSRF), then
// the token; only a member's token opens a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w)
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.webError(w, r, badRequest("the login form could not be read: %v", err))
		return
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || ck.Value == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(r.PostForm.Get(csrfField))) != 1 {
		s.webError(w, r, errorf(http.StatusForbidden, brabo.CodeCSRF, "the login form carries no valid CSRF token; reload the login page"))
		return
	}
	fail := func(code string) {
		http.Redirect(w, r, "/login?error="+code, http.StatusSeeOther)
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	if token == "" {
		fail("empty")
		return
	}
	c, err := s.lookupToken(r.Context(), token)
	switch {
	case errors.Is(err, brabo.ErrNotFound):
		fail("invalid")
		return
	case err != nil:
		s.webError(w, r, err)
		return
	case c.member == nil:
		fail("agent")
		return
	}
	secret, _, err := s.openSession(r.Context(), c.member, r.UserAgent())
	if err != nil {
		s.webError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(s.sessionTTL() / time.Second)})
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: "/login", MaxAge: -1})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout revokes the session, on every instance, and drops the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, v *viewer) error {
	c := callerOf(r)
	if _, err := s.Projects.RevokeSession(r.Context(), v.Member.ID, c.session.ID); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

// multiline is Printable line by line: a commit message or a diff keeps
// its newlines and tabs, and nothing else that could rewrite what is shown.
func multiline(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = brabo.Printable(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// stamp is a time as the page first shows it, with its zone (the page's
// script makes it relative and puts this on hover).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 MST") }

// iso is a time for a datetime attribute.
func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// since says how long ago t was, roughly: how long a card has waited.
func since(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
}

// statusClass is the colour class of a status: failure is red everywhere,
// success green, a wait amber.
func statusClass(st brabo.ActionStatus) string {
	switch st {
	case brabo.StatusFailed, brabo.StatusDenied:
		return "bad"
	case brabo.StatusExecuted:
		return "ok"
	case brabo.StatusPending:
		return "wait"
	}
	return "info"
}

// failedRun reports an action brabo ran whose command exited non-zero: it
// is "executed" (the command ran), and a person reads it as a failure.
func failedRun(a *brabo.ProposedAction) bool {
	return a.Status == brabo.StatusExecuted && a.Result != nil && a.Result.ExitCode != 0
}

// actionClass is statusClass of an action, a non-zero exit red too.
func actionClass(a *brabo.ProposedAction) string {
	if failedRun(a) {
		return "bad"
	}
	return statusClass(a.Status)
}

// statusText is an action's status as a badge says it: with its exit code
// when it ran and did not exit 0.
func statusText(a *brabo.ProposedAction) string {
	if failedRun(a) {
		return fmt.Sprintf("executed, exit %d", a.Result.ExitCode)
	}
	if a.Status == brabo.StatusAutoApproved || (a.DecidedBy == "" && a.Decision.Policy == brabo.AutoApprove && a.Status == brabo.StatusExecuted) {
		return string(a.Status) + " (auto-approved)"
	}
	return string(a.Status)
}

// shortID is the tail of an id, enough to tell actions apart on a card.
func shortID(id string) string {
	if len(id) <= 8 {
		return id
	}
	return id[len(id)-8:]
}
