package policy

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
	for _, tok := range tokens {
		if tok.wildcard {
			if n.star == nil {
				n.star = map[string]*trie{}
			}
			c := n.star[tok.text]
			if c == nil {
				c = &trie{}
				n.star[tok.text] = c
				if !containsInt(n.starLens, len(tok.text)) {
					n.starLens = append(n.starLens, len(tok.text))
				}
			}
			n = c
			continue
		}
		if n.next == nil {
			n.next = map[string]*trie{}
		}
		c := n.next[tok.text]
		if c == nil {
			c = &trie{}
			n.next[tok.text] = c
		}
		n = c
	}
	n.rules = append(n.rules, rule)
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
