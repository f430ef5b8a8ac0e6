// Package agenttest is test support for driving the real agent CLIs
// (Claude Code, Codex, Gemini CLI) offline: scripted model servers that
// speak each one's wire format on 127.0.0.1, and the lookup of the CLIs
// installed from npm. Only tests import it.
//
// A script is a list of tool calls; the server answers the n-th request of
// the conversation that carries n tool results with the n-th call, and
// with a plain text answer once the script is spent. Every request is kept,
// so a test reads what the model was told (a denial's reason, a result).
package agenttest

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Call is one tool call the scripted model makes: the tool's name as the
// agent spells it and its arguments.
type Call struct {
	Name  string
	Input map[string]any
}

// Server is a scripted model server.
type Server struct {
	URL string

	mu       sync.Mutex
	requests []json.RawMessage
	script   []Call
	srv      *http.Server
}

// Requests returns the bodies of the requests received so far.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.requests...)
}

// Seen reports whether some request body holds text.
func (s *Server) Seen(text string) bool {
	for _, r := range s.Requests() {
		if containsJSONText(r, text) {
			return true
		}
	}
	return false
}

// containsJSONText looks for text in a JSON body as a decoded string, so
// that quotes and escapes in it compare as written.
func containsJSONText(raw json.RawMessage, text string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	found := false
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if !found && strings.Contains(x, text) {
				found = true
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

func (s *Server) record(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, json.RawMessage(body))
}

// step returns the call to make after done tool results, or false when the
// script is spent.
func (s *Server) step(done int) (Call, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if done < len(s.script) {
		return s.script[done], true
	}
	return Call{}, false
}

// start serves h on a free port of 127.0.0.1 until the test ends.
func start(t testing.TB, s *Server, h http.Handler) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: h}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// FinalText is what the scripted model says once its script is spent.
const FinalText = "All done."

// CLIDir is where the tests and the benchmark look for the agent CLIs
// installed from npm: $BRABO_AGENT_CLIS, else
// $XDG_CACHE_HOME/brabo/agent-clis (~/.cache when unset), the npm prefix
// .ci/run installs them into.
func CLIDir() string {
	if d := os.Getenv("BRABO_AGENT_CLIS"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "brabo", "agent-clis")
}

// CLI returns the path of an agent CLI (claude, codex, gemini): from
// CLIDir, else from PATH. When it is missing the test is skipped, or fails
// when BRABO_REQUIRE_AGENT_CLIS=1 (.ci/run sets it).
func CLI(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(CLIDir(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("BRABO_REQUIRE_AGENT_CLIS") == "1" {
		t.Fatalf("%s is not installed in %s nor on PATH, and BRABO_REQUIRE_AGENT_CLIS=1 (.ci/run installs it)", name, CLIDir())
	}
	t.Skipf("%s is not installed (npm install --prefix %s …; .ci/run does it; BRABO_REQUIRE_AGENT_CLIS=1 fails this)", name, CLIDir())
	return ""
}
