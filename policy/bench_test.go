package policy

// Benchmarks of Decide and Parse; numbers and targets are in
// docs/PERFORMANCE.md. Reproduce with:
//
//	go test -run='^$' -bench=. -benchmem -cpu=1 -count=5 ./policy/

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

const (
	benchOneSegment = "pnpm test --filter web"
	benchCompound   = "cd src && pnpm test --filter x | tee out.txt && git status; ls -la && echo done"
)

// benchSmall is a small, realistic permissions file: 20 rules.
var benchSmall = [3][]string{
	listAllow: {"Terminal(pnpm test)", "Terminal(pnpm install)", "Terminal(pnpm build)", "Terminal(tee)",
		"Terminal(git status)", "Terminal(git diff)", "Terminal(git log)", "Terminal(ls)", "Terminal(echo)",
		"Terminal(cat)", "Terminal(go test)", "Terminal(make test)"},
	listDeny: {"Terminal(curl)", "Terminal(wget)", "Terminal(rm -rf)", "Terminal(git push --force)"},
	listAsk:  {"Terminal(docker)", "Terminal(npm publish)", "Terminal(git reset --hard)", "Terminal(kubectl)"},
}

// benchTools are verbs with the subcommands and options a project's
// permissions file would name.
var benchTools = map[string][]string{
	"git": {"status", "log", "diff", "add", "commit", "checkout", "switch", "rebase", "stash", "fetch",
		"pull", "tag", "cherry-pick", "show", "blame", "bisect", "clean", "reset", "restore", "mv", "rm",
		"branch", "remote", "worktree", "config", "submodule", "rev-parse", "ls-files", "grep", "shortlog"},
	"pnpm":      {"test", "install", "build", "lint", "run", "exec", "dlx", "add", "remove", "update", "why", "outdated", "typecheck", "dev", "start"},
	"npm":       {"test", "install", "ci", "run", "exec", "audit", "ls", "outdated", "pack", "version", "init"},
	"yarn":      {"test", "install", "build", "lint", "add", "remove", "why", "workspace", "dlx", "run"},
	"cargo":     {"test", "build", "check", "clippy", "fmt", "run", "bench", "doc", "tree", "update", "add"},
	"go":        {"test", "build", "vet", "run", "mod", "generate", "fmt", "list", "env", "work", "tool", "clean"},
	"make":      {"test", "build", "lint", "clean", "all", "install", "check", "docs", "release", "deploy", "fmt"},
	"docker":    {"build", "run", "ps", "images", "compose", "exec", "logs", "pull", "tag", "inspect", "rm", "rmi"},
	"kubectl":   {"get", "describe", "logs", "apply", "delete", "rollout", "port-forward", "top", "config", "exec"},
	"helm":      {"list", "status", "template", "lint", "install", "upgrade", "uninstall", "repo", "dependency"},
	"terraform": {"init", "plan", "validate", "fmt", "apply", "destroy", "output", "state", "show", "workspace"},
	"python":    {"-m", "-c", "manage.py", "setup.py", "-V", "script.py"},
	"pip":       {"install", "list", "show", "freeze", "uninstall", "download", "check"},
	"pytest":    {"-k", "-x", "tests/", "-q", "--maxfail", "-m", "--cov"},
	"node":      {"--version", "scripts/build.js", "-e", "index.js", "--test"},
	"npx":       {"vitest", "tsc", "eslint", "prettier", "jest", "playwright", "next", "prisma", "turbo"},
	"mix":       {"test", "compile", "format", "deps.get", "ecto.migrate", "phx.server", "credo"},
	"bundle":    {"exec", "install", "update", "check"},
	"rails":     {"test", "db:migrate", "console", "routes", "generate", "server"},
	"gradle":    {"test", "build", "check", "assemble", "clean", "dependencies"},
	"mvn":       {"test", "package", "verify", "install", "clean", "compile"},
	"dotnet":    {"test", "build", "run", "restore", "format", "publish"},
	"gh":        {"pr", "issue", "run", "repo", "release", "workflow", "api", "auth"},
	"glab":      {"mr", "issue", "ci", "repo", "release", "api"},
	"aws":       {"s3", "ec2", "lambda", "sts", "iam", "cloudformation", "ecr", "logs"},
	"gcloud":    {"compute", "run", "builds", "auth", "config", "projects", "storage"},
	"brew":      {"install", "list", "info", "update", "upgrade", "uninstall"},
	"apt-get":   {"install", "update", "upgrade", "remove", "purge"},
	"sed":       {"-n", "-i", "-e", "-E", "s/a/b/"},
	"awk":       {"-F", "{print}", "-v"},
	"jq":        {".", "-r", "-c", ".name", "--arg"},
	"rg":        {"-n", "-l", "--files", "-i", "TODO", "-t"},
	"find":      {".", "src", "-name", "-type", "-maxdepth"},
	"tar":       {"-czf", "-xzf", "-tf", "-cf", "-xf"},
	"curl":      {"-s", "-L", "-o", "-X", "-H", "https://", "--fail"},
	"wget":      {"-q", "-O", "https://", "-r"},
	"ssh":       {"-i", "-p", "deploy@", "git@"},
	"rsync":     {"-a", "-avz", "--delete", "-n"},
	"rm":        {"-rf", "-f", "-r", "build", "dist", "node_modules", "tmp"},
	"cp":        {"-r", "-a", "-f", "src", "dist"},
	"mv":        {"-f", "-n", "build", "dist"},
	"mkdir":     {"-p", "build", "dist", "tmp"},
	"chmod":     {"+x", "-R", "755", "644", "777"},
	"chown":     {"-R", "root", "www-data"},
	"tsc":       {"--noEmit", "-p", "--build", "--watch"},
	"eslint":    {".", "--fix", "src", "--ext"},
	"prettier":  {"--check", "--write", "."},
	"vitest":    {"run", "--watch", "--coverage", "bench"},
	"jest":      {"--watch", "--coverage", "-t", "--ci"},
	"cmake":     {"-S", "-B", "--build", "--install"},
	"bazel":     {"test", "build", "run", "query", "clean"},
	"psql":      {"-c", "-f", "-h", "-U", "-d"},
	"sqlite3":   {"db.sqlite", ":memory:", "-cmd"},
	"redis-cli": {"ping", "keys", "flushall", "get", "set"},
	"deno":      {"test", "run", "fmt", "lint", "task", "compile"},
	"bun":       {"test", "run", "install", "build", "x"},
	"uv":        {"run", "sync", "pip", "add", "lock"},
	"poetry":    {"install", "run", "add", "lock", "build", "publish"},
	"ruff":      {"check", "format", "--fix"},
	"mypy":      {".", "src", "--strict"},
	"black":     {".", "--check", "src"},
	"ls":        {"-la", "-l", "-a", "src", "-R"},
	"cat":       {"README.md", "package.json", "go.mod", "-n"},
	"head":      {"-n", "-c", "-20"},
	"tail":      {"-f", "-n", "-100"},
	"grep":      {"-r", "-n", "-i", "-l", "-E"},
	"du":        {"-sh", "-h", "-d"},
	"ps":        {"aux", "-ef"},
	"kill":      {"-9", "-TERM", "-HUP"},
	"lsof":      {"-i", "-p"},
	"env":       {"-i", "NODE_ENV=test", "CI=1"},
	"xargs":     {"-0", "-n", "-I"},
	"openssl":   {"rand", "x509", "req", "s_client"},
	"protoc":    {"--go_out=.", "-I", "--version"},
	"buf":       {"generate", "lint", "breaking", "format"},
	"flyctl":    {"deploy", "status", "logs", "secrets"},
	"vercel":    {"deploy", "--prod", "env", "logs"},
}

// benchArgs are third tokens: options, targets and values.
var benchArgs = []string{
	"--watch", "--coverage", "-v", "--verbose", "--all", "-a", "--force", "-f", "--dry-run", "-n",
	"--filter", "--filter=web", "--filter=api", "--recursive", "-r", "--prod", "--frozen-lockfile",
	"origin", "main", "dev", "HEAD", "HEAD~1", "--oneline", "--short", "--stat", "--cached", "-p",
	"src", "test", "tests", "lib", "cmd", "./...", "web", "api", "core", "ui", "docs",
	"--release", "--locked", "--offline", "-j4", "-race", "-count=1", "--json", "-o", "--output",
	"unit", "e2e", "integration", "lint", "--fix", "--check", "-q", "--quiet", "--no-cache",
	"production", "staging", "default", "kube-system", "-n", "--namespace=prod", "-l", "app=web",
}

var benchWildcard = []string{"test:*", "build:*", "lint*", "--filter=*", "e2e*", "*", "feature/*", "v*", "--tag=*", "db:*"}

// benchLargeLists generates a permissions file of n Terminal rules spread
// over allow (60%), deny (20%) and ask (20%), deterministically. It starts
// with the 20 rules of benchSmall, and leaves out deny and ask rules that
// would change the decision on the benchmarked commands, so that every size
// decides the same thing.
func benchLargeLists(n int) [3][]string {
	var lists [3][]string
	seen := map[string]bool{}
	for k := range benchSmall {
		lists[k] = append(lists[k], benchSmall[k]...)
		for _, p := range benchSmall[k] {
			seen[p] = true
		}
	}
	var guarded [][]string
	for _, cmd := range []string{benchOneSegment, "cd src", "pnpm test --filter x", "tee out.txt", "git status", "ls -la", "echo done"} {
		guarded = append(guarded, strings.Fields(cmd))
	}
	verbs := make([]string, 0, len(benchTools))
	for v := range benchTools {
		verbs = append(verbs, v)
	}
	slices.Sort(verbs) // map order is random: sort for a deterministic file
	rng := rand.New(rand.NewPCG(1, 2))
	total := 20
	for total < n {
		verb := verbs[rng.IntN(len(verbs))]
		subs := benchTools[verb]
		toks := []string{verb}
		switch r := rng.IntN(10); {
		case r == 0: // the verb alone
		case r < 4: // verb subcommand
			toks = append(toks, subs[rng.IntN(len(subs))])
		case r < 6: // verb subcommand wildcard
			toks = append(toks, subs[rng.IntN(len(subs))], benchWildcard[rng.IntN(len(benchWildcard))])
		default: // verb subcommand arg [arg]
			toks = append(toks, subs[rng.IntN(len(subs))], benchArgs[rng.IntN(len(benchArgs))])
			if rng.IntN(3) == 0 {
				toks = append(toks, benchArgs[rng.IntN(len(benchArgs))])
			}
		}
		content := strings.Join(toks, " ")
		src := "Terminal(" + content + ")"
		if seen[src] {
			continue
		}
		k := listAllow
		switch r := rng.IntN(10); {
		case r < 2:
			k = listDeny
		case r < 4:
			k = listAsk
		}
		if k != listAllow {
			p := oraclePattern{toks: oracleTokens(content)}
			hit := false
			for _, g := range guarded {
				hit = hit || oraclePrefixMatch(p, g)
			}
			if hit {
				continue
			}
		}
		seen[src] = true
		lists[k] = append(lists[k], src)
		total++
	}
	return lists
}

// benchRulesOf compiles the small file (n == 20) or a generated file of n
// rules.
func benchRulesOf(b *testing.B, n int) *Rules {
	lists := benchSmall
	if n > 20 {
		lists = benchLargeLists(n)
	}
	r, err := NewRules("permissions.json", lists[listAllow], lists[listDeny], lists[listAsk])
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func benchInput(cmd string, rules *Rules) Input {
	return Input{
		Type: brabo.Terminal, Command: cmd, Role: brabo.Developer, Rules: rules,
		Scope: Scope{Root: "/srv/projects/acme-1234abcd", Mode: brabo.ModeContainer, ID: "acme-1234abcd"},
	}
}

// BenchmarkDecide runs the 20-rule cases before it builds the 10,000-rule
// file, so that the small cases do not pay the garbage collector for a
// large file that is not theirs.
func BenchmarkDecide(b *testing.B) {
	small := benchRulesOf(b, 20)
	for _, n := range []int{20, 10_000} {
		rules := small
		if n > 20 {
			rules = benchRulesOf(b, n)
		}
		for _, c := range []struct{ name, cmd string }{
			{"1-segment", benchOneSegment},
			{"compound-6", benchCompound},
		} {
			want := Decide(benchInput(c.cmd, small))
			if want.Policy != brabo.AutoApprove {
				b.Fatalf("%s: want auto_approve with the small file, got %s (%s)", c.name, want.Policy, want.Reason)
			}
			in := benchInput(c.cmd, rules)
			if got := Decide(in); got.Policy != want.Policy || len(got.Segments) != len(want.Segments) {
				b.Fatalf("%s/%d-rules: got %s (%s), want %s", c.name, n, got.Policy, got.Reason, want.Policy)
			}
			b.Run(fmt.Sprintf("%s/%d-rules", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Decide(in)
				}
			})
		}
	}
	b.Run("bounded", benchDecideBounded)
}

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{20, 10_000} {
		lists := benchSmall
		if n > 20 {
			lists = benchLargeLists(n)
		}
		data, err := json.MarshalIndent(map[string][]string{
			"allow": lists[listAllow], "deny": lists[listDeny], "ask": lists[listAsk],
		}, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Parse("permissions.json", data); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d-rules", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse("permissions.json", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchDecideBounded (BenchmarkDecide/bounded) runs Decide on lines built
// to cost the most: a command substitution nested up to 8,000 levels deep,
// and lines of many short segments up to 64 KiB. Past MaxNesting and
// MaxSegments the analysis stops, so the cost grows with the line's length
// only (parsing it), never with its nesting squared (DESIGN §9, "Bounded
// analysis").
func benchDecideBounded(b *testing.B) {
	small := benchRulesOf(b, 20)
	var cases []struct {
		name string
		cmd  string
	}
	for _, n := range []int{1000, 2000, 4000, 8000} {
		cases = append(cases, struct{ name, cmd string }{fmt.Sprintf("nested-%d", n),
			"echo " + strings.Repeat("$(", n) + "x" + strings.Repeat(")", n)})
	}
	for _, kib := range []int{8, 16, 32, 64} {
		unit := "ls -la src; "
		cmd := strings.Repeat(unit, kib<<10/len(unit))
		cases = append(cases, struct{ name, cmd string }{fmt.Sprintf("line-%dKiB", kib), cmd[:len(cmd)-2]})
	}
	for _, c := range cases {
		in := benchInput(c.cmd, small)
		if d := Decide(in); d.Policy != brabo.RequireApproval || !strings.HasPrefix(d.Reason, "cap: the line") {
			b.Fatalf("%s: %s (%s), want the bound's require_approval", c.name, d.Policy, d.Reason)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.cmd)))
			for b.Loop() {
				Decide(in)
			}
		})
	}
}
