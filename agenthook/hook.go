package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
	"github.com/brabo-dev/brabo/policy"
)

// hookInput is what the agents send a hook on standard input; the three
// share Claude Code's field names.
type hookInput struct {
	SessionID    string          `json:"session_id"`
	TurnID       string          `json:"turn_id"`   // Codex
	PromptID     string          `json:"prompt_id"` // Claude Code
	Cwd          string          `json:"cwd"`
	Event        string          `json:"hook_event_name"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`
	Error        string          `json:"error"`       // Claude Code's PostToolUseFailure
	McpContext   json.RawMessage `json:"mcp_context"` // Gemini CLI

	// TranscriptPath is the agent's own record of the session (Claude
	// Code, Codex): Codex's watcher reads a call's result there.
	TranscriptPath string `json:"transcript_path"`
}

// Agents are the agents brabo hook speaks to, as named on its command line.
var Agents = []string{"claude", "codex", "gemini"}

// Runner is the name the action's card gives each agent.
var runnerNames = map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}

// events are each agent's hook events as named on the command line, and
// whether they decide (before the tool) or report (after it).
var events = map[string]map[string]bool{
	"claude": {"pre-tool-use": true, "permission-request": true, "post-tool-use": false, "post-tool-use-failure": false,
		"post-tool-batch": false},
	"codex":  {"pre-tool-use": true, "permission-request": true, "post-tool-use": false, "watch": false},
	"gemini": {"before-tool": true, "after-tool": false, "watch": false},
}

// maxInput bounds what the hook reads from the agent.
const maxInput = 16 << 20

// Usage is the hook's command line.
const Usage = "usage: brabo hook claude|codex|gemini <event> --config FILE\n" +
	"  claude: pre-tool-use, permission-request, post-tool-use, post-tool-use-failure, post-tool-batch\n" +
	"  codex:  pre-tool-use, permission-request, post-tool-use\n" +
	"  gemini: before-tool, after-tool\n"

// Run is `brabo hook <agent> <event> --config FILE`: it reads the agent's
// JSON on stdin, writes the answer on stdout (and a deny's reason on
// stderr), and returns the exit code. A deciding event never fails open: a
// bad command line, a configuration it cannot read, an unreachable brabo or
// an unknown tool is a deny.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	agent, event, configPath, statePath := "", "", "", ""
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--config" && i+1 < len(args):
			configPath = args[i+1]
			i++
		case strings.HasPrefix(a, "--config="):
			configPath = strings.TrimPrefix(a, "--config=")
		case a == "--state" && i+1 < len(args):
			// Codex's watcher (watch.go): the call it reports.
			statePath = args[i+1]
			i++
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) == 2 {
		agent, event = rest[0], rest[1]
	}
	deciding, known := events[agent][event]
	if !known {
		// The agent cannot be told; exit 2 blocks where it is honoured.
		fmt.Fprintf(stderr, "brabo hook: unknown agent or event %q\n%s", strings.Join(rest, " "), Usage)
		return 2
	}
	h := &hook{agent: agent, event: event, stdout: stdout, stderr: stderr}
	if event == "watch" {
		return h.watch(configPath, statePath)
	}
	if !deciding {
		return h.report(configPath, stdin)
	}
	return h.answer(h.decide(configPath, stdin))
}

type hook struct {
	agent, event   string
	stdout, stderr io.Writer
	// pending holds the wait banner until the answer (answer.go).
	pending bytes.Buffer
}

// outcome is what the hook tells the agent before a tool runs.
type outcome struct {
	verdict verdict
	reason  string
}

type verdict int

const (
	deny  verdict = iota // the zero value: fail closed
	allow                // brabo approved it: run
	ask                  // the agent's own prompt decides (a shell brabo cannot read)
	pass                 // the hook has no opinion (bookkeeping tools, unguarded folders)
)

func denied(format string, a ...any) outcome {
	return outcome{verdict: deny, reason: "brabo: " + fmt.Sprintf(format, a...)}
}

// decide reads the call and asks brabo; every failure is a deny.
func (h *hook) decide(configPath string, stdin io.Reader) outcome {
	in, err := readInput(stdin)
	if err != nil {
		return denied("%v; denied", err)
	}
	o := decideCall(context.Background(), h.agent, configPath, in, waiting{stderr: &h.pending})
	if e := h.agent + " " + h.event; o.verdict == allow && (e == "codex pre-tool-use" || e == "gemini before-tool") && in.TranscriptPath != "" {
		// Codex may never run PostToolUse for it, Gemini CLI AfterTool
		// (watch.go, watch_gemini.go).
		if p := stateKey(configPath, in); peekState(p) != nil {
			startWatcher(configPath, p)
		}
	}
	return o
}

// waiting is told what the hook waits for: a line on the agent's stderr
// (shown in its transcript), and for the MCP approval tool a progress
// notification at each poll.
type waiting struct {
	stderr io.Writer
	poll   time.Duration
	tick   func(msg string)
}

// Decision is brabo's answer for one tool call: Verdict is allow, deny,
// ask (the agent's own prompt decides) or pass (no opinion), with the
// reason the agent's model reads.
type Decision struct {
	Verdict string
	Reason  string
}

// ToolCall is one tool call of an agent to decide (DecideCall).
type ToolCall struct {
	SessionID, ToolUseID, Cwd, ToolName string
	Input                               json.RawMessage
}

// DecideCall decides one tool call of agent as its PreToolUse hook would,
// with the hook configuration at configPath, waiting for a human when
// brabo asks one; progress (may be nil) is called at each poll while it
// waits. It is the MCP approval tool's decision (brabo mcp).
func DecideCall(ctx context.Context, agent, configPath string, call ToolCall, progress func(msg string)) Decision {
	in := &hookInput{SessionID: call.SessionID, ToolUseID: call.ToolUseID, Cwd: call.Cwd, ToolName: call.ToolName, ToolInput: call.Input}
	o := decideCall(ctx, agent, configPath, in, waiting{stderr: io.Discard, poll: 5 * time.Second, tick: progress})
	return Decision{Verdict: [...]string{"deny", "allow", "ask", "pass"}[o.verdict], Reason: o.reason}
}

func decideCall(ctx context.Context, agent, configPath string, in *hookInput, w waiting) (out outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = denied("the hook failed (%v); denied", r)
		}
	}()
	start := time.Now()
	h := &hook{agent: agent, stderr: w.stderr}
	if configPath == "" {
		return denied("the hook has no --config; run brabo install %s again", h.agent)
	}
	cfg, err := LoadConfig(configPath)
	if err != nil {
		// The model reads one sentence; brabo install --status says why.
		return denied("the hook's configuration cannot be read (brabo install %s --status says why); denied", h.agent)
	}
	if in.Cwd == "" {
		in.Cwd, _ = os.Getwd()
	}
	proj, err := cfg.project(in.Cwd)
	if err != nil {
		if errors.Is(err, errUnknownFolder) && cfg.PassUnknownFolders {
			if h.agent == "gemini" {
				// brabo's policy rule lets Gemini's shell run unprompted in
				// every folder: outside brabo's projects, its prompt must come
				// back.
				return outcome{verdict: ask, reason: "not a brabo project: Gemini CLI asks"}
			}
			return outcome{verdict: pass}
		}
		return denied("%v; denied", err)
	}
	reqs, k, err := requests(h.agent, in, proj.Root)
	switch {
	case err != nil:
		return denied("%s: %v; denied", in.ToolName, err)
	case k == kindPass:
		return outcome{verdict: pass}
	case len(reqs) == 0:
		return denied("the tool %q is not one brabo knows how to judge, so it is denied (brabo hook's tool table for %s)", in.ToolName, h.agent)
	}
	c := newClient(cfg.Server, proj.Token)
	if k == kindRead && readInScope(ctx, c, proj, reqs[0].payload.Path) {
		return outcome{verdict: allow, reason: "brabo: a read inside the project folder"}
	}
	wait := time.Duration(cfg.WaitSeconds) * time.Second
	if wait <= 0 {
		wait = defaultWait
	}
	deadline := start.Add(wait)
	exec := &brabo.Execution{Mode: brabo.ExecutionExternal, Runner: runnerNames[h.agent], SessionID: in.SessionID,
		TurnID: firstOf(in.TurnID, in.PromptID), ToolUseID: in.ToolUseID, WaitUntil: deadline.UTC(),
		Description: agentWords(h.agent, in.ToolInput)}
	var ids []string
	var reasons []string
	nonBash := false
	// Every action is proposed first, so that a patch's denied file denies
	// at once and the human sees all of its files, then each is awaited.
	proposed := make([]*brabo.ProposedAction, len(reqs))
	for i, r := range reqs {
		a, err := c.Propose(ctx, proj.ID, client.Proposal{Type: r.typ, Payload: r.payload, Execution: exec})
		if err != nil {
			return denied("%v; denied", err)
		}
		if a.Status == brabo.StatusDenied {
			return outcome{verdict: deny, reason: "brabo: " + reasonText(a) + touches(a)}
		}
		proposed[i] = a
	}
	var onPoll func()
	for i, r := range reqs {
		a := proposed[i]
		if a.Status == brabo.StatusPending {
			msg := fmt.Sprintf("brabo: %s%s — it waits for a human: approve or deny it at %s/ui/actions/%s", reasonText(a), touches(a),
				strings.TrimSuffix(cfg.Server, "/"), a.ID)
			fmt.Fprintln(h.stderr, msg)
			onPoll = func() {
				if w.tick != nil {
					w.tick(msg)
				}
			}
		}
		a, err := waitStoppable(ctx, c, a, deadline, w.poll, onPoll)
		if err != nil {
			return denied("%v while waiting for action %s; denied", err, a.ID)
		}
		switch a.Status {
		case brabo.StatusAutoApproved, brabo.StatusApproved:
			ids = append(ids, a.ID)
			// How it was decided, never why it was held: "approved by
			// mia", "auto-approved: …".
			reasons = append(reasons, reasonText(a))
			nonBash = nonBash || r.nonBash
		case brabo.StatusDenied:
			return outcome{verdict: deny, reason: "brabo: " + reasonText(a) + touches(a)}
		case brabo.StatusPending, brabo.StatusAbandoned:
			// The wait told brabo it gave up (client.Wait): the action left
			// the queue, and a later decision is refused.
			return denied("no one decided within %s, so this call is denied", wait.Round(time.Second))
		default:
			return denied("action %s is %s already; denied", a.ID, a.Status)
		}
	}
	if nonBash {
		// brabo read the line as bash; another shell may read it otherwise.
		return outcome{verdict: ask, reason: "brabo approved it as a bash command, but another shell runs it: confirm it yourself"}
	}
	saveState(configPath, in, ids)
	return outcome{verdict: allow, reason: "brabo: " + strings.Join(reasons, "; ")}
}

// defaultWait is the hook's own wait when the configuration sets none.
const defaultWait = 9*time.Minute + 30*time.Second

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// reasonText is the sentence the card shows (brabo.ReasonText, the API's
// reasonText, which names the human who decided), computed here for a
// server that does not send it.
func reasonText(a *brabo.ProposedAction) string {
	if a.ReasonText != "" {
		return a.ReasonText
	}
	return brabo.ReasonText(a, "")
}

// touches is what the action's card flags (brabo.Preview, the one the
// page and the notifications show), as the hook's answers say it:
// " (touches the home folder, the network)", or "".
func touches(a *brabo.ProposedAction) string {
	if a.Preview == nil || len(a.Preview.Flags) == 0 {
		return ""
	}
	return " (touches " + strings.Join(brabo.FlagKinds(a.Preview.Flags), ", ") + ")"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func readInput(stdin io.Reader) (*hookInput, error) {
	b, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the agent's input: %w", err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("the agent's input is over %d bytes", maxInput)
	}
	in := &hookInput{}
	if err := json.Unmarshal(b, in); err != nil {
		return nil, fmt.Errorf("the agent's input is not the JSON of a hook call: %w", err)
	}
	if in.ToolName == "" {
		return nil, errors.New("the agent's input names no tool")
	}
	return in, nil
}

// ReadSituation is the situation the hook decides a read in, locally
// (policy.NewInput): the rules the server decides with now, the project
// folder root, as a developer's agent, with this user's home folder and
// the hooks' own folder (their tokens) in the protected table.
func ReadSituation(rules *policy.Rules, root string) policy.Situation {
	home, _ := os.UserHomeDir()
	protect := policy.Protect{Home: home}
	if dir, err := ConfigDir(); err == nil {
		protect.ServerPaths = append(protect.ServerPaths, dir) // the hooks' tokens
	}
	return policy.Situation{Role: brabo.Developer, Rules: rules, Scope: policy.Scope{Root: root, Mode: brabo.ModeLocal}, Protect: protect}
}

// readInScope decides a read locally, as brabo would and without
// proposing it: a read inside the project folder, of no read-protected
// path, that the permissions brabo decides with now do not deny or ask
// about. Those are the server's (GET …/permissions/effective), never the
// permissions.json on disk: a branch switch that drops a ReadFile deny
// must not loosen reads before a maintainer accepts it. Anything else,
// an unreachable server included, is proposed to brabo as a read_file
// action.
func readInScope(ctx context.Context, c *client.Client, proj *ProjectConfig, path string) bool {
	root := proj.Root
	eff, err := c.EffectivePermissions(ctx, proj.ID)
	if err != nil || eff.Hash == "" {
		return false
	}
	rules, err := policy.Parse("permissions.json", []byte(eff.Content))
	if err != nil {
		return false
	}
	d := policy.Decide(policy.NewInput(brabo.ReadFile, brabo.Payload{Path: path}, ReadSituation(rules, root)))
	return d.Policy == brabo.AutoApprove
}
