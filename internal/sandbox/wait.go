package sandbox

import (
	"encoding/json"
	"os"
	"time"

	"github.com/brabo-dev/brabo/internal/procs"
)

// Started is called once the prepared command has started: it closes this
// process's copy of the descriptors handed to the command, and starts
// reading which pid bwrap gave the namespace's first process.
func (p *Prepared) Started() {
	for _, f := range p.ExtraFiles {
		if f != p.userns(f) {
			f.Close()
		}
	}
	if p.info == nil {
		return
	}
	p.pid = make(chan int, 1)
	go func() {
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		err := json.NewDecoder(p.info).Decode(&info)
		p.info.Close()
		if err != nil {
			info.ChildPID = 0
		}
		p.pid <- info.ChildPID
	}()
}

// Wait returns once the sandbox's pid namespace is empty, after the
// command's first process (bwrap) has exited: bwrap's monitor exits as
// soon as the command does, a moment before the kernel has ended the rest
// of the namespace (which it does when the namespace's first process
// dies, before that process is gone). It waits at most limit, and reports
// whether the namespace is known to be empty.
func (p *Prepared) Wait(limit time.Duration) bool {
	if p.pid == nil {
		return false
	}
	var pid int
	select {
	case pid = <-p.pid:
	case <-time.After(limit):
		return false
	}
	if pid <= 0 {
		return false // bwrap never started the namespace
	}
	start := procs.StartTicks(pid)
	deadline := time.Now().Add(limit)
	for {
		st, err := procs.ReadStat(pid)
		if err != nil || st.Gone() || st.Start != start {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// close releases a prepared command that will not start: the
// descriptors it would have handed over (but the Sandbox's user
// namespaces, which it keeps) and the read end of the info pipe.
func (p *Prepared) close() {
	for _, f := range p.ExtraFiles {
		if f != p.userns(f) {
			f.Close()
		}
	}
	if p.info != nil {
		p.info.Close()
	}
}

// userns reports f when it is one of the user namespaces the Sandbox
// keeps for every command (they stay open), nil otherwise.
func (p *Prepared) userns(f *os.File) *os.File {
	for _, u := range p.kept {
		if u == f {
			return f
		}
	}
	return nil
}
