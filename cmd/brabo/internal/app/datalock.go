package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// lockName is the lock file in the data folder. One process at a time
// holds an exclusive flock on it for its whole life: two servers on one
// SQLite file would each take the other's running actions for a dead
// process's and fail them.
const lockName = "brabo.lock"

// DataInUse is the refusal when another process holds the data folder:
// the folder and the holder's pid (0 when it has not written it yet).
type DataInUse struct {
	dir string
	pid int // 0 when the holder has not written it yet
}

func (e *DataInUse) Error() string {
	if e.pid == 0 {
		return fmt.Sprintf("data folder %s in use by another brabo process", e.dir)
	}
	return fmt.Sprintf("data folder %s in use by pid %d", e.dir, e.pid)
}

// lockData creates the data folder if needed and takes its lock, waiting
// at most lockWait: a folder another process holds is a *DataInUse. release ends
// the lock (the kernel ends it too when the process dies, however it
// dies, so a crash never leaves the folder locked). The file is opened
// close-on-exec: the commands brabo runs never inherit the lock.
func LockData(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	if err := flockSoon(f); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &DataInUse{dir: dir, pid: lockHolder(f)}
		}
		return nil, fmt.Errorf("locking the data folder %s: %w", dir, err)
	}
	// The holder's pid, for the next one's refusal to name.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// lockWait is how long a start waits for a lock that is held. A holder
// killed a moment ago can still hold it for a few milliseconds: a child it
// was starting (between fork and exec) shares the lock until its exec
// closes the file, and under load that is not instant. A live holder holds
// it for good, and is refused after the wait.
const lockWait = time.Second

// flockSoon takes the exclusive lock, trying again for lockWait while
// another holds it.
func flockSoon(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lockHolder reads the pid the holder wrote, 0 if there is none yet.
func lockHolder(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
