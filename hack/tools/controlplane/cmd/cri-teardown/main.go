// Command cri-teardown stops and removes every pod sandbox of a container runtime through the CRI,
// as the kubelet does when it removes a pod: the runtime then kills the containers, runs the CNI
// DEL of each sandbox (veth, IP address, iptables rules) and unmounts its shm and network
// namespace. hack/cluster/cluster.sh runs it on `down`, after the kubelet has stopped and before
// containerd stops, so that a stopped real node leaves nothing running or mounted behind.
// Debian has no crictl, and the module proxy does not serve cri-tools.
//
// Usage: cri-teardown unix:///path/to/containerd.sock
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// callTimeout bounds each CRI call; stopping a sandbox waits for its containers to end.
const callTimeout = 60 * time.Second

func main() {
	if len(os.Args) != 2 || !strings.HasPrefix(os.Args[1], "unix://") {
		fmt.Fprintln(os.Stderr, "usage: cri-teardown unix:///path/to/runtime.sock")
		os.Exit(2)
	}
	if err := teardown(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "cri-teardown: %v\n", err)
		os.Exit(1)
	}
}

func teardown(endpoint string) error {
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(endpoint, "unix://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dialUnix))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	defer conn.Close()
	client := runtimeapi.NewRuntimeServiceClient(conn)

	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	sandboxes, err := client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	cancel()
	if err != nil {
		return fmt.Errorf("listing pod sandboxes: %w", err)
	}
	for _, sandbox := range sandboxes.GetItems() {
		name := sandbox.GetMetadata().GetNamespace() + "/" + sandbox.GetMetadata().GetName()
		if err := call(func(ctx context.Context) error {
			_, err := client.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandbox.GetId()})
			return err
		}); err != nil {
			return fmt.Errorf("stopping the sandbox of pod %s: %w", name, err)
		}
		if err := call(func(ctx context.Context) error {
			_, err := client.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandbox.GetId()})
			return err
		}); err != nil {
			return fmt.Errorf("removing the sandbox of pod %s: %w", name, err)
		}
		fmt.Printf("removed the sandbox of pod %s\n", name)
	}
	return nil
}

func call(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return f(ctx)
}

func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	var dialer net.Dialer
	return dialer.DialContext(ctx, "unix", path)
}
