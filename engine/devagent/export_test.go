package devagent

// SetRenewChunk sets how many agents one lease renewal transaction claims,
// and returns what puts it back.
func SetRenewChunk(n int) (restore func()) {
	old := renewChunk
	renewChunk = n
	return func() { renewChunk = old }
}
