package main

import (
	"fmt"
	"syscall"

	"goha/core"
)

// dropPrivileges takes the identity the configuration asks for once every
// socket is bound, as HAProxy 2.6 does and in its order: chroot, then the
// group (dropping the supplementary groups), then the user. HAProxy 2.6
// sets no supplementary groups of the user's, and neither does goha. The
// descriptors already open (listeners, stats sockets, logs) stay usable.
// Go's syscall package changes every thread of the process, not only the
// calling one. The error is HAProxy's alert.
func dropPrivileges(g *core.Global) (warning string, err error) {
	if g.Chroot != "" {
		if syscall.Chroot(g.Chroot) != nil || syscall.Chdir("/") != nil {
			return "", fmt.Errorf("[goha.main()] Cannot chroot(%s).", g.Chroot)
		}
	}
	if g.GID != 0 {
		if n, _ := syscall.Getgroups(); len(n) > 0 && syscall.Setgroups(nil) != nil {
			warning = "[goha.main()] Failed to drop supplementary groups. Using 'gid'/'group' without 'uid'/'user' is generally useless."
		}
		if syscall.Setgid(g.GID) != nil {
			return warning, fmt.Errorf("[goha.main()] Cannot set gid %d.", g.GID)
		}
	}
	if g.UID != 0 && syscall.Setuid(g.UID) != nil {
		return warning, fmt.Errorf("[goha.main()] Cannot set uid %d.", g.UID)
	}
	return warning, nil
}
