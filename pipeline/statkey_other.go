//go:build !linux

package pipeline

// statKeyOf reports no status where brabo does not read the change time:
// every snapshot then reads every protected file.
func statKeyOf(string) (statKey, bool) { return statKey{}, false }

// statKeyFollow reports no status either: every listing is read.
func statKeyFollow(string) (statKey, bool) { return statKey{}, false }
