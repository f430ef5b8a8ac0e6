package brabo

// CheckRequest is a terminal command to decide as brabo would, for the web
// check page.
type CheckRequest struct {
	// Command is the command line, as a terminal action would carry it.
	Command string
	// Cwd is where it would run, relative to the project folder.
	Cwd string
	// Agent, when set, is the project's agent (id or name) to decide as:
	// its principal's role, its autonomy rules and its own patterns. ""
	// decides as a developer's agent with no autonomy rule and no patterns.
	Agent string
}

// CheckAnswer is what the pipeline's Check decided: what a proposal of the
// command would be decided now, with nothing run or recorded.
type CheckAnswer struct {
	Decision Decision
	// Held is true when the trusted version decided because the file on
	// disk waits for a maintainer.
	Held bool
	// FileErr is why the permissions brabo decided with are not valid,
	// nil when they are.
	FileErr error
}
