package pipeline

import "syscall"

// statKeyOf returns path's status without following a final symlink.
func statKeyOf(path string) (statKey, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return statKey{}, false
	}
	return statKey{dev: uint64(st.Dev), ino: st.Ino, mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// statKeyFollow returns the status of what path names, following
// symlinks (a folder a listing reads through a symlink).
func statKeyFollow(path string) (statKey, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return statKey{}, false
	}
	return statKey{dev: uint64(st.Dev), ino: st.Ino, mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
