package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// The demo, run as a person would with --approve: the agent works,
// suspends on the pending command, is approved, and resumes with the
// command's real output; the tour ends by itself.
func TestDemoSuspendsAndResumes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, braboBin, "demo", "--approve", "--addr", "127.0.0.1:0").CombinedOutput()
	if err != nil {
		t.Fatalf("brabo demo: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"auto_approved: permissions.json allow: Terminal(ls)",
		"auto_approved: permissions.json allow: Terminal(make test)",
		"ok: 3 tests passed",
		"pending: compound: the segment \"touch CHANGELOG.md\" has no rule",
		"The agent is suspended",
		"/approve -H 'Authorization: Bearer brb_",
		"In the browser: http://127.0.0.1:",
		"Approved by a human",
		"changelog created",
		"auto_approved: agent_autonomy: auto_approve (specific)", // the seeded git_commit
		"→ the agent proposes: git_push brabo/task_",
		"a pull request waits for your approval",
		"The task is in review: pull request #1 is open; merging it (git_merge) makes the task done.",
		"The demo ends here (--approve)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, s)
		}
	}
	// The task's branch, pushed by the typed git_push: by the SHA its card
	// showed (git push origin <sha>:refs/heads/brabo/task_…), which git
	// reports as the new branch made from that commit.
	if !regexp.MustCompile(`\* \[new branch\]\s+[0-9a-f]{40} -> brabo/task_`).MatchString(s) {
		t.Errorf("the demo's output lacks the push of the task's branch by its SHA:\n%s", s)
	}
	// The command's real output (indented) comes only after the suspension.
	if strings.Index(s, "The agent is suspended") > strings.Index(s, "\n    changelog created") {
		t.Error("the pending command's output came before the suspension")
	}
	// The approved pr_open's output comes before the sentence that ends
	// the demo, not after it.
	if strings.Index(s, "$ git ls-remote") > strings.Index(s, "The task is in review") {
		t.Errorf("the pull request's output came after the task's end:\n%s", s)
	}
}

// demoRun is a running `brabo demo`, read line by line.
type demoRun struct {
	// beforeApprove, when set, sees each approve line approveUntilPR runs,
	// before it runs it.
	beforeApprove func(line string)
	cmd           *exec.Cmd
	stderr        *logBuffer
	lines         chan string
	mu            sync.Mutex
	seen          []string
}

func startDemo(t *testing.T, args ...string) *demoRun {
	t.Helper()
	cmd := exec.Command(braboBin, append([]string{"demo", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &demoRun{cmd: cmd, stderr: &logBuffer{}, lines: make(chan string, 1000)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
	}()
	return d
}

// waitFor returns the first line from now on that holds want.
func (d *demoRun) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-d.lines:
			if !ok {
				t.Fatalf("the demo ended before it printed %q:\n%s\n--- stderr:\n%s", want, d.output(), d.stderr.String())
			}
			d.mu.Lock()
			d.seen = append(d.seen, l)
			d.mu.Unlock()
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			t.Fatalf("the demo did not print %q in 60 s:\n%s", want, d.output())
		}
	}
}

// approveUntilPR runs every approve command the demo prints (the pending
// command, the push) until it prints the pull request's, which it returns.
func (d *demoRun) approveUntilPR(t *testing.T) string {
	t.Helper()
	for {
		l := d.waitFor(t, "curl -s -XPOST")
		switch {
		case strings.HasPrefix(l, "  Approve it:     curl "):
			return l
		case strings.HasPrefix(l, "  Approve:        curl "):
			if d.beforeApprove != nil {
				d.beforeApprove(l)
			}
			if got := runPrinted(t, l); got["outcome"] != "approved" {
				t.Fatalf("the printed approve: %v", got)
			}
		}
	}
}

func (d *demoRun) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.seen, "\n")
}

// interrupt sends Ctrl-C's signal and returns the exit code and the rest
// of what the demo printed.
func (d *demoRun) interrupt(t *testing.T) (int, string) {
	t.Helper()
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for l := range d.lines {
		rest = append(rest, l)
	}
	err := d.cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return d.cmd.ProcessState.ExitCode(), strings.Join(rest, "\n")
}

// runPrinted runs a curl command line the demo printed (brabo's own text,
// not an agent's) and decodes its JSON answer.
func runPrinted(t *testing.T, line string) map[string]any {
	t.Helper()
	i := strings.Index(line, "curl ")
	if i < 0 {
		t.Fatalf("no curl command in %q", line)
	}
	out, err := exec.Command("bash", "-c", line[i:]+" -w '\\n%{http_code}'").Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line[i:], err, out)
	}
	trimmed := strings.TrimSpace(string(out))
	cut := strings.LastIndex(trimmed, "\n")
	if cut < 0 {
		t.Fatalf("%s: no answer: %q", line[i:], out)
	}
	body, code := trimmed[:cut], trimmed[cut+1:]
	if code != "200" {
		t.Fatalf("%s: HTTP %s: %s", line[i:], code, body)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%s: %v: %s", line[i:], err, body)
	}
	return v
}

// demoAction reads, through the API, the action an approve line the demo
// printed names (its URL and token are in the line).
func demoAction(t *testing.T, line string) map[string]any {
	t.Helper()
	m := regexp.MustCompile(`(http://\S+/v1/actions/act_\w+)/approve.*Bearer (brb_\w+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no action URL and token in %q", line)
	}
	req, _ := http.NewRequest("GET", m[1], nil)
	req.Header.Set("Authorization", "Bearer "+m[2])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", m[1], resp.StatusCode, err)
	}
	return a
}

// TestDemoPrintedCommandsWork: without --approve the demo serves until
// Ctrl-C, so the commands it prints work: its approve commands wake the
// agent, the pull request is opened, the page still answers after the
// task is done, and Ctrl-C ends it with 130 and no error text.
func TestDemoPrintedCommandsWork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("BRABO_REQUIRE_README_TOOLS") != "" {
			t.Fatalf("the demo prints curl commands, and curl is not installed: %v", err)
		}
		t.Skip("the demo prints curl commands; curl is not installed (BRABO_REQUIRE_README_TOOLS fails this)")
	}
	d := startDemo(t)
	// The push card and the pull request's show the demo repository's
	// commits (the preview reads the repository, as brabo serve's does).
	cards := map[string]map[string]any{}
	d.beforeApprove = func(l string) {
		a := demoAction(t, l)
		cards[a["type"].(string)] = a
	}
	pr := d.approveUntilPR(t)
	if !strings.Contains(d.output(), "changelog created") {
		t.Errorf("the approved command's output did not reach the agent:\n%s", d.output())
	}
	cards["pr_open"] = demoAction(t, pr)
	for _, typ := range []string{"git_push", "pr_open"} {
		a := cards[typ]
		pv, _ := a["preview"].(map[string]any)
		commits, _ := pv["commits"].([]any)
		if len(commits) == 0 || !strings.Contains(strings.ToLower(fmt.Sprint(commits)), "changelog") || strings.Contains(fmt.Sprint(pv["notes"]), "could not be read") {
			t.Errorf("the %s card shows no commit of the demo repository: %v", typ, pv)
		}
	}
	if got := runPrinted(t, pr); got["outcome"] != "approved" || got["action"].(map[string]any)["status"] != "executed" {
		t.Fatalf("the printed approval of the pull request: %v", got)
	}
	d.waitFor(t, "The task is in review: pull request #1 is open; merging it (git_merge) makes the task done.")
	page := d.waitFor(t, "The demo keeps serving http://")
	url := strings.Fields(strings.TrimPrefix(page, "The demo keeps serving "))[0]
	if out, err := exec.Command("curl", "-sf", "-o", "/dev/null", url).CombinedOutput(); err != nil {
		t.Errorf("the page %s after the task is done: %v %s", url, err, out)
	}
	code, rest := d.interrupt(t)
	if code != exitInterrupted || d.stderr.String() != "" {
		t.Errorf("Ctrl-C: exit %d, want %d and nothing on stderr:\n%s", code, exitInterrupted, d.stderr.String())
	}
	if !strings.Contains(rest, "Stopped.") || !strings.Contains(rest, "removed (brabo demo --keep keeps it)") {
		t.Errorf("after Ctrl-C the demo printed:\n%s", rest)
	}
}

// TestDemoKeptIsRevived: with --keep, Ctrl-C while the pull request waits
// prints the one command that serves the demo again; there the printed
// approval of the pull request wakes the restored agent, which opens it
// and finishes the task, with no error in the log.
func TestDemoKeptIsRevived(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the demo, then brabo serve on what it kept")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("BRABO_REQUIRE_README_TOOLS") != "" {
			t.Fatalf("the demo prints curl commands, and curl is not installed: %v", err)
		}
		t.Skip("the demo prints curl commands; curl is not installed (BRABO_REQUIRE_README_TOOLS fails this)")
	}
	d := startDemo(t, "--keep")
	kept := strings.TrimSuffix(strings.TrimPrefix(d.waitFor(t, "The throwaway folder is "), "The throwaway folder is "), " (kept).")
	t.Cleanup(func() { os.RemoveAll(kept) })
	token := d.waitFor(t, "(admin token ")
	token = token[strings.Index(token, "brb_"):]
	token = strings.TrimSuffix(token, ").")
	pr := d.approveUntilPR(t)
	code, rest := d.interrupt(t)
	if code != exitInterrupted || d.stderr.String() != "" {
		t.Fatalf("Ctrl-C: exit %d, want %d and nothing on stderr:\n%s", code, exitInterrupted, d.stderr.String())
	}
	var revive string
	for _, l := range strings.Split(rest, "\n") {
		if c := strings.TrimSpace(l); strings.HasPrefix(c, "brabo serve --data ") {
			revive = c
		}
	}
	if revive == "" || !strings.Contains(rest, "The demo is kept in "+kept) {
		t.Fatalf("no command to serve the kept demo again:\n%s", rest)
	}

	// The printed command, as printed (brabo from PATH), in the background.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, "bash", "-c", "exec "+revive)
	srv.Env = append(os.Environ(), "PATH="+filepath.Dir(braboBin)+string(os.PathListSeparator)+os.Getenv("PATH"), "BRABO_DB=")
	stdout, _ := srv.StdoutPipe()
	logs := &logBuffer{}
	srv.Stderr = logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "brabo serving on ") {
				serving <- strings.TrimPrefix(sc.Text(), "brabo serving on ")
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var base string
	select {
	case base = <-serving:
	case <-time.After(60 * time.Second):
		t.Fatalf("the revived demo did not serve:\n%s", logs.String())
	}
	s := &server{url: base, token: token}
	if got := runPrinted(t, pr); got["outcome"] != "approved" || got["action"].(map[string]any)["status"] != "executed" {
		t.Fatalf("the printed approval of the pull request, on the revived demo: %v", got)
	}
	project := s.must(t, "GET", "/v1/projects", token, nil, 200)["projects"].([]any)[0].(map[string]any)["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		tasks := s.must(t, "GET", "/v1/projects/"+project+"/tasks", token, nil, 200)["tasks"].([]any)
		// The approved pr_open puts the task in review; the restored agent,
		// woken by the decision, ends its run (the merge makes it done).
		if len(tasks) == 1 && tasks[0].(map[string]any)["status"] == "in_review" && strings.Contains(logs.String(), "devagent: task ended") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revived agent did not end its run on the task: %v\n%s", tasks, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the revived demo logged an error:\n%s", logs.String())
	}
}

// A demo whose port is taken (the walkthrough's brabo serve still holds
// it) says so and names --addr, in one line.
func TestDemoOnATakenPortNamesAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := runBraboEnv(t, t.TempDir(), []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir()}, "demo", "--addr", ln.Addr().String())
	if r.code != exitFailure || !strings.Contains(r.stderr, ln.Addr().String()+" is taken") || !strings.Contains(r.stderr, "--addr 127.0.0.1:8081") ||
		strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("demo on a taken port:\n%s", r)
	}
}

// TestDemoPushCardShowsCommits: the demo is wired as brabo serve is, with
// the repository reader, so the cards of its git_push and its pr_open
// show the real preview of its own repository: the commit the agent made
// ("Add a CHANGELOG"), and no note that the server reads no repository.
func TestDemoPushCardShowsCommits(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("BRABO_REQUIRE_README_TOOLS") != "" {
			t.Fatalf("the demo prints curl commands, and curl is not installed: %v", err)
		}
		t.Skip("the demo prints curl commands; curl is not installed (BRABO_REQUIRE_README_TOOLS fails this)")
	}
	d := startDemo(t)
	card := func(approveLine string) *brabo.ProposedAction {
		t.Helper()
		m := regexp.MustCompile(`-XPOST (http://\S+)/v1/actions/(act_\w+)/approve -H '(Authorization: Bearer \S+)'`).FindStringSubmatch(approveLine)
		if m == nil {
			t.Fatalf("no approve command in %q", approveLine)
		}
		out, err := exec.Command("curl", "-sf", m[1]+"/v1/actions/"+m[2], "-H", m[3]).Output()
		if err != nil {
			t.Fatalf("GET the card of %s: %v", m[2], err)
		}
		var a brabo.ProposedAction
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("the card of %s: %v: %s", m[2], err, out)
		}
		return &a
	}
	hasCommit := func(a *brabo.ProposedAction) {
		t.Helper()
		if a.Preview == nil {
			t.Fatalf("the %s card has no preview", a.Type)
		}
		if strings.Contains(strings.Join(a.Preview.Notes, "; "), "reads no repository") {
			t.Errorf("the %s card says: %v", a.Type, a.Preview.Notes)
		}
		for _, c := range a.Preview.Commits {
			if c.Subject == "Add a CHANGELOG" && c.Hash != "" {
				return
			}
		}
		t.Errorf("the %s card lists the commits %+v (range %q, notes %v), not the agent's \"Add a CHANGELOG\"", a.Type, a.Preview.Commits, a.Preview.Range, a.Preview.Notes)
	}
	// The pending command first, then the push.
	runPrinted(t, d.waitFor(t, "  Approve:        curl "))
	d.waitFor(t, "→ the agent proposes: git_push")
	pushLine := d.waitFor(t, "  Approve:        curl ")
	push := card(pushLine)
	if push.Type != brabo.GitPush {
		t.Fatalf("the second approval is of a %s, want git_push", push.Type)
	}
	hasCommit(push)
	if push.Preview.Push == nil || !push.Preview.Push.NewBranch {
		t.Errorf("the push card does not say the push creates the branch: %+v", push.Preview.Push)
	}
	if got := runPrinted(t, pushLine); got["outcome"] != "approved" {
		t.Fatalf("the printed approval of the push: %v", got)
	}
	pr := card(d.waitFor(t, "  Approve it:     curl "))
	if pr.Type != brabo.PrOpen {
		t.Fatalf("the pull request's approval is of a %s", pr.Type)
	}
	hasCommit(pr)
}
