//go:build linux

package privacybeam

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolation is how isolate starts its child: in a user namespace of its
// own (so that no privilege is needed), mapped to this user, and a
// network namespace of its own, which has only a loopback interface; the
// child is killed if this process dies.
func isolation() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}, nil
}

// loopbackOnly brings up the loopback interface of the child's network
// namespace, which starts down, and checks that it is the only one.
func loopbackOnly() error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	if len(ifs) != 1 || ifs[0].Flags&net.FlagLoopback == 0 {
		return fmt.Errorf("not a network namespace of its own: interfaces %v", ifs)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(ifs[0].Name)
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing %s up: %w", ifs[0].Name, err)
	}
	return nil
}
