package policy

import "github.com/brabo-dev/brabo/policy/internal/shell"

// MaxCommandBytes is the largest command line Decide analyses; a longer one
// requires approval.
const MaxCommandBytes = shell.MaxCommandBytes

// MaxNesting and MaxSegments bound the analysis of one line, so that its
// cost and the size of its decision stay linear in the line (DESIGN §9,
// "Bounded analysis"). Past either the line asks a human, unless a segment
// read before the limit is denied.
const (
	MaxNesting  = shell.MaxNesting
	MaxSegments = shell.MaxSegments
)
