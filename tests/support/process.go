package support

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ContainerPID finds a container's main process on this machine (the real node's containers run
// here): the process whose cgroup path ends with the container's ID (cgroupfs driver), the lowest
// pid when several do. containerID is the ID as a pod's status gives it, with or without its
// runtime's prefix (containerd://).
func ContainerPID(containerID string) (int, error) {
	if _, id, ok := strings.Cut(containerID, "://"); ok {
		containerID = id
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	found := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/cgroup")
		if err != nil || !strings.Contains(string(data), "/"+containerID+"\n") {
			continue
		}
		if found == 0 || pid < found {
			found = pid
		}
	}
	if found == 0 {
		return 0, fmt.Errorf("no process in the cgroup of container %s", containerID)
	}
	return found, nil
}
