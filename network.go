package brabo

import (
	"encoding/json"
	"strings"
)

// EventNetworkRefused is recorded once per destination a sandboxed
// command's connection to was refused by brabo's egress proxy:
// its payload is a NetworkRefusal with the action's id.
const EventNetworkRefused = "network.refused"

// DetailNetworkRefused is the Result.Detail key holding the refusals of an
// action's run (JSON, a list of NetworkRefusal); DetailNetwork holds their
// sentences, joined by "; ", for the card and the agent.
const (
	DetailNetworkRefused = "networkRefused"
	DetailNetwork        = "network"
)

// NetworkRefusal is one destination brabo's egress proxy refused during a
// run: what the command asked for, the verdict of permissions.json, and the
// sentence and the pattern that make it fixable.
type NetworkRefusal struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Verdict is "none" (no rule), "ask" or "deny".
	Verdict string `json:"verdict"`
	Rule    string `json:"rule,omitempty"`
	// Suggestion is the pattern an always-allow adds ("" when none can
	// help: brabo's own listening address).
	Suggestion string `json:"suggestion,omitempty"`
	// Reason is the sentence: "network: example.com is not allowed
	// (Network(example.com) would allow it)".
	Reason string `json:"reason"`
	// Count is how many connections to it were refused.
	Count int `json:"count"`
}

// SetNetworkRefusals records refusals on the result (Detail), nothing when
// there are none.
func (r *Result) SetNetworkRefusals(refusals []NetworkRefusal) {
	if len(refusals) == 0 {
		return
	}
	b, err := json.Marshal(refusals)
	if err != nil {
		return
	}
	if r.Detail == nil {
		r.Detail = map[string]string{}
	}
	r.Detail[DetailNetworkRefused] = string(b)
	reasons := make([]string, 0, len(refusals))
	for _, n := range refusals {
		reasons = append(reasons, n.Reason)
	}
	r.Detail[DetailNetwork] = strings.Join(reasons, "; ")
}

// NetworkRefusals returns the refusals recorded on the result, nil for
// none (or a nil result).
func (r *Result) NetworkRefusals() []NetworkRefusal {
	if r == nil || r.Detail[DetailNetworkRefused] == "" {
		return nil
	}
	var out []NetworkRefusal
	if json.Unmarshal([]byte(r.Detail[DetailNetworkRefused]), &out) != nil {
		return nil
	}
	return out
}
