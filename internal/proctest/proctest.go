// Package proctest is test support: what a test reads of the machine's
// process table while brabo runs.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
)

// Holding returns the /proc entries ("<pid>/cmdline", "<pid>/environ")
// whose command line or environment holds s: a secret that must travel
// on neither, checked while the process that carries it runs.
func Holding(s string) []string {
	var hits []string
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join("/proc", d.Name(), f)); err == nil && bytes.Contains(b, []byte(s)) {
				hits = append(hits, d.Name()+"/"+f)
			}
		}
	}
	return hits
}
