package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebCardChangedOnTheActionPage drives, in the real brabo serve and a
// real Chromium, what issue 28 asks when the repository moves under an
// open card: a person opens a git_push's page, the agent commits again
// behind brabo's back, the person clicks Approve: the page says the card
// changed, naming what moved, and shows the new card (the new commit);
// nothing was pushed and the action still waits. Approve again pushes
// exactly the new range. With BRABO_UPDATE_SCREENSHOTS the refused card
// is saved as docs/screenshots/action-card-changed.png.
func TestWebCardChangedOnTheActionPage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and a browser")
	}
	ctx := browser(t)
	data, root := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	gitIn(t, root, "init", "-q", "-b", "main")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "Start the shop")
	remote := filepath.Join(t.TempDir(), "shop.git")
	gitIn(t, root, "init", "-q", "--bare", remote)
	gitIn(t, root, "remote", "add", "origin", remote)
	gitIn(t, root, "push", "-q", "origin", "main")
	commit := func(file, msg string) string {
		os.WriteFile(filepath.Join(root, file), []byte(msg+"\n"), 0o644)
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-q", "-m", msg)
		return revParse(t, root, "HEAD")
	}
	commit("login.go", "Add the login form")
	pushedBefore := revParse(t, remote, "refs/heads/main")

	srv := startServeEnv(t, data, []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"})
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	bot := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "ci-bot"}, 201)
	a := srv.must(t, "POST", "/v1/projects/"+project+"/actions", bot["token"].(string),
		map[string]any{"type": "git_push", "payload": map[string]any{"branch": "main"}}, 201)
	if a["status"] != "pending" {
		t.Fatalf("the push is %v (%v), want pending", a["status"], a["reason"])
	}
	id := a["id"].(string)
	card := "#card-" + id
	status := func() string {
		_, got, _ := srv.call("GET", "/v1/actions/"+id, admin, nil)
		s, _ := got["status"].(string)
		return s
	}

	do(t, ctx, "desktop", chromedp.EmulateViewport(1200, 900))
	webLogin(t, ctx, srv.url, admin)
	do(t, ctx, "open the action's page", chromedp.Navigate(srv.url+"/ui/actions/"+id), chromedp.WaitVisible(css(card+" button.approve")))
	if c := text(t, ctx, card); !strings.Contains(c, "Add the login form") || strings.Contains(c, "Check the token") {
		t.Fatalf("the card as opened:\n%s", c)
	}
	shown := get(t, ctx, "the form's revision", chromedp.Evaluate[string](`document.getElementById("revision-`+id+`").value`))

	// The agent commits again while the page is open.
	later := commit("token.go", "Check the token on every request")

	do(t, ctx, "approve the card as opened", chromedp.Click(css(card+" button.approve")))
	waitJS(t, ctx, "the refusal on the card", `!!document.querySelector("`+card+` .refusal")`)
	docShot(t, ctx, t.TempDir(), card, "action-card-changed.png")
	refusal := text(t, ctx, card+" .refusal")
	if !strings.Contains(refusal, "changed") || !strings.Contains(refusal, "commit") {
		t.Errorf("the refusal does not say the card changed, naming the commit: %q", refusal)
	}
	if c := text(t, ctx, card); !strings.Contains(c, "Check the token on every request") || !strings.Contains(c, "Add the login form") {
		t.Errorf("the page does not show the new card (both commits):\n%s", c)
	}
	if rev := get(t, ctx, "the new revision", chromedp.Evaluate[string](`document.getElementById("revision-`+id+`").value`)); rev == "" || rev == shown {
		t.Errorf("the card's form still sends the revision %q it was opened with", rev)
	}
	if got := revParse(t, remote, "refs/heads/main"); got != pushedBefore {
		t.Fatalf("a refused approval pushed: origin's main is %s", got)
	}
	if s := status(); s != "pending" {
		t.Fatalf("after card_changed the action is %s, want pending", s)
	}

	do(t, ctx, "approve the new card", chromedp.Click(css(card+" button.approve")))
	waitJS(t, ctx, "the page as decided", `!!document.getElementById("card-heading") && document.getElementById("card-heading").textContent === "The card as decided"`)
	if s := status(); s != "executed" {
		t.Fatalf("after the second Approve the push is %s, want executed", s)
	}
	if got := revParse(t, remote, "refs/heads/main"); got != later {
		t.Fatalf("origin's main is %s, want exactly the shown %s", got, later)
	}
}

func revParse(t *testing.T, dir, ref string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", gitDirOf(dir), "rev-parse", ref).Output()
	if err != nil {
		t.Fatalf("git rev-parse %s in %s: %v", ref, dir, err)
	}
	return strings.TrimSpace(string(out))
}

// gitDirOf is a work tree's .git, or dir itself for a bare repository.
func gitDirOf(dir string) string {
	if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
		return filepath.Join(dir, ".git")
	}
	return dir
}
