package brabo

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Money is an amount of the budget's currency in millionths of a unit:
// exact for model prices per token and for cents alike. Its text form is a
// decimal with up to six places ("12.50").
type Money int64

// ParseMoney reads a non-negative decimal with at most six places
// ("12", "12.5", "0.000350"); anything else is an error naming the text.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	bad := func(why string) (Money, error) {
		return 0, fmt.Errorf("amount %q %s (a decimal such as 12.50, at most six places)", s, why)
	}
	if whole == "" || len(frac) > 6 || strings.HasSuffix(s, ".") {
		return bad("is not a decimal")
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return bad("is not a non-negative decimal")
		}
	}
	if len(whole) > 12 {
		return bad("is too large")
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return Money(w*1_000_000 + f), nil
}

// String is the amount as a decimal with two places, more when the
// millionths need them ("12.50", "0.000350").
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	frac := fmt.Sprintf("%06d", v%1_000_000)
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, v/1_000_000, frac)
}

// MarshalText writes the decimal form, so that JSON carries "12.50".
func (m Money) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads the decimal form (ParseMoney).
func (m *Money) UnmarshalText(b []byte) error {
	v, err := ParseMoney(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// UnmarshalJSON reads the decimal as a JSON string ("12.50") or number
// (12.5).
func (m *Money) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return m.UnmarshalText([]byte(s))
}

// Budget is a project's budget, set by its owner: the limit spend actions
// and brabo's own agents' model usage count against, and the prices that
// turn model tokens into money.
type Budget struct {
	ProjectID string `json:"projectId"`
	Limit     Money  `json:"limit"`
	// Spent is what the ledger holds: spends and model usage.
	Spent Money `json:"spent"`
	// InputPrice and OutputPrice are the price of a million input and
	// output tokens of the model brabo's agents run on; zero counts the
	// tokens without cost.
	InputPrice  Money     `json:"inputPricePerMTok"`
	OutputPrice Money     `json:"outputPricePerMTok"`
	UpdatedBy   string    `json:"updatedBy"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Remaining is what the budget still allows (negative when model usage
// went past it).
func (b *Budget) Remaining() Money { return b.Limit - b.Spent }

// Budget entry kinds.
const (
	BudgetSpend = "spend" // an executed spend action
	BudgetModel = "model" // one model call of one of brabo's own agents
)

// BudgetEntry is one line of a project's budget ledger.
type BudgetEntry struct {
	ID        int64  `json:"id"`
	ProjectID string `json:"projectId"`
	Kind      string `json:"kind"`
	Amount    Money  `json:"amount"`
	// ActionID is the spend action; AgentID the agent whose model call it
	// was.
	ActionID     string    `json:"actionId,omitempty"`
	AgentID      string    `json:"agentId,omitempty"`
	InputTokens  int64     `json:"inputTokens,omitempty"`
	OutputTokens int64     `json:"outputTokens,omitempty"`
	Note         string    `json:"note,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ModelCost is what a model call costs at the budget's prices.
func (b *Budget) ModelCost(inputTokens, outputTokens int64) Money {
	return Money((inputTokens*int64(b.InputPrice) + outputTokens*int64(b.OutputPrice)) / 1_000_000)
}

// ModelUsage is one model call of one of brabo's own agents, recorded
// against its project's budget.
type ModelUsage struct {
	ProjectID    string
	AgentID      string
	InputTokens  int64
	OutputTokens int64
}
