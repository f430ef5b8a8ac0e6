package policy

// A stored decision is bounded, whatever the line (DESIGN §9,
// "Bounded analysis", §10 "A stored decision is bounded (< 64 KiB)"):
// each segment keeps at most a few hundred bytes of text, tokens, rule
// and notes, the segments past the first few keep less, and a decision
// whose JSON would still be too large keeps its first segments and one
// that summarises the rest. The policy and reason never change: only what
// the card shows of the segments.

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

const (
	maxSegmentText = 256
	maxTokenText   = 96
	maxTokenBytes  = 320 // the tokens of one segment together
	maxRuleText    = 256
	maxNoteText    = 160
	maxNotes       = 4
	maxFlags       = 8
	// fullSegments keep the bounds above; later ones keep tailText.
	fullSegments = 16
	tailText     = 48
	// keptSegments is how many a decision still too large keeps, before
	// the one that summarises the rest.
	keptSegments = 8
	maxReason    = 1024
	maxWarnings  = 8
	// MaxDecisionBytes bounds a terminal decision's JSON.
	MaxDecisionBytes = 60 << 10
)

// boundDecision bounds what d shows; command is the line's length (a short
// line with few segments cannot reach the bound, and is not measured).
func boundDecision(d *brabo.Decision, command int) {
	d.Reason = clip(d.Reason, maxReason)
	if len(d.Warnings) > maxWarnings {
		d.Warnings = append(d.Warnings[:maxWarnings:maxWarnings], fmt.Sprintf("… %d more warnings", len(d.Warnings)-maxWarnings))
	}
	for i := range d.Warnings {
		d.Warnings[i] = clip(d.Warnings[i], maxRuleText)
	}
	for i := range d.Segments {
		limit := maxSegmentText
		if i >= fullSegments {
			limit = tailText
		}
		boundSegment(&d.Segments[i], limit)
	}
	if command <= 1024 && len(d.Segments) <= fullSegments {
		return
	}
	if b, err := json.Marshal(d); err == nil && len(b) <= MaxDecisionBytes {
		return
	}
	// Every segment in the short form, then only the first few.
	for i := range d.Segments {
		boundSegment(&d.Segments[i], tailText)
	}
	if b, err := json.Marshal(d); err == nil && len(b) <= MaxDecisionBytes {
		return
	}
	if len(d.Segments) > keptSegments {
		rest := d.Segments[keptSegments:]
		sum := brabo.Segment{Text: fmt.Sprintf("… %d more segments", len(rest)), Verdict: brabo.VerdictAllow,
			Rule: "summarised: a stored decision is bounded; the reason above names what decided"}
		for _, s := range rest {
			if verdictRank(s.Verdict) > verdictRank(sum.Verdict) {
				sum.Verdict = s.Verdict
			}
		}
		d.Segments = append(d.Segments[:keptSegments:keptSegments], sum)
	}
	for i := range d.Segments {
		d.Segments[i].Flags = d.Segments[i].Flags[:min(len(d.Segments[i].Flags), 2)]
		d.Segments[i].Notes = nil
	}
}

// verdictRank orders verdicts by how much they say against the line.
func verdictRank(v brabo.Verdict) int {
	switch v {
	case brabo.VerdictDeny:
		return 5
	case brabo.VerdictOpaque:
		return 4
	case brabo.VerdictAsk:
		return 3
	case brabo.VerdictNoRule:
		return 2
	case brabo.VerdictCd:
		return 1
	}
	return 0
}

// boundSegment clips one segment's text, tokens, rule, notes and flags.
// The token slices are the analysis' own (segment.tokens): a slice that
// needs clipping is copied, never cut in place.
func boundSegment(v *brabo.Segment, text int) {
	v.Text = clip(v.Text, text)
	rule := maxRuleText
	if text < maxSegmentText {
		rule = tailText
	}
	v.Rule = clip(v.Rule, rule)
	toks := v.Tokens
	total, long := 0, false
	tokLimit := min(maxTokenText, text)
	for _, t := range toks {
		total += len(t)
		long = long || len(t) > tokLimit
	}
	if total > maxTokenBytes || long || text < maxSegmentText && len(toks) > 1 {
		budget := maxTokenBytes
		if text < maxSegmentText {
			budget = text
		}
		out := make([]string, 0, 4)
		used := 0
		for i, t := range toks {
			t = clip(t, tokLimit)
			if used+len(t) > budget && i > 0 {
				out = append(out, fmt.Sprintf("… %d more", len(toks)-i))
				break
			}
			out = append(out, t)
			used += len(t)
		}
		v.Tokens = out
	}
	if len(v.Notes) > maxNotes {
		v.Notes = append(v.Notes[:maxNotes:maxNotes], fmt.Sprintf("… %d more", len(v.Notes)-maxNotes))
	}
	for i := range v.Notes {
		v.Notes[i] = clip(v.Notes[i], maxNoteText)
	}
	if len(v.Flags) > maxFlags {
		v.Flags = v.Flags[:maxFlags:maxFlags]
	}
}

// clip cuts s to at most n bytes on a rune boundary, saying how much it
// left out.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}
