package policy

import "strings"

// trie indexes Terminal patterns by their tokens so that matching a segment
// costs a walk along its tokens, whatever the number of rules.
type trie struct {
	next     map[string]*trie
	star     map[string]*trie // token prefixes of tokens that end in a wildcard '*'
	starLens []int            // the distinct lengths of the keys of star
	rules    []int            // patterns that end here, by index in their list
}

func (t *trie) insert(tokens []patternToken, rule int) {
	n := t
	for i, tok := range tokens {
		if tok.wildcard && len(tok.text) > 1 && strings.HasSuffix(tok.text, ":") {
			// x:* matches x alone as well as x:… (DESIGN §9): the rest of
			// the pattern goes under both.
			n.child(strings.TrimSuffix(tok.text, ":"), false).insert(tokens[i+1:], rule)
			n.child(tok.text, true).insert(tokens[i+1:], rule)
			return
		}
		n = n.child(tok.text, tok.wildcard)
	}
	n.rules = append(n.rules, rule)
}

// child returns the node for one pattern token, making it if needed.
func (t *trie) child(text string, wildcard bool) *trie {
	m := &t.next
	if wildcard {
		m = &t.star
	}
	if *m == nil {
		*m = map[string]*trie{}
	}
	c := (*m)[text]
	if c == nil {
		c = &trie{}
		(*m)[text] = c
		if wildcard && !containsInt(t.starLens, len(text)) {
			t.starLens = append(t.starLens, len(text))
		}
	}
	return c
}

// match calls visit for every pattern whose tokens are a prefix of tokens
// (DESIGN §4.2), until visit returns false.
func (t *trie) match(tokens []string, visit func(rule int) bool) bool {
	for _, r := range t.rules {
		if !visit(r) {
			return false
		}
	}
	if len(tokens) == 0 {
		return true
	}
	tok := tokens[0]
	if c := t.next[tok]; c != nil {
		if !c.match(tokens[1:], visit) {
			return false
		}
	}
	for _, l := range t.starLens {
		if l <= len(tok) {
			if c := t.star[tok[:l]]; c != nil {
				if !c.match(tokens[1:], visit) {
					return false
				}
			}
		}
	}
	return true
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
